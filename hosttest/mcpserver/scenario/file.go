// Package scenario is the MCP server every end-to-end test of the verifier
// talks to, in Go, JavaScript and Python alike.
//
// A scenario file (see File and docs/mcpserver.md) says which tools the server
// offers and how it misbehaves: pages, cursors that never advance or are
// empty, pages that are not JSON, tool objects the official SDKs would refuse
// or rewrite, handshakes that hang, and mutations of the list (a rug pull)
// after a number of listings or on request.
//
// The server is the official go-sdk server for everything the SDK does well
// (initialize, server/discover, sessions, streamable HTTP, subscriptions and
// notifications/tools/list_changed). tools/list and tools/call are answered
// below the SDK, at the transport, because the point of the scenario is the
// exact bytes a client receives: the SDK's typed Tool would drop unknown
// fields, fill in annotations and refuse null entries or duplicate names.
package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// File is a scenario file. Unknown fields are an error, so that a typo in a
// knob fails the test that uses it instead of being silently ignored.
type File struct {
	// Server is the serverInfo of the handshake. Default
	// {"name":"crawlcheck-scenario","version":"1.0.0"}.
	Server *ServerInfo `json:"server,omitempty"`

	// Instructions are the server's instructions in the handshake's answer
	// (initialize and server/discover); empty sends none. An
	// {"op":"instructions"} mutation changes them for the sessions that
	// start after it.
	Instructions string `json:"instructions,omitempty"`

	// Handshake selects which handshakes are answered: "both" (default),
	// "initialize" (server/discover gets -32601, as from a server written
	// before 2026-07-28) or "discover" (initialize gets -32022, unsupported
	// protocol version, listing 2026-07-28).
	Handshake string `json:"handshake,omitempty"`

	// HangHandshake makes the server read initialize and server/discover and
	// never answer them.
	HangHandshake bool `json:"hang_handshake,omitempty"`

	// ListChanged is the tools.listChanged capability (default true). A
	// mutation's notification is only sent when it is true.
	ListChanged *bool `json:"list_changed,omitempty"`
	// PromptsListChanged is the prompts.listChanged capability (default
	// false), for an admin mutation's notify_prompts.
	PromptsListChanged bool `json:"prompts_list_changed,omitempty"`

	// TTLMs, when set, ends every tools/list page the scenario writes with
	// "ttlMs": TTLMs and "cacheScope": "private", the cache hints of the
	// 2026-07-28 revision (a result is fresh for ttlMs milliseconds after
	// it was received). Older clients ignore the two members.
	TTLMs *int64 `json:"ttl_ms,omitempty"`

	// PageSize is the number of tools per tools/list page; 0 serves the
	// whole list in one page.
	PageSize int `json:"page_size,omitempty"`

	// Cursor selects how nextCursor behaves: "normal" (default; page k+1
	// is "cursor-<k+1>"), "stuck" (every page says "cursor-2" and
	// "cursor-2" always returns page 2) or "empty" (page 1 says "" and a
	// request with cursor "" returns page 2).
	Cursor string `json:"cursor,omitempty"`

	// Tools are the tool objects, each served with exactly the bytes
	// written here minus insignificant whitespace: key order, duplicate
	// keys, unknown fields, escapes, number spellings and null entries all
	// reach the wire as written.
	Tools []json.RawMessage `json:"tools"`

	// HTTPSSE makes the HTTP server send the answers the scenario writes
	// itself (tools/list, tools/call, handshake errors) as a
	// text/event-stream of one event instead of an application/json body.
	HTTPSSE bool `json:"http_sse,omitempty"`

	// PagesRaw replaces the result of page N (key "N", from 1) with the
	// exact bytes of the string, which need not be JSON. On stdio the bytes
	// must not contain a newline (it would end the frame).
	PagesRaw map[string]string `json:"pages_raw,omitempty"`

	// Mutations change the tool list while the server runs.
	Mutations []Mutation `json:"mutations,omitempty"`

	// Prompts, when set, are the prompt objects prompts/list answers (one
	// page, exact bytes as for tools), and the prompts capability is
	// declared. An {"op":"edit_prompt"} mutation edits one.
	Prompts []json.RawMessage `json:"prompts,omitempty"`
	// Resources and ResourceTemplates, when either (or Reads) is set, are
	// what resources/list and resources/templates/list answer (one page
	// each), and the resources capability is declared.
	Resources         []json.RawMessage `json:"resources,omitempty"`
	ResourceTemplates []json.RawMessage `json:"resource_templates,omitempty"`
	// Reads are the resources/read results by URI (an MCP Apps ui://
	// template among them), served as written; a URI not here is answered
	// with the error -32002 (resource not found). An {"op":"read"}
	// mutation replaces one (a swapped UI template).
	Reads map[string]json.RawMessage `json:"reads,omitempty"`
}

// ServerInfo is the serverInfo the handshake reports.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// A Mutation is a change to the tool list. It is applied once, either right
// after the server has answered the last page of the AfterLists-th complete
// listing, or, when AfterLists is 0, on an admin request (POST /admin/mutate
// or the trigger file), in file order.
type Mutation struct {
	AfterLists int `json:"after_lists,omitempty"`
	// Notify sends notifications/tools/list_changed after the change (only
	// if the list_changed capability is on).
	Notify bool `json:"notify,omitempty"`
	// NotifyPrompts sends notifications/prompts/list_changed after an
	// admin mutation (only if prompts_list_changed is on).
	NotifyPrompts bool `json:"notify_prompts,omitempty"`
	Ops           []Op `json:"ops"`
}

// An Op is one edit of the tool list.
//
//   - {"op":"edit","name":N,"set":{...},"unset":[...]}: in the first tool
//     object named N, replace (in place) or append the members of set and
//     delete the members named in unset; every other byte of the tool stays.
//     A description rug pull, a widened schema, a flipped annotation and a
//     rename (set name) are all edits.
//   - {"op":"add","tool":{...}}: append a tool.
//   - {"op":"remove","name":N}: remove every tool object named N.
//   - {"op":"replace","name":N,"tool":...}: replace the first tool named N
//     with these bytes.
//   - {"op":"instructions","text":T}: the server's instructions become T
//     ("" for none) for every session that starts after the mutation (an
//     instructions rug pull; a session's handshake is already answered).
//   - {"op":"edit_prompt","name":N,"set":{...},"unset":[...]}: edit the
//     prompt named N as "edit" edits a tool (a prompt rug pull).
//   - {"op":"read","uri":U,"tool":{...}}: resources/read of U answers
//     this result from now on (a swapped UI template).
type Op struct {
	Op    string          `json:"op"`
	Name  string          `json:"name,omitempty"`
	Tool  json.RawMessage `json:"tool,omitempty"`
	Set   json.RawMessage `json:"set,omitempty"`
	Unset []string        `json:"unset,omitempty"`
	Text  *string         `json:"text,omitempty"`
	URI   string          `json:"uri,omitempty"`
}

// Load reads and validates a scenario file.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading scenario: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", path, err)
	}
	return f, nil
}

// Parse decodes and validates a scenario document. Tool bytes are compacted
// (insignificant whitespace removed) so that every tool fits on one stdio
// line; nothing else about them changes.
func Parse(data []byte) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the scenario object")
	}
	if err := f.validate(); err != nil {
		return nil, err
	}
	return &f, nil
}

// ParseToolsRaw decodes a JSON array of tool objects (the --tools-raw file),
// keeping each element's bytes as written minus insignificant whitespace.
func ParseToolsRaw(data []byte) ([]json.RawMessage, error) {
	var tools []json.RawMessage
	if err := json.Unmarshal(data, &tools); err != nil {
		return nil, fmt.Errorf("tools file must be a JSON array: %w", err)
	}
	for i, t := range tools {
		c, err := compact(t)
		if err != nil {
			return nil, fmt.Errorf("tool %d: %w", i, err)
		}
		tools[i] = c
	}
	return tools, nil
}

func (f *File) validate() error {
	switch f.Handshake {
	case "":
		f.Handshake = "both"
	case "both", "initialize", "discover":
	default:
		return fmt.Errorf("handshake %q: want both, initialize or discover", f.Handshake)
	}
	switch f.Cursor {
	case "":
		f.Cursor = "normal"
	case "normal", "stuck", "empty":
	default:
		return fmt.Errorf("cursor %q: want normal, stuck or empty", f.Cursor)
	}
	if f.PageSize < 0 {
		return fmt.Errorf("page_size %d is negative", f.PageSize)
	}
	if f.Server == nil {
		f.Server = &ServerInfo{Name: "crawlcheck-scenario", Version: "1.0.0"}
	}
	if f.ListChanged == nil {
		on := true
		f.ListChanged = &on
	}
	for i, t := range f.Tools {
		c, err := compact(t)
		if err != nil {
			return fmt.Errorf("tools[%d]: %w", i, err)
		}
		f.Tools[i] = c
	}
	for k := range f.PagesRaw {
		if n, err := strconv.Atoi(k); err != nil || n < 1 {
			return fmt.Errorf("pages_raw key %q: want a page number from 1", k)
		}
	}
	if err := f.compactFeatures(); err != nil {
		return err
	}
	for i := range f.Mutations {
		if err := f.Mutations[i].validate(); err != nil {
			return fmt.Errorf("mutations[%d]: %w", i, err)
		}
	}
	return nil
}

func (m *Mutation) validate() error {
	if m.AfterLists < 0 {
		return fmt.Errorf("after_lists %d is negative", m.AfterLists)
	}
	if len(m.Ops) == 0 {
		return fmt.Errorf("no ops")
	}
	for i := range m.Ops {
		if err := m.Ops[i].validate(); err != nil {
			return fmt.Errorf("ops[%d]: %w", i, err)
		}
	}
	return nil
}

func (o *Op) validate() error {
	var err error
	switch o.Op {
	case "read":
		if o.URI == "" || o.Tool == nil {
			return fmt.Errorf("read needs uri and tool (the resources/read result)")
		}
		if o.Tool, err = compact(o.Tool); err != nil {
			return fmt.Errorf("tool: %w", err)
		}
	case "edit", "edit_prompt":
		if o.Name == "" {
			return fmt.Errorf("%s needs name", o.Op)
		}
		if o.Set == nil && o.Unset == nil {
			return fmt.Errorf("edit needs set or unset")
		}
		if o.Set != nil {
			if o.Set, err = compact(o.Set); err != nil {
				return fmt.Errorf("set: %w", err)
			}
			if _, err := members(o.Set); err != nil {
				return fmt.Errorf("set must be an object: %w", err)
			}
		}
	case "add", "replace":
		if o.Tool == nil {
			return fmt.Errorf("%s needs tool", o.Op)
		}
		if o.Op == "replace" && o.Name == "" {
			return fmt.Errorf("replace needs name")
		}
		if o.Tool, err = compact(o.Tool); err != nil {
			return fmt.Errorf("tool: %w", err)
		}
	case "remove":
		if o.Name == "" {
			return fmt.Errorf("remove needs name")
		}
	case "instructions":
		if o.Text == nil {
			return fmt.Errorf("instructions needs text")
		}
	default:
		return fmt.Errorf("op %q: want edit, add, remove, replace or instructions", o.Op)
	}
	return nil
}

// checkStdio reports a raw page that cannot travel as one stdio frame.
func (f *File) checkStdio() error {
	for k, v := range f.PagesRaw {
		if strings.ContainsAny(v, "\r\n") {
			return fmt.Errorf("pages_raw[%s] contains a line break, which would split the stdio frame", k)
		}
	}
	return nil
}

// compact removes insignificant whitespace, keeping every other byte.
func compact(raw []byte) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
