package preflight

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// walkPages are ten pages of a thousand tools together, each with a cursor
// to the next but the last: the walk issue 33 times before and after the
// engine took it over.
func walkPages(t testing.TB) [][]byte {
	var pages [][]byte
	for p := range 10 {
		var tools []map[string]any
		for i := range 100 {
			name := fmt.Sprintf("tool_%d_%d", p, i)
			tools = append(tools, map[string]any{"name": name, "description": "Does one thing with the item " + name + ", carefully and only when asked.",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}})
		}
		page := map[string]any{"tools": tools}
		if p < 9 {
			page["nextCursor"] = fmt.Sprintf("page-%d", p+1)
		}
		b, err := json.Marshal(page)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, b)
	}
	return pages
}

// engineWalk walks pages as Observe does: the handshake, then each page the
// engine asks for.
func engineWalk(t testing.TB, pages [][]byte) Observation {
	w, err := BeginWalk("initialize", json.RawMessage(`{"protocolVersion":"2025-06-18","serverInfo":{"name":"s","version":"1"}}`), "2025-06-18", 0, nil)
	for i := 0; err == nil; i++ {
		cursor, more := w.Next()
		if !more {
			break
		}
		if want := fmt.Sprintf("page-%d", i); i > 0 && cursor != want {
			t.Fatalf("page %d: cursor %q, want %q", i+1, cursor, want)
		}
		err = w.Page(pages[i])
	}
	if err != nil {
		t.Fatal(err)
	}
	var obs Observation
	w.Observe(&obs)
	return obs
}

// TestEngineWalk: every page read goes into the observation, with the
// handshake's bytes and the version, and the walk ends at the list's end.
func TestEngineWalk(t *testing.T) {
	obs := engineWalk(t, walkPages(t))
	if len(obs.Pages) != 10 || obs.Stop != StopListEnd || obs.ProtocolVersion != "2025-06-18" || obs.Handshake != "initialize" || !strings.Contains(string(obs.HandshakeResult), `"serverInfo"`) {
		t.Fatalf("pages %d, stop %q, version %q, handshake %q %s", len(obs.Pages), obs.Stop, obs.ProtocolVersion, obs.Handshake, obs.HandshakeResult)
	}
}

// BenchmarkWalk times a 1,000-tool, 10-page walk natively: the session
// engine's handshake and page events (the Go executor, Walk), and the
// next_page steps the hosts made before it (which the gateway still makes).
func BenchmarkWalk(b *testing.B) {
	pages := walkPages(b)
	b.Run("session_step", func(b *testing.B) {
		for range b.N {
			engineWalk(b, pages)
		}
	})
	b.Run("next_page", func(b *testing.B) {
		for range b.N {
			var followed []string
			for i := 0; ; i++ {
				step, err := nextPage(pages[i], followed, 0)
				if err != nil {
					b.Fatal(err)
				}
				if step.Cursor == nil {
					break
				}
				followed = step.Followed
			}
		}
	})
}
