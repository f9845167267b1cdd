package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

// jsonFormat writes JSON literals. A string is written by encoding/json
// without HTML escaping, so a path reads as it is.
type jsonFormat struct{}

func (jsonFormat) str(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a Go string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

func (f jsonFormat) list(ss []string) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = f.str(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (jsonFormat) newArgs(_ *location, list string) string { return `, "args": ` + list }

func (f jsonFormat) members(_ *location, command string, args, _ []string) string {
	return f.str("command") + ": " + f.str(command) + ", " + f.str("args") + ": " + f.list(args)
}

func (jsonFormat) stdio() string { return `"stdio"` }

// readJSON reads the JSON family: strict JSON and JSON with comments, by
// hujson, whose tree keeps every byte's offset.
func readJSON(f *File) error {
	f.format = jsonFormat{}
	root, err := hujson.Parse(f.Data)
	if err != nil {
		return fmt.Errorf("not JSON%s: %v", map[bool]string{true: " (with comments)", false: ""}[f.Client.Format == "jsonc"], err)
	}
	if f.Client.Format == "json" && !root.IsStandard() {
		return fmt.Errorf("has comments or trailing commas, which %s does not read (it reads strict JSON)", f.Client.Title)
	}
	if _, ok := root.Value.(*hujson.Object); !ok {
		return errors.New("is not a JSON object")
	}
	var excluded map[string]bool
	key := "mcpServers"
	switch f.Client.Name {
	case "vscode":
		key = "servers"
		if err := readInputs(f, member(&root, "inputs")); err != nil {
			return err
		}
	case "zed":
		key = "context_servers"
	case "mcp-json":
		if member(&root, key) == nil {
			key = "servers"
		}
	case "gemini":
		excluded = map[string]bool{}
		for _, list := range []*hujson.Value{member(member(&root, "mcp"), "excluded"), member(&root, "excludeMCPServers")} {
			names, err := strList(list, "mcp.excluded")
			if err != nil {
				return err
			}
			for _, n := range names {
				excluded[n] = true
			}
		}
	}
	if err := readServers(f, member(&root, key), key, "", excluded); err != nil {
		return err
	}
	if f.Client.Name == "claude-code" {
		// ~/.claude.json keeps each project's servers under its path.
		if projects, ok := object(member(&root, "projects")); ok {
			for _, p := range projects.Members {
				path := p.Name.Value.(hujson.Literal).String()
				if err := readServers(f, member(&p.Value, "mcpServers"), "projects."+path+".mcpServers", path, nil); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// readInputs reads VS Code's inputs: the values it prompts for.
func readInputs(f *File, v *hujson.Value) error {
	if v == nil {
		return nil
	}
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		return errors.New("inputs must be an array")
	}
	f.Inputs = map[string]string{}
	for _, e := range arr.Elements {
		id, _ := str(member(&e, "id"))
		desc, _ := str(member(&e, "description"))
		f.Inputs[id] = desc
	}
	return nil
}

// readServers reads the servers object at key; project names the Claude
// Code project they belong to; excluded are Gemini's excluded names.
func readServers(f *File, v *hujson.Value, key, project string, excluded map[string]bool) error {
	if v == nil {
		return nil
	}
	obj, ok := object(v)
	if !ok {
		return fmt.Errorf("%s must be an object of servers", key)
	}
	for _, m := range obj.Members {
		name := m.Name.Value.(hujson.Literal).String()
		e, err := readJSONEntry(f, &m.Value, key+"."+name)
		if err != nil {
			return err
		}
		e.Name = name
		if project != "" {
			e.Name = project + "#" + name
		}
		if excluded[name] {
			e.Disabled = "listed in mcp.excluded"
		}
		f.Entries = append(f.Entries, e)
	}
	return nil
}

// readJSONEntry reads one server object at path.
func readJSONEntry(f *File, v *hujson.Value, path string) (*Entry, error) {
	if _, ok := object(v); !ok {
		return nil, fmt.Errorf("%s must be an object", path)
	}
	e := &Entry{}
	// Zed's older entries nest the process: "command": {"path", "args", "env"}.
	proc, cmdKey := v, "command"
	if c := member(v, "command"); c != nil {
		if _, ok := object(c); ok {
			proc, cmdKey = c, "path"
		}
	}
	var err error
	strs := func(v *hujson.Value, name string) string {
		if err != nil || v == nil {
			return ""
		}
		s, ok := str(v)
		if !ok {
			err = fmt.Errorf("%s.%s must be a string", path, name)
		}
		return s
	}
	cmd := member(proc, cmdKey)
	e.Command = strs(cmd, cmdKey)
	e.Cwd = strs(member(v, "cwd"), "cwd")
	typ := strs(member(v, "type"), "type")
	if err != nil {
		return nil, err
	}
	args := member(proc, "args")
	if e.Args, err = strList(args, path+".args"); err != nil {
		return nil, err
	}
	if e.Env, err = strMap(member(proc, "env"), path+".env"); err != nil {
		return nil, err
	}
	if e.Headers, err = strMap(member(v, "headers"), path+".headers"); err != nil {
		return nil, err
	}
	remotes := []string{"url"}
	switch f.Client.Name {
	case "windsurf":
		remotes = []string{"serverUrl", "url"}
	case "gemini":
		remotes = []string{"httpUrl", "url"}
	}
	for _, r := range remotes {
		if u := strs(member(v, r), r); u != "" && e.URL == "" {
			e.URL, e.Remote = u, r
		}
	}
	if err != nil {
		return nil, err
	}
	// Gemini's url is the legacy SSE transport's stream (httpUrl is
	// streamable HTTP) unless a type says otherwise; elsewhere type "sse" does.
	e.SSE = typ == "sse" || (f.Client.Name == "gemini" && e.Remote == "url" && typ == "")
	switch f.Client.Name {
	case "windsurf", "cline":
		if b := member(v, "disabled"); b != nil && bytes.Equal(literal(b), []byte("true")) {
			e.Disabled = "disabled: true"
		}
	case "zed":
		if b := member(v, "enabled"); b != nil && bytes.Equal(literal(b), []byte("false")) {
			e.Disabled = "enabled: false"
		}
	}
	for _, u := range []string{"envFile"} {
		if member(v, u) != nil {
			e.Unsupported = append(e.Unsupported, u)
		}
	}
	if src, _ := str(member(v, "source")); f.Client.Name == "zed" && src == "extension" && e.Command == "" && e.URL == "" {
		e.Unsupported = append(e.Unsupported, `source: "extension"`)
	}
	if cmd == nil && e.URL != "" && proc == v {
		e.loc = &location{command: span{-1, -1}, args: span{-1, -1}, first: -1, cmdKey: -1, remote: memberSpan(v, e.Remote), typ: valueSpan(member(v, "type"))}
	}
	if cmd != nil {
		e.loc = &location{command: span{cmd.StartOffset, cmd.EndOffset}, args: span{-1, -1}, first: -1, insertAt: cmd.EndOffset,
			cmdKey: memberSpan(proc, cmdKey).start, remote: span{-1, -1}, typ: valueSpan(member(v, "type"))}
		if args != nil {
			e.loc.args = span{args.StartOffset, args.EndOffset}
			if arr, ok := args.Value.(*hujson.Array); ok {
				e.loc.first, e.loc.empty = args.StartOffset+1, len(arr.Elements) == 0
			}
		}
	}
	return e, nil
}

// member is the value of obj's member name, nil when obj is not an object
// or has none (the last one, as JSON.parse keeps it).
func member(obj *hujson.Value, name string) *hujson.Value {
	o, ok := object(obj)
	if !ok {
		return nil
	}
	var found *hujson.Value
	for i := range o.Members {
		if o.Members[i].Name.Value.(hujson.Literal).String() == name {
			found = &o.Members[i].Value
		}
	}
	return found
}

// memberSpan is obj's (last) member name, from its name to the end of its
// value; start -1 when there is none.
func memberSpan(obj *hujson.Value, name string) span {
	sp := span{-1, -1}
	if o, ok := object(obj); ok {
		for i := range o.Members {
			if o.Members[i].Name.Value.(hujson.Literal).String() == name {
				sp = span{o.Members[i].Name.StartOffset, o.Members[i].Value.EndOffset}
			}
		}
	}
	return sp
}

// valueSpan is v's bytes, start -1 for none.
func valueSpan(v *hujson.Value) span {
	if v == nil {
		return span{-1, -1}
	}
	return span{v.StartOffset, v.EndOffset}
}

func object(v *hujson.Value) (*hujson.Object, bool) {
	if v == nil {
		return nil, false
	}
	o, ok := v.Value.(*hujson.Object)
	return o, ok
}

// literal is v's literal bytes, nil for an object or array.
func literal(v *hujson.Value) []byte {
	l, _ := v.Value.(hujson.Literal)
	return []byte(l)
}

// str is v's string, ok false when it is not a string.
func str(v *hujson.Value) (string, bool) {
	if v == nil {
		return "", false
	}
	l, ok := v.Value.(hujson.Literal)
	if !ok || l.Kind() != '"' {
		return "", false
	}
	return l.String(), true
}

// strList reads an array of strings (nil, null: none).
func strList(v *hujson.Value, path string) ([]string, error) {
	if v == nil || bytes.Equal(literal(v), []byte("null")) {
		return nil, nil
	}
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		return nil, fmt.Errorf("%s must be an array of strings", path)
	}
	out := []string{}
	for i := range arr.Elements {
		s, ok := str(&arr.Elements[i])
		if !ok {
			return nil, fmt.Errorf("%s must be an array of strings", path)
		}
		out = append(out, s)
	}
	return out, nil
}

// strMap reads an object of strings in file order (nil, null: none).
func strMap(v *hujson.Value, path string) ([]KV, error) {
	if v == nil || bytes.Equal(literal(v), []byte("null")) {
		return nil, nil
	}
	o, ok := object(v)
	if !ok {
		return nil, fmt.Errorf("%s must be an object of strings", path)
	}
	var out []KV
	for i := range o.Members {
		k := o.Members[i].Name.Value.(hujson.Literal).String()
		s, ok := str(&o.Members[i].Value)
		if !ok {
			return nil, fmt.Errorf("%s.%s must be a string", path, k)
		}
		out = append(out, KV{k, s})
	}
	return out, nil
}
