package preflight

import (
	"regexp"
	"strings"
)

// StdioEndpoint is the endpoint string of a stdio server: "stdio:" followed
// by the command line, args joined by single spaces, each quoted exactly as
// Python's shlex.quote does (left bare if it is non-empty and made only of
// ASCII letters, digits and @%+=:,./-_; otherwise wrapped in single quotes,
// with each ' written as '"'"'). Args are taken as given (args[0] as typed,
// not resolved on PATH), so that the same configuration names the same
// server on every machine and in every language binding.
func StdioEndpoint(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	return "stdio:" + strings.Join(quoted, " ")
}

var shellUnsafe = regexp.MustCompile(`[^A-Za-z0-9_@%+=:,./-]`)

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if !shellUnsafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}
