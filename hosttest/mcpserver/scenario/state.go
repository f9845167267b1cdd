package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
)

// State is the live tool list of a running scenario: the pages it serves,
// the listings it has completed and the mutations it has applied. It is
// shared by every session of one server process.
type State struct {
	file *File

	mu           sync.Mutex
	tools        []json.RawMessage
	instructions string   // the handshake's, for sessions starting now
	completed    int      // listings whose last page has been answered
	applied      []bool   // per file.Mutations
	applyLog     []int    // file index of each applied mutation, -1 for ad-hoc
	calls        []string // the name of every tools/call received, in order
	prompts      []json.RawMessage
	reads        map[string]json.RawMessage
}

// NewState starts a scenario with the file's tools.
func NewState(f *File) *State {
	return &State{
		file:         f,
		tools:        append([]json.RawMessage(nil), f.Tools...),
		instructions: f.Instructions,
		applied:      make([]bool, len(f.Mutations)),
		prompts:      append([]json.RawMessage(nil), f.Prompts...),
		reads:        maps.Clone(f.Reads),
	}
}

// rpcError is a JSON-RPC error the scenario answers with.
type rpcError struct {
	code int
	msg  string
}

// Page returns the result bytes of the tools/list request with the given
// cursor (hasCursor false: the first page), and whether it was the list's
// last page. The bytes are built by hand so that each tool goes out exactly
// as stored.
func (s *State) Page(cursor string, hasCursor bool) (result []byte, last bool, rerr *rpcError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	page, ok := s.pageNumber(cursor, hasCursor)
	if !ok {
		return nil, false, &rpcError{-32602, fmt.Sprintf("invalid cursor %q", cursor)}
	}
	pages := 1
	if n := s.file.PageSize; n > 0 && len(s.tools) > n {
		pages = (len(s.tools) + n - 1) / n
	}
	last = page >= pages
	if raw, ok := s.file.PagesRaw[strconv.Itoa(page)]; ok {
		return []byte(raw), last, nil
	}
	var b bytes.Buffer
	b.WriteString(`{"tools":[`)
	for i, t := range s.pageTools(page) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(t)
	}
	b.WriteByte(']')
	if next, ok := s.nextCursor(page, pages); ok {
		b.WriteString(`,"nextCursor":`)
		c, _ := json.Marshal(next)
		b.Write(c)
	}
	if s.file.TTLMs != nil {
		fmt.Fprintf(&b, `,"ttlMs":%d,"cacheScope":"private"`, *s.file.TTLMs)
	}
	b.WriteByte('}')
	return b.Bytes(), last, nil
}

// pageNumber maps a request's cursor to a page number from 1.
func (s *State) pageNumber(cursor string, hasCursor bool) (int, bool) {
	if !hasCursor {
		return 1, true
	}
	if cursor == "" {
		// Only the "empty" knob hands out "", and it means page 2. Any other
		// client sending "" is treated as asking for the first page.
		if s.file.Cursor == "empty" {
			return 2, true
		}
		return 1, true
	}
	n, err := strconv.Atoi(strings.TrimPrefix(cursor, "cursor-"))
	if !strings.HasPrefix(cursor, "cursor-") || err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// pageTools returns page's slice of the list; a page past the end is empty.
func (s *State) pageTools(page int) []json.RawMessage {
	n := s.file.PageSize
	if n == 0 {
		if page == 1 {
			return s.tools
		}
		return nil
	}
	lo := (page - 1) * n
	if lo >= len(s.tools) {
		return nil
	}
	return s.tools[lo:min(lo+n, len(s.tools))]
}

// nextCursor is the nextCursor of page, per the cursor knob.
func (s *State) nextCursor(page, pages int) (string, bool) {
	switch s.file.Cursor {
	case "stuck":
		return "cursor-2", true
	case "empty":
		if page == 1 {
			return "", true
		}
	}
	if page < pages {
		return "cursor-" + strconv.Itoa(page+1), true
	}
	return "", false
}

// ListingCompleted counts a completed listing (the last page was answered)
// and applies the mutations due after it. It reports whether a list_changed
// notification is due.
func (s *State) ListingCompleted() (notify bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.completed++
	for i, m := range s.file.Mutations {
		if !s.applied[i] && m.AfterLists > 0 && m.AfterLists == s.completed {
			n, err := s.applyLocked(i, m)
			if err != nil {
				return notify, err
			}
			notify = notify || n
		}
	}
	return notify, nil
}

// ApplyAdmin applies body, a Mutation document, or when body is empty the
// next admin-triggered mutation of the file. It reports whether a
// list_changed notification is due.
func (s *State) ApplyAdmin(body []byte) (notify bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(bytes.TrimSpace(body)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		var m Mutation
		if err := dec.Decode(&m); err != nil {
			return false, fmt.Errorf("mutation: %w", err)
		}
		if err := m.validate(); err != nil {
			return false, fmt.Errorf("mutation: %w", err)
		}
		return s.applyLocked(-1, m)
	}
	for i, m := range s.file.Mutations {
		if !s.applied[i] && m.AfterLists == 0 {
			return s.applyLocked(i, m)
		}
	}
	return false, fmt.Errorf("no admin mutation left to apply")
}

// applyLocked applies m (file index i, or -1 for an ad-hoc mutation).
// Ops are applied to a copy so that a failing op changes nothing.
func (s *State) applyLocked(i int, m Mutation) (notify bool, err error) {
	tools := append([]json.RawMessage(nil), s.tools...)
	prompts := append([]json.RawMessage(nil), s.prompts...)
	reads := maps.Clone(s.reads)
	instructions := s.instructions
	for j, op := range m.Ops {
		switch op.Op {
		case "instructions":
			instructions = *op.Text
			continue
		case "edit_prompt":
			prompts, err = applyOp(prompts, Op{Op: "edit", Name: op.Name, Set: op.Set, Unset: op.Unset})
		case "read":
			if reads == nil {
				reads = map[string]json.RawMessage{}
			}
			reads[op.URI] = op.Tool
		default:
			tools, err = applyOp(tools, op)
		}
		if err != nil {
			return false, fmt.Errorf("mutation %d op %d (%s %q): %w", i, j, op.Op, op.Name, err)
		}
	}
	s.tools, s.instructions, s.prompts, s.reads = tools, instructions, prompts, reads
	if i >= 0 {
		s.applied[i] = true
	}
	s.applyLog = append(s.applyLog, i)
	return m.Notify && *s.file.ListChanged, nil
}

func applyOp(tools []json.RawMessage, op Op) ([]json.RawMessage, error) {
	switch op.Op {
	case "add":
		return append(tools, op.Tool), nil
	case "remove":
		out := tools[:0]
		for _, t := range tools {
			if toolName(t) != op.Name {
				out = append(out, t)
			}
		}
		if len(out) == len(tools) {
			return nil, fmt.Errorf("no tool named %q", op.Name)
		}
		return out, nil
	}
	i := indexTool(tools, op.Name)
	if i < 0 {
		return nil, fmt.Errorf("no tool named %q", op.Name)
	}
	if op.Op == "replace" {
		tools[i] = op.Tool
		return tools, nil
	}
	edited, err := editObject(tools[i], op.Set, op.Unset)
	if err != nil {
		return nil, err
	}
	tools[i] = edited
	return tools, nil
}

func indexTool(tools []json.RawMessage, name string) int {
	for i, t := range tools {
		if toolName(t) == name {
			return i
		}
	}
	return -1
}

// Instructions are the server's instructions for a session starting now.
func (s *State) Instructions() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.instructions
}

// Called records a tools/call for name (any name, offered or not).
func (s *State) Called(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, name)
}

// HasTool reports whether the current list offers a tool named name.
func (s *State) HasTool(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return indexTool(s.tools, name) >= 0
}

// Snapshot is what GET /admin/state reports.
type Snapshot struct {
	CompletedListings int      `json:"completed_listings"`
	Applied           []int    `json:"applied"` // file index of each applied mutation, -1 for ad-hoc
	ToolNames         []string `json:"tool_names"`
	// Calls names every tools/call the server received, known tool or not:
	// what a test asserts to show a refused call never reached the server.
	Calls []string `json:"calls"`
}

// Snapshot returns the state for the admin endpoint.
func (s *State) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := Snapshot{CompletedListings: s.completed, Applied: append([]int{}, s.applyLog...), ToolNames: []string{}, Calls: append([]string{}, s.calls...)}
	for _, t := range s.tools {
		snap.ToolNames = append(snap.ToolNames, toolName(t))
	}
	return snap
}
