package clientconfig

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlFormat writes TOML literals: a JSON string is a TOML basic string
// (the same escapes, \uXXXX included), a JSON array of them a TOML array.
type tomlFormat struct{ jsonFormat }

func (tomlFormat) newArgs(loc *location, list string) string {
	return loc.nl + loc.indent + "args = " + list
}

// members are key-values, one a line, args last (where uninstall reads
// the end of what install wrote).
func (f tomlFormat) members(loc *location, command string, args, envVars []string) string {
	out := "command = " + f.str(command) + loc.nl + loc.indent
	if len(envVars) > 0 {
		out += "env_vars = " + f.list(envVars) + loc.nl + loc.indent
	}
	return out + "args = " + f.list(args)
}

// readTOML reads Codex CLI's config.toml: each [mcp_servers.NAME] table
// (or its dotted keys and inline tables), by go-toml's parser, which
// answers each key-value's bytes.
func readTOML(f *File) error {
	f.format = tomlFormat{}
	p := unstable.Parser{}
	p.Reset(f.Data)
	byName := map[string]*Entry{}
	var table []string
	// regions are the [mcp_servers.NAME] tables' bytes: from the header's
	// key to the next header's.
	regions := map[string]span{}
	open := ""
	for p.NextExpression() {
		e := p.Expression()
		if e.Kind == unstable.Table || e.Kind == unstable.ArrayTable {
			at := headerOffset(e)
			if open != "" {
				regions[open] = span{regions[open].start, at}
				open = ""
			}
			if t := keyOf(e.Key()); e.Kind == unstable.Table && len(t) == 2 && t[0] == "mcp_servers" {
				open = t[1]
				regions[open] = span{at, len(f.Data)}
			}
		}
		switch e.Kind {
		case unstable.Table:
			table = keyOf(e.Key())
		case unstable.ArrayTable:
			table = keyOf(e.Key())
			if len(table) >= 1 && table[0] == "mcp_servers" {
				return fmt.Errorf("[[%s]]: mcp_servers is a table of servers, not an array", strings.Join(table, "."))
			}
		case unstable.KeyValue:
			key := keyOf(e.Key())
			full := append(append([]string{}, table...), key...)
			// direct: a key-value of the server's own table, by a plain key.
			direct := len(table) == 2 && len(key) == 1
			if err := tomlValue(f, &p, byName, full, e.Value(), e, true, direct); err != nil {
				return err
			}
		}
	}
	if err := p.Error(); err != nil {
		return fmt.Errorf("not TOML: %v", err)
	}
	for _, e := range f.Entries {
		if e.loc != nil {
			e.loc.region = regions[e.Name]
		}
	}
	return nil
}

// entryOf is the entry named name, made on its first member.
func entryOf(f *File, byName map[string]*Entry, name string) *Entry {
	e := byName[name]
	if e == nil {
		e = &Entry{Name: name}
		byName[name] = e
		f.Entries = append(f.Entries, e)
	}
	return e
}

// headerOffset is where a table header's key begins.
func headerOffset(e *unstable.Node) int {
	it := e.Key()
	if it.Next() {
		return int(it.Node().Raw.Offset)
	}
	return 0
}

// remoteLoc is the location of a remote entry, made on its first member
// that Wrap changes.
func remoteLoc(f *File, e *Entry, kv *unstable.Node) *location {
	if e.loc == nil {
		e.loc = &location{command: span{-1, -1}, args: span{-1, -1}, first: -1, cmdKey: -1, remote: span{-1, -1}, typ: span{-1, -1},
			indent: lineIndent(f.Data, int(kv.Raw.Offset)), nl: newline(f.Data)}
	}
	return e.loc
}

// offMember notes a key-value install comments out of a remote entry: a
// direct one-line key-value, or else a form Wrap refuses (hand).
func offMember(f *File, e *Entry, kv *unstable.Node, direct bool) {
	loc := remoteLoc(f, e, kv)
	r := kv.Raw
	if !direct || r.Length == 0 || bytes.ContainsAny(f.Data[r.Offset:r.Offset+r.Length], "\r\n") {
		loc.hand = true
		return
	}
	loc.off = append(loc.off, span{int(r.Offset), int(r.Offset + r.Length)})
}

func keyOf(it unstable.Iterator) []string {
	var out []string
	for it.Next() {
		out = append(out, string(it.Node().Data))
	}
	return out
}

// tomlValue records the value at key full of a server under mcp_servers;
// top tells a top-level key-value (whose bytes the parser answers) from a
// member of an inline table.
func tomlValue(f *File, p *unstable.Parser, byName map[string]*Entry, full []string, v *unstable.Node, kv *unstable.Node, top, direct bool) error {
	if len(full) < 2 || full[0] != "mcp_servers" {
		return nil
	}
	if v.Kind == unstable.InlineTable {
		it := v.Children()
		for it.Next() {
			c := it.Node()
			if err := tomlValue(f, p, byName, append(append([]string{}, full...), keyOf(c.Key())...), c.Value(), c, false, false); err != nil {
				return err
			}
		}
		if len(full) == 3 && (full[2] == "http_headers" || full[2] == "env_http_headers") {
			offMember(f, entryOf(f, byName, full[1]), kv, top && direct)
		}
		return nil
	}
	if len(full) < 3 {
		return fmt.Errorf("mcp_servers.%s must be a table", full[1])
	}
	name, rest := full[1], strings.Join(full[2:], ".")
	e := entryOf(f, byName, name)
	path := "mcp_servers." + name + "." + rest
	s := func() (string, error) {
		if v.Kind != unstable.String {
			return "", fmt.Errorf("%s must be a string", path)
		}
		return string(v.Data), nil
	}
	var err error
	switch {
	case rest == "command":
		if e.Command, err = s(); err != nil {
			return err
		}
		if top {
			if e.loc == nil {
				e.loc = &location{args: span{-1, -1}, first: -1, remote: span{-1, -1}, typ: span{-1, -1}}
			}
			r := v.Raw
			e.loc.command = span{int(r.Offset), int(r.Offset + r.Length)}
			e.loc.cmdKey = int(kv.Raw.Offset)
			e.loc.insertAt = lineEnd(f.Data, int(kv.Raw.Offset+kv.Raw.Length))
			e.loc.indent = lineIndent(f.Data, int(kv.Raw.Offset))
			e.loc.nl = newline(f.Data)
		}
	case rest == "args":
		if v.Kind != unstable.Array {
			return fmt.Errorf("%s must be an array of strings", path)
		}
		e.Args = []string{}
		it := v.Children()
		for it.Next() {
			c := it.Node()
			if c.Kind == unstable.Comment {
				continue
			}
			if c.Kind != unstable.String {
				return fmt.Errorf("%s must be an array of strings", path)
			}
			e.Args = append(e.Args, string(c.Data))
		}
		if top {
			if e.loc == nil {
				e.loc = &location{command: span{-1, -1}, cmdKey: -1, remote: span{-1, -1}, typ: span{-1, -1}}
			}
			raw := p.Raw(kv.Raw)
			e.loc.args = span{int(kv.Raw.Offset) + valueStart(raw), int(kv.Raw.Offset + kv.Raw.Length)}
			e.loc.first, e.loc.empty = -1, len(e.Args) == 0
			if s := e.loc.args.start; s < len(f.Data) && f.Data[s] == '[' {
				e.loc.first = s + 1
			}
		}
	case strings.HasPrefix(rest, "env."):
		val, err := s()
		if err != nil {
			return err
		}
		e.Env = append(e.Env, KV{rest[len("env."):], val})
	case strings.HasPrefix(rest, "http_headers."):
		val, err := s()
		if err != nil {
			return err
		}
		e.Headers = append(e.Headers, KV{rest[len("http_headers."):], val})
		if top {
			offMember(f, e, kv, false) // a sub-table's or a dotted key's
		}
	case rest == "cwd":
		e.Cwd, err = s()
	case rest == "url":
		e.URL, err = s()
		e.Remote = "url"
		if top && direct {
			remoteLoc(f, e, kv).remote = span{int(kv.Raw.Offset), int(kv.Raw.Offset + kv.Raw.Length)}
		}
	case rest == "bearer_token_env_var":
		e.BearerEnv, err = s()
		offMember(f, e, kv, top && direct)
	case rest == "oauth_resource":
		// The gateway is its own OAuth client (crawlcheck login).
		offMember(f, e, kv, top && direct)
	case rest == "enabled":
		if v.Kind == unstable.Bool && string(v.Data) == "false" {
			e.Disabled = "enabled = false"
		}
	case strings.HasPrefix(rest, "env_http_headers."):
		val, err := s()
		if err != nil {
			return err
		}
		e.EnvHeaders = append(e.EnvHeaders, KV{rest[len("env_http_headers."):], val})
		if top {
			offMember(f, e, kv, false)
		}
	}
	return err
}

// valueStart is the offset in a key-value's bytes where its value starts:
// after the first "=" outside a quoted key, and the blanks after it.
func valueStart(kv []byte) int {
	var quote byte
	for i := 0; i < len(kv); i++ {
		c := kv[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '=':
			i++
			for i < len(kv) && (kv[i] == ' ' || kv[i] == '\t') {
				i++
			}
			return i
		}
	}
	return len(kv)
}
