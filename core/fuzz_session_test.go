package core_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/crawlcheck/verifier/core"
)

// FuzzSessionStep: the session engine answers any state and event (the
// vectors' requests mutated: a state the host kept, an event's members) with
// a canonical envelope, and a malformed one with a request error, never an
// internal error (a panic the ABI recovered). The engine's state is bounded
// by what it answers: its unheld names are checked in TestSessionUnheld*.
func FuzzSessionStep(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "ops", "session_step", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no session_step vectors: %v", err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		var v struct {
			Request json.RawMessage `json:"request"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			f.Fatalf("%s: %v", p, err)
		}
		f.Add(string(v.Request))
	}
	f.Add(`{"event":{"type":"unheld","names":["b","a","b"]}}`)
	f.Add(`{"event":{"type":"unheld","names":"a"}}`)
	f.Fuzz(func(t *testing.T, req string) {
		resp := core.Call("session_step", []byte(req))
		if _, _, code := envelope(t, resp); code == "internal" {
			t.Fatalf("%q: %s", req, resp)
		}
	})
}
