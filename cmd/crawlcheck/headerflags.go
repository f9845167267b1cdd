package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/crawlcheck/verifier/internal/boundedread"
)

// headerFlags are --header 'Name: value', --header-env Name=VAR and
// --header-file FILE: the credentials (an Authorization, an API key) an
// HTTP server behind a login is sent with every request. Each may be
// repeated. A value is a secret: no error here names one (a malformed
// flag is named by its place, a file's line by its number), and none
// reaches a record, a log or a lockfile (the transport alone holds them).
// --header-env, --bearer-env and --header-file keep the secret out of the
// command line, where other users of the machine can read it (ps).
// --bearer-env is for a variable that holds the bare token (Codex's
// bearer_token_env_var): the header's value is "Bearer " and the token,
// which --header-env, sending the variable's value as it is, cannot say.
type headerFlags struct{ lines, env, bearer, files stringList }

func (h *headerFlags) register(fs *flag.FlagSet) {
	fs.Var(&h.lines, "header", "send the header `'Name: value'` to the HTTP server (repeatable; visible to ps: prefer --header-env or --header-file for a secret)")
	fs.Var(&h.env, "header-env", "send the header Name with the value of the environment variable VAR: `Name=VAR` (repeatable)")
	fs.Var(&h.bearer, "bearer-env", "send 'Authorization: Bearer TOKEN', TOKEN the value of the environment variable `VAR` (a variable holding the bare token, as Codex's bearer_token_env_var)")
	fs.Var(&h.files, "header-file", "send the headers of `FILE`, one 'Name: value' a line (blank lines and # comments skipped; repeatable)")
}

// given reports whether any header flag was given.
func (h *headerFlags) given() bool { return len(h.lines)+len(h.env)+len(h.bearer)+len(h.files) > 0 }

// maxHeaderFile bounds a --header-file read.
const maxHeaderFile = 64 << 10

// resolve reads the flags into "Name=value" (target.headers' form).
func (h *headerFlags) resolve() ([]string, error) {
	var out []string
	for i, line := range h.lines {
		kv, err := headerLine(line)
		if err != nil {
			return nil, usagef("--header %d: %v", i+1, err)
		}
		out = append(out, kv)
	}
	for _, spec := range h.env {
		name, variable, ok := strings.Cut(spec, "=")
		if !ok || !validHeaderName(name) || variable == "" {
			return nil, usagef("--header-env %q: want Name=VAR, Name a header name and VAR an environment variable", spec)
		}
		value, set := os.LookupEnv(variable)
		if !set || value == "" {
			return nil, usagef("--header-env %s=%s: the environment variable %s is not set", name, variable, variable)
		}
		if !validHeaderValue(value) {
			return nil, usagef("--header-env %s=%s: the value of %s holds a control character", name, variable, variable)
		}
		out = append(out, name+"="+value)
	}
	for _, variable := range h.bearer {
		value, set := os.LookupEnv(variable)
		switch {
		case variable == "" || strings.Contains(variable, "="):
			return nil, usagef("--bearer-env %q: want VAR, an environment variable holding the token", variable)
		case !set || value == "":
			return nil, usagef("--bearer-env %s: the environment variable %s is not set", variable, variable)
		case !validHeaderValue(value):
			return nil, usagef("--bearer-env %s: the value of %s holds a control character", variable, variable)
		}
		out = append(out, "Authorization=Bearer "+value)
	}
	for _, path := range h.files {
		data, err := boundedread.ReadFile(path, maxHeaderFile, inputs.timeout)
		if err != nil {
			// The error names the file and the bound, never its content.
			return nil, fmt.Errorf("reading the header file: %w", err)
		}
		for n, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSuffix(line, "\r")
			if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			kv, err := headerLine(line)
			if err != nil {
				return nil, fmt.Errorf("%s line %d: %v", path, n+1, err)
			}
			out = append(out, kv)
		}
	}
	return out, nil
}

// headerLine reads "Name: value" into "Name=value". Its error never holds
// the value.
func headerLine(line string) (string, error) {
	name, value, ok := strings.Cut(line, ":")
	if !ok {
		return "", fmt.Errorf("want 'Name: value'")
	}
	name, value = strings.TrimSpace(name), strings.Trim(value, " \t")
	switch {
	case !validHeaderName(name):
		return "", fmt.Errorf("want 'Name: value', Name a header name (letters, digits and !#$%%&'*+-.^_`|~)")
	case value == "":
		return "", fmt.Errorf("header %s has no value", name)
	case !validHeaderValue(value):
		return "", fmt.Errorf("the value of header %s holds a control character", name)
	}
	return name + "=" + value, nil
}

// validHeaderName: a token (RFC 9110, section 5.6.2).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// validHeaderValue: no control character but tab (RFC 9110, section 5.5),
// so that no value can end the header and start another.
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
