package clientconfig

import (
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

// readTOML reads Codex CLI's config.toml: each [mcp_servers.NAME] table
// (or its dotted keys and inline tables), by go-toml's parser, which
// answers each key-value's bytes.
func readTOML(f *File) error {
	f.format = tomlFormat{}
	p := unstable.Parser{}
	p.Reset(f.Data)
	byName := map[string]*Entry{}
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			table = keyOf(e.Key())
		case unstable.ArrayTable:
			table = keyOf(e.Key())
			if len(table) >= 1 && table[0] == "mcp_servers" {
				return fmt.Errorf("[[%s]]: mcp_servers is a table of servers, not an array", strings.Join(table, "."))
			}
		case unstable.KeyValue:
			full := append(append([]string{}, table...), keyOf(e.Key())...)
			if err := tomlValue(f, &p, byName, full, e.Value(), e, true); err != nil {
				return err
			}
		}
	}
	if err := p.Error(); err != nil {
		return fmt.Errorf("not TOML: %v", err)
	}
	return nil
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
func tomlValue(f *File, p *unstable.Parser, byName map[string]*Entry, full []string, v *unstable.Node, kv *unstable.Node, top bool) error {
	if len(full) < 2 || full[0] != "mcp_servers" {
		return nil
	}
	if v.Kind == unstable.InlineTable {
		it := v.Children()
		for it.Next() {
			c := it.Node()
			if err := tomlValue(f, p, byName, append(append([]string{}, full...), keyOf(c.Key())...), c.Value(), c, false); err != nil {
				return err
			}
		}
		return nil
	}
	if len(full) < 3 {
		return fmt.Errorf("mcp_servers.%s must be a table", full[1])
	}
	name, rest := full[1], strings.Join(full[2:], ".")
	e := byName[name]
	if e == nil {
		e = &Entry{Name: name}
		byName[name] = e
		f.Entries = append(f.Entries, e)
	}
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
				e.loc = &location{args: span{-1, -1}, first: -1}
			}
			r := v.Raw
			e.loc.command = span{int(r.Offset), int(r.Offset + r.Length)}
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
				e.loc = &location{command: span{-1, -1}}
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
	case rest == "cwd":
		e.Cwd, err = s()
	case rest == "url":
		e.URL, err = s()
		e.Remote = "url"
	case rest == "bearer_token_env_var":
		e.BearerEnv, err = s()
	case rest == "enabled":
		if v.Kind == unstable.Bool && string(v.Data) == "false" {
			e.Disabled = "enabled = false"
		}
	case rest == "env_http_headers" || strings.HasPrefix(rest, "env_http_headers."):
		if len(e.Unsupported) == 0 || e.Unsupported[len(e.Unsupported)-1] != "env_http_headers" {
			e.Unsupported = append(e.Unsupported, "env_http_headers")
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
