package core_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/core/memo"
)

// walkStats is the walk memo's counts.
func walkStats(t *testing.T) memo.Stats {
	t.Helper()
	for _, s := range core.MemoStats() {
		if s.Name == "walks" {
			return s
		}
	}
	t.Fatal("no walks memo in MemoStats")
	return memo.Stats{}
}

// TestOnePageWalkKeptBeforeTheCheck: a host reads a one-page list with
// next_page, then asks ui_templates and then the check of it. next_page's
// read is a sighting of that walk, so ui_templates keeps it and the check
// finds it: a process that reads the list once (the CLI) parses and hashes
// it once for both, not twice (make bench's CLI rows). A page that is not a
// whole walk (it has a nextCursor) is no sighting: ui_templates does not
// keep it.
func TestOnePageWalkKeptBeforeTheCheck(t *testing.T) {
	// Start from empty memos: a full walk memo keeps a walk only when it
	// was seen more often than the one it would evict.
	core.SetMemoLimit(0)
	core.SetMemoLimit(memo.DefaultLimit)
	unique := strconv.FormatInt(time.Now().UnixNano(), 10)
	call := func(op string, req any) []byte {
		t.Helper()
		b, _ := json.Marshal(req)
		got := core.Call(op, b)
		if !bytes.HasPrefix(got, []byte(`{"ok":true`)) {
			t.Fatalf("%s: %s", op, got)
		}
		return got
	}
	page := `{"tools":[{"name":"w` + unique + `","description":"Walks.","inputSchema":{"type":"object"}}]}`
	call("next_page", map[string]any{"page": page})
	before := walkStats(t)
	call("ui_templates", map[string]any{"pages": []string{page}})
	after := walkStats(t)
	if after.Kept != before.Kept+1 {
		t.Fatalf("ui_templates after next_page of a one-page walk: kept %d -> %d, want one more", before.Kept, after.Kept)
	}
	call("ui_templates", map[string]any{"pages": []string{page}})
	if again := walkStats(t); again.Hits != after.Hits+1 {
		t.Fatalf("the walk read again: hits %d -> %d, want one more", after.Hits, again.Hits)
	}

	first := `{"tools":[{"name":"f` + unique + `","inputSchema":{"type":"object"}}],"nextCursor":"2"}`
	call("next_page", map[string]any{"page": first})
	before = walkStats(t)
	call("ui_templates", map[string]any{"pages": []string{first}})
	if after := walkStats(t); after.Kept != before.Kept {
		t.Fatalf("a page with a nextCursor counted as a whole walk: kept %d -> %d", before.Kept, after.Kept)
	}
}

// TestOnePageWalkKeptAfterTheEngine: the session engine's walk (the
// handshake and page events) notes a one-page list as next_page does, so
// a host on the engine parses and hashes it once for ui_templates and the
// check.
func TestOnePageWalkKeptAfterTheEngine(t *testing.T) {
	core.SetMemoLimit(0)
	core.SetMemoLimit(memo.DefaultLimit)
	unique := strconv.FormatInt(time.Now().UnixNano(), 10)
	step := func(state json.RawMessage, event map[string]any) json.RawMessage {
		t.Helper()
		req := map[string]any{"event": event}
		if state != nil {
			req["state"] = state
		}
		b, _ := json.Marshal(req)
		var got struct {
			OK     bool `json:"ok"`
			Result struct {
				State json.RawMessage `json:"state"`
			} `json:"result"`
		}
		raw := core.Call("session_step", b)
		if json.Unmarshal(raw, &got) != nil || !got.OK {
			t.Fatalf("session_step: %s", raw)
		}
		return got.Result.State
	}
	state := step(nil, map[string]any{"type": "handshake", "handshake": "initialize", "result": `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}`})
	page := `{"tools":[{"name":"e` + unique + `","description":"Walks.","inputSchema":{"type":"object"}}]}`
	step(state, map[string]any{"type": "page", "page": page})
	before := walkStats(t)
	b, _ := json.Marshal(map[string]any{"pages": []string{page}})
	if got := core.Call("ui_templates", b); !bytes.HasPrefix(got, []byte(`{"ok":true`)) {
		t.Fatalf("ui_templates: %s", got)
	}
	if after := walkStats(t); after.Kept != before.Kept+1 {
		t.Fatalf("ui_templates after the engine's walk of one page: kept %d -> %d, want one more", before.Kept, after.Kept)
	}
}
