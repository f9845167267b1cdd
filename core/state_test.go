package core_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/core/memo"
	"github.com/crawlcheck/verifier/internal/benchdata"
)

// heldAfter answers the heap the instance holds after f, over what it held
// before, once the collector has run: what the memos keep between calls.
func heldAfter(f func()) int64 {
	// Two collections each time: a sync.Pool's buffers (the serializer's)
	// survive one.
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := int64(ms.HeapAlloc)
	f()
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc) - base
}

// twoMBChecks are continuity_checks of four lists of about 2 MB each (1,800
// tools, the lockfile 2.4 MB) against their lockfiles.
func twoMBChecks(t *testing.T) [][]byte {
	var reqs [][]byte
	for i := range 4 {
		page, lock := benchdata.Documents(1800 + i)
		req, err := json.Marshal(map[string]any{"now": benchdata.Now, "mode": "enforce", "lock": string(lock),
			"observed": map[string]any{"endpoint": benchdata.Endpoint, "pages": []string{string(page)}}})
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, req)
	}
	return reqs
}

// TestStateBounded: after four 2 MB lists, each checked again and again
// (so that every memo admits them), the heap the instance keeps between
// calls is within its budget, at the default (a browser tab's) and at a
// tenth of it, and with the memos off it keeps nearly nothing; the memos'
// own account of what they cost is from above (the heap held is within
// it), and the answers are the same whatever the budget. Before the budget
// (issue 33) the same calls kept 41 MB.
func TestStateBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 20 MB of lists")
	}
	reqs := twoMBChecks(t)
	want := make([][]byte, len(reqs))
	for i, r := range reqs {
		want[i] = core.Call("continuity_check", r)
		if !bytes.HasPrefix(want[i], []byte(`{"ok":true`)) {
			t.Fatalf("%.200s", want[i])
		}
	}
	defer core.SetMemoLimit(memo.DefaultLimit)
	// The slack: what else a call leaves (the scan's compiled rules, pools),
	// measured at about 1 MB with the memos off.
	const slack = 2 << 20
	for _, limit := range []int64{memo.DefaultLimit, memo.DefaultLimit / 10, 0} {
		core.SetMemoLimit(limit)
		memo.Instance.Clear()
		held := heldAfter(func() {
			for range 3 {
				for i, r := range reqs {
					if got := core.Call("continuity_check", r); !bytes.Equal(got, want[i]) {
						t.Fatalf("limit %d: list %d answered otherwise", limit, i)
					}
				}
			}
		})
		used := memo.Instance.Used()
		t.Logf("limit %5.1f MB: held %5.1f MB, the memos' account %5.1f MB %v", mb(limit), mb(held), mb(used), stats())
		if held > limit+slack || used > limit {
			t.Errorf("limit %.1f MB: held %.1f MB, accounted %.1f MB", mb(limit), mb(held), mb(used))
		}
		if held > used+slack {
			t.Errorf("limit %.1f MB: held %.1f MB, more than the memos account for (%.1f MB)", mb(limit), mb(held), mb(used))
		}
		if limit == memo.DefaultLimit && used == 0 {
			t.Error("nothing kept at the default budget")
		}
	}
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

func stats() string {
	var b bytes.Buffer
	for _, s := range core.MemoStats() {
		fmt.Fprintf(&b, " %s:%d/%.1fMB", s.Name, s.Entries, mb(s.Bytes))
	}
	return b.String()
}

// TestCallsConcurrent: every op vector asked from 8 goroutines at once,
// each several times (so that the memos fill, hit and evict while others
// read them), gives its envelope every time. The memos' lookups read
// without a lock; make test runs this under -race.
func TestCallsConcurrent(t *testing.T) {
	vs := opCalls(t)
	// A budget that holds a few of the vectors' documents, so that they
	// evict each other too.
	defer core.SetMemoLimit(memo.DefaultLimit)
	core.SetMemoLimit(1 << 20)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 3 {
				for k := range vs {
					v := vs[(k*(g+1)+round)%len(vs)]
					if got := core.Call(v.op, v.req); !bytes.Equal(got, v.want) {
						t.Errorf("goroutine %d, %s:\n got  %s\n want %s", g, v.name, got, v.want)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}
