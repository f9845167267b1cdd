package clientconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Gateway is how a wrapped entry launches `crawlcheck run` in place of its
// server: Binary run --lock Lock --log Log -- COMMAND ARGS….
type Gateway struct {
	Binary, Lock, Log string
}

// Args are the wrapped entry's args for the original command line.
func (g Gateway) Args(argv []string) []string {
	return append([]string{"run", "--lock", g.Lock, "--log", g.Log, "--"}, argv...)
}

// RemoteArgs are a wrapped remote entry's args: the gateway's words, the
// server's URL (and --sse for the legacy transport's stream) and its
// headers as run's flags (RemoteHeaders), each as written in the config,
// so that the client expands its variables there as it did in the entry.
func (g Gateway) RemoteArgs(url string, sse bool, headers []string) []string {
	args := []string{"run", "--lock", g.Lock, "--log", g.Log, "--url", url}
	if sse {
		args = append(args, "--sse")
	}
	return append(args, headers...)
}

// Wrapped reports whether an entry launches crawlcheck run, and if so the
// server's own command line (after "--"; nil for a remote server, which
// run reaches with --url) and the lockfile it runs with.
func Wrapped(e *Entry) (argv []string, lock string, ok bool) {
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(e.Command, `\`, "/")))
	base = strings.TrimSuffix(base, ".exe")
	if base != "crawlcheck" || len(e.Args) == 0 || e.Args[0] != "run" {
		return nil, "", false
	}
	i := slices.Index(e.Args, "--")
	flags := e.Args
	if i >= 0 {
		flags = e.Args[:i]
	}
	url := ""
	for j := 1; j+1 < len(flags); j++ {
		switch flags[j] {
		case "--lock":
			lock = flags[j+1]
		case "--url":
			url = flags[j+1]
		}
	}
	switch {
	case i >= 0 && i+1 < len(e.Args):
		return e.Args[i+1:], lock, true
	case i < 0 && url != "":
		return nil, lock, true
	}
	return nil, "", false
}

// Unwrapped is the entry as the client would run or reach its server
// without the gateway: a wrapped entry's own command line, or its URL (the
// headers member install left in place is the server's headers), or the
// entry itself.
func Unwrapped(e *Entry) *Entry {
	argv, _, ok := Wrapped(e)
	if !ok {
		return e
	}
	u := *e
	if argv != nil {
		u.Command, u.Args = argv[0], argv[1:]
		return &u
	}
	u.Command, u.Args, u.Remote = "", nil, "url"
	// A member install commented out (a TOML entry's headers) is read
	// back from the flags it became; a headers member install left in
	// place says the same as its flags.
	fromFlags := len(e.Headers) == 0
	for j := 1; j < len(e.Args); j++ {
		next := ""
		if j+1 < len(e.Args) {
			next = e.Args[j+1]
		}
		switch e.Args[j] {
		case "--url":
			u.URL = next
		case "--sse":
			u.SSE = true
		case "--header":
			if name, value, ok := strings.Cut(next, ":"); ok && fromFlags {
				u.Headers = append(u.Headers, KV{strings.TrimSpace(name), strings.Trim(value, " \t")})
			}
		case "--header-env":
			if name, variable, ok := strings.Cut(next, "="); ok && fromFlags {
				u.EnvHeaders = append(u.EnvHeaders, KV{name, variable})
			}
		case "--bearer-env":
			if fromFlags {
				u.BearerEnv = next
			}
		}
	}
	return &u
}

// RemoteHeaders are an entry's headers as run's flags, each value as
// written: one that is a single variable of the client's (${VAR},
// ${env:VAR}, $VAR, by the client) is --header-env Name=VAR, which keeps
// the secret out of the gateway's command line (the client must pass
// that variable on to the servers it starts); any other is --header
// 'Name: value', which the client expands as it expanded the header (the
// value, once expanded, is then on the gateway's command line).
func (c *Client) RemoteHeaders(headers []KV) []string {
	var out []string
	for _, kv := range headers {
		if v, ok := c.soleVariable(kv.Value); ok {
			out = append(out, "--header-env", kv.Key+"="+v)
		} else {
			out = append(out, "--header", kv.Key+": "+kv.Value)
		}
	}
	return out
}

// RemoteFlags are a remote entry's headers as run's flags: its headers
// member's (RemoteHeaders), then Codex's env_http_headers as --header-env
// and its bearer_token_env_var as --bearer-env (the variable holds the
// bare token, which the header's value prefixes with "Bearer ").
func (c *Client) RemoteFlags(e *Entry) []string {
	out := c.RemoteHeaders(e.Headers)
	for _, kv := range e.EnvHeaders {
		out = append(out, "--header-env", kv.Key+"="+kv.Value)
	}
	if e.BearerEnv != "" {
		out = append(out, "--bearer-env", e.BearerEnv)
	}
	return out
}

// envVars are the variables the gateway of a wrapped remote entry reads
// (its --header-env and --bearer-env), once each, in order: what a client
// that passes its servers only the variables named must be told to pass.
func envVars(e *Entry) []string {
	var out []string
	for _, kv := range e.EnvHeaders {
		if !slices.Contains(out, kv.Value) {
			out = append(out, kv.Value)
		}
	}
	if e.BearerEnv != "" && !slices.Contains(out, e.BearerEnv) {
		out = append(out, e.BearerEnv)
	}
	return out
}

var (
	claudeSole = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)
	envSole    = regexp.MustCompile(`^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$`)
	geminiSole = regexp.MustCompile(`^(?:\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*))$`)
)

// soleVariable is the variable a value is, alone, in the client's
// syntax (expand.go's), ok false for any other value.
func (c *Client) soleVariable(v string) (string, bool) {
	var m []string
	switch c.Name {
	case "claude-code":
		m = claudeSole.FindStringSubmatch(v)
	case "vscode", "cursor", "windsurf":
		m = envSole.FindStringSubmatch(v)
	case "gemini":
		m = geminiSole.FindStringSubmatch(v)
	}
	if m == nil {
		return "", false
	}
	return strings.Join(m[1:], ""), true
}

// Saved is what an install changed in one entry: the bytes of its command
// value before and after, and the text it inserted into args (the
// gateway's words in front of the server's, which stay as written) or,
// NewArgs, the args member it added to an entry that had none. uninstall
// undoes both where the file still holds what install wrote.
//
// For a remote entry (Remote), Command is its url member (name and value)
// and InstalledCommand the command and args members written in its place;
// Type, when install changed it, the type member's value before (a client
// reads "stdio" as a server it starts). Every other member (headers, the
// client's own) stays where it was, but for the TOML ones in Off.
type Saved struct {
	Command          string `json:"command"`
	InstalledCommand string `json:"installed_command"`
	Inserted         string `json:"inserted"`
	NewArgs          bool   `json:"new_args"`
	Remote           bool   `json:"remote,omitempty"`
	Type             string `json:"type,omitempty"`
	// Off are the key-values of a remote TOML entry install commented
	// out, as they were written, in file order.
	Off []string `json:"off,omitempty"`
}

// State is the record of an install beside the config
// (crawlcheck/CONFIG.install.json): per server, what Saved says.
type State struct {
	Version int               `json:"version"`
	Config  string            `json:"config"`
	Servers map[string]*Saved `json:"servers"`
}

// edit replaces data[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// apply applies non-overlapping edits.
func apply(data []byte, edits []edit) []byte {
	sort.Slice(edits, func(i, j int) bool { return edits[i].start > edits[j].start })
	out := slices.Clone(data)
	for _, e := range edits {
		out = slices.Concat(out[:e.start:e.start], []byte(e.text), out[e.end:])
	}
	return out
}

// Wrap rewrites the entry named name to launch the gateway, changing the
// bytes of its command and args values and nothing else; it answers the
// new file and what uninstall needs to give the old bytes back.
func (f *File) Wrap(name string, g Gateway) ([]byte, *Saved, error) {
	e := f.entry(name)
	if e == nil {
		return nil, nil, fmt.Errorf("no server %q in %s", name, f.Path)
	}
	if e.URL != "" {
		return f.wrapRemote(e, g)
	}
	if e.loc == nil || e.loc.command.start < 0 {
		return nil, nil, fmt.Errorf("server %q: its command is written in a form crawlcheck does not edit (an inline table, a block scalar, an anchor): edit it by hand", name)
	}
	loc := e.loc
	argv := append([]string{e.Command}, e.Args...)
	s := &Saved{Command: string(f.Data[loc.command.start:loc.command.end]), InstalledCommand: f.format.str(g.Binary)}
	edits := []edit{{loc.command.start, loc.command.end, s.InstalledCommand}}
	switch {
	case loc.args.start < 0:
		s.NewArgs = true
		s.Inserted = f.format.newArgs(loc, f.format.list(g.Args(argv)))
		edits = append(edits, edit{loc.insertAt, loc.insertAt, s.Inserted})
	case loc.first < 0:
		return nil, nil, fmt.Errorf("server %q: its args are written in a form crawlcheck does not edit: edit it by hand", name)
	default:
		// The gateway's words and the server's command go in front of
		// the server's args, which stay as written.
		s.Inserted = prefix(loc, g.Args([]string{e.Command}))
		edits = append(edits, edit{loc.first, loc.first, s.Inserted})
	}
	return apply(f.Data, edits), s, nil
}

// Unwrap gives the entry named name the bytes it had before Wrap, when the
// file still holds what Wrap wrote; an entry edited since is refused.
func (f *File) Unwrap(name string, s *Saved) ([]byte, error) {
	e := f.entry(name)
	if e == nil {
		return nil, fmt.Errorf("no server %q in %s", name, f.Path)
	}
	loc := e.loc
	if loc == nil || loc.command.start < 0 || loc.args.start < 0 {
		return nil, fmt.Errorf("server %q is not as install left it", name)
	}
	if s.Remote {
		return f.unwrapRemote(e, s)
	}
	d := f.Data
	if string(d[loc.command.start:loc.command.end]) != s.InstalledCommand {
		return nil, fmt.Errorf("server %q: its command was edited since install", name)
	}
	edits := []edit{{loc.command.start, loc.command.end, s.Command}}
	start := loc.first
	if s.NewArgs {
		start = loc.args.end - len(s.Inserted)
	}
	if start < loc.command.end && s.NewArgs || start < 0 || start+len(s.Inserted) > len(d) || string(d[start:start+len(s.Inserted)]) != s.Inserted {
		return nil, fmt.Errorf("server %q: its args were edited since install", name)
	}
	edits = append(edits, edit{start, start + len(s.Inserted), ""})
	return apply(d, edits), nil
}

// offMark is what install writes in front of a key-value of a remote
// TOML entry that Codex would refuse beside a command: the line becomes a
// comment, which uninstall finds again by it.
const offMark = "# crawlcheck: "

// wrapRemote rewrites a remote entry to launch the gateway with --url:
// its url member becomes the command and args members, in the same place,
// and a type member says the client starts it. Its headers stay as they
// are where the client passes over them in an entry it starts (JSON's
// headers, Continue's requestOptions); Codex refuses an entry with a
// command and those members, so a TOML entry's are commented out (offMark)
// and its env_vars name the variables the gateway reads, which Codex
// passes on to a server it starts only when named. uninstall gives the
// bytes back.
func (f *File) wrapRemote(e *Entry, g Gateway) ([]byte, *Saved, error) {
	loc := e.loc
	args := g.RemoteArgs(e.URL, e.SSE, f.Client.RemoteFlags(e))
	if loc == nil || loc.remote.start < 0 || loc.hand {
		return nil, nil, fmt.Errorf("server %q: its url or headers are written in a form crawlcheck does not edit (a sub-table, a dotted key, an inline table, a value over several lines): make it `command = %s`, `args = %s` by hand", e.Name, g.Binary, f.format.list(args))
	}
	if len(e.Unsupported) > 0 {
		return nil, nil, fmt.Errorf("server %q: it has members the gateway cannot be given (%s): edit it by hand", e.Name, strings.Join(e.Unsupported, ", "))
	}
	var vars []string
	if f.Client.Format == "toml" {
		vars = envVars(e)
	}
	s := &Saved{Remote: true, Command: string(f.Data[loc.remote.start:loc.remote.end]),
		InstalledCommand: f.format.members(loc, g.Binary, args, vars)}
	edits := []edit{{loc.remote.start, loc.remote.end, s.InstalledCommand}}
	if loc.typ.start >= 0 && string(f.Data[loc.typ.start:loc.typ.end]) != f.format.stdio() {
		s.Type = string(f.Data[loc.typ.start:loc.typ.end])
		edits = append(edits, edit{loc.typ.start, loc.typ.end, f.format.stdio()})
	}
	for _, o := range loc.off {
		s.Off = append(s.Off, string(f.Data[o.start:o.end]))
		edits = append(edits, edit{o.start, o.start, offMark})
	}
	return apply(f.Data, edits), s, nil
}

// unwrapRemote gives a remote entry wrapRemote rewrote its bytes back,
// when the file still holds what it wrote.
func (f *File) unwrapRemote(e *Entry, s *Saved) ([]byte, error) {
	loc, d := e.loc, f.Data
	start, end := loc.cmdKey, loc.args.end
	if start < 0 || end < start || string(d[start:end]) != s.InstalledCommand {
		return nil, fmt.Errorf("server %q: its command or args were edited since install", e.Name)
	}
	edits := []edit{{start, end, s.Command}}
	if s.Type != "" {
		if loc.typ.start < 0 || string(d[loc.typ.start:loc.typ.end]) != f.format.stdio() {
			return nil, fmt.Errorf("server %q: its type was edited since install", e.Name)
		}
		edits = append(edits, edit{loc.typ.start, loc.typ.end, s.Type})
	}
	// Each commented key-value is looked for in the entry's own table,
	// once: a line two entries share is given back to the one it was in.
	from := loc.region.start
	for _, text := range s.Off {
		line := offMark + text
		i := strings.Index(string(d[from:loc.region.end]), line)
		if loc.region.end <= loc.region.start || i < 0 {
			return nil, fmt.Errorf("server %q: the line %s install commented out was edited since", e.Name, strings.SplitN(text, "=", 2)[0])
		}
		edits = append(edits, edit{from + i, from + i + len(offMark), ""})
		from += i + len(line)
	}
	return apply(d, edits), nil
}

func (f *File) entry(name string) *Entry {
	for _, e := range f.Entries {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// StemOf is a file name stem for a server's name, which is hostile text:
// bytes other than a-z, 0-9, "-", "_" and an inner "." are written %XX
// (upper case letters too, so that two names differing only in case do
// not meet on a case-insensitive disk), a Windows device name (con, nul,
// com1, …) is escaped, and a long name keeps its first bytes and a hash
// of the whole. Two names never share a stem.
func StemOf(name string) string {
	if name == "" {
		return "%"
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		plain := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' && i > 0 && i < len(name)-1
		if plain {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	s := b.String()
	dev := s
	if i := strings.IndexByte(dev, '.'); i >= 0 {
		dev = dev[:i]
	}
	switch dev {
	case "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8", "com9",
		"lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9":
		s = fmt.Sprintf("%%%02X", s[0]) + s[1:]
	}
	if len(s) > 96 {
		cut := 64
		for cut > 0 && strings.LastIndexByte(s[:cut], '%') > cut-3 {
			cut--
		}
		sum := sha256.Sum256([]byte(name))
		s = s[:cut] + "~" + hex.EncodeToString(sum[:12])
	}
	return s
}

// Paths are where an install keeps a server's files beside the config.
func Paths(config, server string) (lock, log string) {
	dir := filepath.Join(filepath.Dir(config), "crawlcheck")
	stem := StemOf(server)
	return filepath.Join(dir, stem+".lock.json"), filepath.Join(dir, stem+".log.jsonl")
}

// StatePath is the install record of a config.
func StatePath(config string) string {
	return filepath.Join(filepath.Dir(config), "crawlcheck", StemOf(filepath.Base(config))+".install.json")
}

// ReadState parses an install record.
func ReadState(data []byte) (*State, error) {
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("install record: %v", err)
	}
	if s.Version != 1 || s.Servers == nil {
		return nil, errors.New("install record: not version 1")
	}
	return &s, nil
}
