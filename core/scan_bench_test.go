package core_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/classify"
	"github.com/crawlcheck/verifier/core/internal/diff"
	"github.com/crawlcheck/verifier/core/internal/scan"
	"github.com/crawlcheck/verifier/core/internal/tools"
	"github.com/crawlcheck/verifier/internal/benchdata"
)

// The scan's performance target: scanning a 1,000-tool list adds at most
// 50% to make_lock on the same list. make_lock includes the scan, so the
// share is ScanRun1000 / (MakeLock1000 − ScanRun1000).

// pageRequests are requests of one page of n tools, each with fields
// besides pages, respaced benchdata.Unseen ways so that every call of a
// benchmark cycling through them reads its page (the walk memo keeps pages
// by their bytes).
func pageRequests(n int, fields map[string]any) [][]byte {
	page := benchdata.Page(n)
	out := make([][]byte, benchdata.Unseen)
	for i := range out {
		fields["pages"] = []string{string(benchdata.Respaced(page, i))}
		out[i], _ = json.Marshal(fields)
	}
	return out
}

// BenchmarkMakeLock1000: make_lock of 1,000 tools from a page, scan included.
func BenchmarkMakeLock1000(b *testing.B) {
	reqs := pageRequests(1000, map[string]any{"approved_at": "2026-11-01T00:00:00Z"})
	next := benchdata.Cycle(reqs)
	b.SetBytes(int64(len(reqs[0])))
	for b.Loop() {
		if out := core.Call("make_lock", next()); !strings.HasPrefix(string(out[:12]), `{"ok":true`) {
			b.Fatalf("%s", out[:200])
		}
	}
}

// BenchmarkScanRun1000: the scan make_lock runs, on tools already hashed.
func BenchmarkScanRun1000(b *testing.B) {
	v, err := canon.Parse(benchdata.Page(1000))
	if err != nil {
		b.Fatal(err)
	}
	list, _ := v.Get("tools")
	ts, err := tools.Hash(list)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		scan.Run(ts, nil).Value()
	}
}

// BenchmarkScanOp1000: the scan op on the same list, parsing included.
func BenchmarkScanOp1000(b *testing.B) {
	reqs := pageRequests(1000, map[string]any{})
	next := benchdata.Cycle(reqs)
	b.SetBytes(int64(len(reqs[0])))
	for b.Loop() {
		if out := core.Call("scan", next()); !strings.HasPrefix(string(out[:12]), `{"ok":true`) {
			b.Fatalf("%s", out[:200])
		}
	}
}

// BenchmarkClassify1000: the change classes of a 1,000-tool list whose
// every description gained a sentence (issue 38: scan and classifier
// together at most 25% of make_lock at 1,000 tools; docs/benchmarks.md).
// The comparison of two full lists, word diffs included, as diff does it.
func BenchmarkClassify1000(b *testing.B) {
	v, err := canon.Parse(benchdata.Page(1000))
	if err != nil {
		b.Fatal(err)
	}
	list, _ := v.Get("tools")
	old, err := tools.Hash(list)
	if err != nil {
		b.Fatal(err)
	}
	var raw []map[string]any
	if err := json.Unmarshal([]byte(list.String()), &raw); err != nil {
		b.Fatal(err)
	}
	for _, t := range raw {
		d, _ := t["description"].(string)
		t["description"] = d + " Returns the updated record, for example its id."
	}
	nb, _ := json.Marshal(raw)
	nv, err := canon.Parse(nb)
	if err != nil {
		b.Fatal(err)
	}
	changed, err := tools.Hash(nv)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r := diff.Lists(old, changed)
		if len(r.Modified) != 1000 || r.Modified[0].Classes == nil {
			b.Fatalf("%d modified", len(r.Modified))
		}
	}
}

// BenchmarkClassifier1000: the classifier alone on the same changes, from
// their word diffs: what classes add to a comparison.
func BenchmarkClassifier1000(b *testing.B) {
	v, _ := canon.Parse(benchdata.Page(1000))
	list, _ := v.Get("tools")
	old, _ := tools.Hash(list)
	names := make([]string, len(old))
	segs := make([][]classify.Segment, len(old))
	for i := range old {
		names[i] = old[i].Name
		segs[i] = diff.Classify(diff.Words(old[i].Description, old[i].Description+" Returns the updated record, for example its id."))
	}
	for b.Loop() {
		k := classify.New(names)
		for i := range old {
			k.Change(segs[i], names[i])
		}
	}
}
