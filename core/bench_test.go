package core_test

import (
	"crypto/sha256"
	"encoding/json"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/internal/benchdata"
)

// BenchmarkContinuity1000 is the core's performance target: a continuity
// check of 1,000 tools (about 1 MB) against its lockfile, record included,
// within 3× of BenchmarkFloor1000 measured in the same run. Each call's page
// is one the core has not kept (benchdata.ContinuityRequests), so the page
// is parsed and hashed every time.
func BenchmarkContinuity1000(b *testing.B) {
	reqs := benchdata.ContinuityRequests(1000)
	next := benchdata.Cycle(reqs)
	b.SetBytes(int64(len(reqs[0])))
	b.ResetTimer()
	for b.Loop() {
		if out := core.Call("continuity_check", next()); !strings.HasPrefix(string(out[:12]), `{"ok":true`) {
			b.Fatalf("%s", out[:200])
		}
	}
}

// BenchmarkContinuity1000Seen is BenchmarkContinuity1000 with the same page
// every call: what a warm instance does with a page it read before (the walk
// memo's hit).
func BenchmarkContinuity1000Seen(b *testing.B) {
	req := benchdata.ContinuityRequests(1000)[0]
	b.SetBytes(int64(len(req)))
	b.ResetTimer()
	for b.Loop() {
		if out := core.Call("continuity_check", req); !strings.HasPrefix(string(out[:12]), `{"ok":true`) {
			b.Fatalf("%s", out[:200])
		}
	}
}

// BenchmarkFloor1000 is the floor: unmarshal the same page bytes into
// []json.RawMessage and hash them once.
func BenchmarkFloor1000(b *testing.B) {
	page := benchdata.Page(1000)
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		var p struct{ Tools []json.RawMessage }
		if err := json.Unmarshal(page, &p); err != nil {
			b.Fatal(err)
		}
		h := sha256.New()
		for _, t := range p.Tools {
			h.Write(t)
		}
		h.Sum(nil)
	}
}
