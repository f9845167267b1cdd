package core_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core"
)

// walkSequences are the observation's sequences (the handshake and page
// events): each rule of a tools/list walk the hosts used to apply, as a
// walk that meets it.
func walkSequences(t testing.TB) []sessionSequence {
	base := baseTools()
	hs := func(ms obj) obj { return with(ms, "type", "handshake") }
	initialize := `{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"issues","version":"1.4.0"}}`
	start := hs(obj{"handshake": "initialize", "result": initialize})
	pg := func(cursor string) obj { return obj{"type": "page", "page": page(t, base, cursor)} }
	raw := func(p string) obj { return obj{"type": "page", "page": p} }
	fault := func(ms obj) obj { return obj{"type": "page", "fault": ms} }
	return []sessionSequence{
		{"a walk follows the cursors to the list's end, and a re-check begins again", []obj{
			start, pg("c1"), pg("c2"), pg(""),
			start, pg(""),
		}},
		{"a cursor handed out again ends the walk as cursor_repeated", []obj{start, pg("c1"), pg("c2"), pg("c1")}},
		{"the page cap ends the walk, a cap past the core's is the core's", []obj{
			hs(obj{"handshake": "initialize", "result": initialize, "page_cap": 2}), pg("c1"), pg("c2"),
			hs(obj{"handshake": "initialize", "result": initialize, "page_cap": 1}), pg("c1"),
			hs(obj{"handshake": "initialize", "result": initialize, "page_cap": 5000}), pg(""),
		}},
		{"a page the strict parser refuses ends the walk as response_malformed", []obj{
			start, pg("c1"), raw(`{"tools":"not a list"}`),
			start, raw(`{"tools":[],"nextCursor":""}`),
			start, raw(`{"tools":[],"nextCursor":7}`),
			start, raw(`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}`),
			start, raw("not json \x1b[2J"),
			start, raw(`{"tools":[],"tools":[{"name":"shadow"}]}`),
			start, obj{"type": "page", "page": obj{"base64": "/3sidG9vbHMiOltdfQ=="}},
		}},
		{"a fault at a page says which page, and keeps the pages before it", []obj{
			start, pg("c1"), fault(obj{"failure": "session_ended"}),
			start, fault(obj{"failure": "timeout", "timeout_ms": 10000}),
			start, pg("c1"), fault(obj{"failure": "process_exited", "exit_status": 1, "stderr_tail": "panic: boom\n"}),
			start, fault(obj{"failure": "answer_too_large", "failure_detail": "1048576"}),
			start, fault(obj{"failure": "list_cached"}),
			start, pg("c1"), {"type": "page", "oversized": true},
		}},
		{"a fault at the handshake ends the observation there", []obj{
			hs(obj{"fault": obj{"failure": "connect_refused"}}),
			hs(obj{"fault": obj{"failure": "command_not_found"}}),
			hs(obj{"fault": obj{"failure": "command_not_found", "failure_command": "npx-typo"}}),
			hs(obj{"fault": obj{"failure": "process_exited", "exit_status": 3, "stderr_tail": "Error: missing API key\n\x1b[31mbye\n"}}),
			hs(obj{"fault": obj{"failure": "unauthorized", "resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource"}}),
			hs(obj{"fault": obj{"failure": "session_ended", "resource_metadata": "https://ignored.example.com"}}),
			hs(obj{"fault": obj{"failure": "answer_too_large", "failure_detail": "1048576"}}),
			hs(obj{"handshake": "initialize", "result": `{"protocolVersion":"1999-01-01","serverInfo":{"name":"old"}}`, "fault": obj{"failure": "session_failed"}}),
		}},
		{"the version the session uses: the SDK's, else an initialize answer's", []obj{
			hs(obj{"handshake": "initialize", "result": initialize, "negotiated": "2025-03-26"}), pg(""),
			hs(obj{"handshake": "initialize", "result": `{"protocolVersion":"2025-06-18","instructions":"a","instructions":"b"}`}), pg(""),
			hs(obj{"handshake": "initialize", "result": `{"protocolVersion":"2025-06-18","instructions":"a","instructions":"b"}`, "negotiated": "2025-06-18"}), pg(""),
			hs(obj{"handshake": "initialize", "result": `{"protocolVersion":20250618}`}), pg(""),
			hs(obj{"handshake": "server/discover", "result": `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"issues"}},"protocolVersion":"2026-07-28"}`}), pg(""),
			hs(obj{"handshake": "server/discover", "result": `{"_meta":{}}`, "negotiated": "2026-07-28"}), pg(""),
			hs(obj{}), pg(""),
		}},
	}
}

// walkBadVectors are the observation's events the engine refuses.
func walkBadVectors() []opVector {
	bad := func(name string, r obj) opVector { return opVector{Op: "session_step", Name: name, Request: r} }
	return []opVector{
		bad("a page with no walk begun", obj{"event": obj{"type": "page", "page": `{"tools":[]}`}}),
		bad("a handshake result without its handshake", obj{"event": obj{"type": "handshake", "result": `{}`}}),
		bad("a handshake of no known method", obj{"event": obj{"type": "handshake", "handshake": "hello", "result": `{}`}}),
		bad("a fault no host reports", obj{"event": obj{"type": "handshake", "fault": obj{"failure": "server_was_rude"}}}),
		bad("a fault that says where it happened", obj{"event": obj{"type": "handshake", "fault": obj{"failure": "timeout", "failure_at": "tools/list"}}}),
		bad("a page cap that is no count", obj{"event": obj{"type": "handshake", "page_cap": 0}}),
	}
}

// TestWalkEngine drives the observation's events as a host does, over a
// walk of a thousand tools in ten pages, and checks what no vector's size
// shows: the state stays small whatever the pages weigh, every page read
// goes in the observation, and a page event without a page, or with two
// things at once, is refused rather than taken as the list's end.
func TestWalkEngine(t *testing.T) {
	pages := thousandToolPages(t, 10)
	var state json.RawMessage
	stepOf := func(ev obj) []obj {
		r := obj{"event": ev}
		if state != nil {
			r["state"] = state
		}
		var env struct {
			OK     bool
			Result struct {
				State   json.RawMessage
				Actions []obj
			}
		}
		if err := json.Unmarshal(core.Call("session_step", mustJSON(t, r)), &env); err != nil || !env.OK {
			t.Fatalf("session_step %v: not ok", ev["type"])
		}
		state = env.Result.State
		return env.Result.Actions
	}
	acts := stepOf(obj{"type": "handshake", "handshake": "initialize", "result": `{"protocolVersion":"2025-06-18"}`})
	for i, p := range pages {
		if len(acts) != 1 || acts[0]["action"] != "read_page" {
			t.Fatalf("page %d: %v", i+1, acts)
		}
		acts = stepOf(obj{"type": "page", "page": p})
		if len(state) > 2048 {
			t.Errorf("page %d: the state is %d bytes: pages must not travel in it", i+1, len(state))
		}
	}
	if len(acts) != 1 || acts[0]["action"] != "observed" || acts[0]["pages"] != float64(10) || acts[0]["stop"] != "list_end" {
		t.Fatalf("the walk's end: %v", acts)
	}
	if strings.Contains(string(state), `"walk"`) {
		t.Errorf("the walk's state outlived it: %s", state)
	}
	for _, ev := range []obj{
		{"type": "page"},
		{"type": "page", "page": pages[0], "fault": obj{"failure": "timeout"}},
	} {
		stepOf(obj{"type": "handshake"})
		r := mustJSON(t, obj{"state": state, "event": ev})
		if out := core.Call("session_step", r); !strings.Contains(string(out), `"ok":false`) {
			t.Errorf("%s: %s", r[:min(len(r), 200)], out)
		}
	}
}

// thousandToolPages are n pages of a thousand tools together, each with a
// cursor to the next but the last.
func thousandToolPages(t testing.TB, n int) []string {
	var out []string
	per := 1000 / n
	for p := range n {
		var ts []obj
		for i := range per {
			name := "tool_" + strings.Repeat("x", 3) + string(rune('a'+p)) + "_" + itoa(i)
			ts = append(ts, obj{"name": name, "description": "Does one thing with the item " + name + ", carefully and only when asked.", "inputSchema": obj{"type": "object", "properties": obj{"id": obj{"type": "string"}}}})
		}
		cursor := ""
		if p < n-1 {
			cursor = "page-" + itoa(p+1)
		}
		out = append(out, page(t, ts, cursor))
	}
	return out
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
