package clientconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
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

// Wrapped reports whether an entry launches crawlcheck run, and if so the
// server's own command line (after "--") and the lockfile it runs with.
func Wrapped(e *Entry) (argv []string, lock string, ok bool) {
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(e.Command, `\`, "/")))
	base = strings.TrimSuffix(base, ".exe")
	if base != "crawlcheck" || len(e.Args) == 0 || e.Args[0] != "run" {
		return nil, "", false
	}
	i := slices.Index(e.Args, "--")
	if i < 0 || i+1 >= len(e.Args) {
		return nil, "", false
	}
	for j := 1; j+1 < i; j++ {
		if e.Args[j] == "--lock" {
			lock = e.Args[j+1]
		}
	}
	return e.Args[i+1:], lock, true
}

// Unwrapped is the entry as the client would run its server without the
// gateway: a wrapped entry's own command line, or the entry itself.
func Unwrapped(e *Entry) *Entry {
	argv, _, ok := Wrapped(e)
	if !ok {
		return e
	}
	u := *e
	u.Command, u.Args = argv[0], argv[1:]
	return &u
}

// Saved is what an install changed in one entry: the bytes of its command
// value before and after, and the text it inserted into args (the
// gateway's words in front of the server's, which stay as written) or,
// NewArgs, the args member it added to an entry that had none. uninstall
// undoes both where the file still holds what install wrote.
type Saved struct {
	Command          string `json:"command"`
	InstalledCommand string `json:"installed_command"`
	Inserted         string `json:"inserted"`
	NewArgs          bool   `json:"new_args"`
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
