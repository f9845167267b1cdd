package hosttest

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/hosttest/vectors"
	"github.com/crawlcheck/verifier/hosttest/wasmhost"
)

// memorySlack is how far a settled instance's linear memory may move: a
// page-granular high-water mark may still rise a little with fragmentation,
// but a leak of even 1 KB per call over the calls below is far more.
const memorySlack = 4 << 20

// TestWasmMemoryFlat: one long-lived instance answers every vector of
// testdata/ many times over (each op thousands of times, several hundred MB
// allocated in all) and then the issue-9 reproduction, 20,000 tiny
// canonicalize calls; after the first round its linear memory must stay
// where it settled. Before the module collected between calls, it grew by
// kilobytes per call without bound. Counts, not times: nothing here is timed.
func TestWasmMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("thousands of calls")
	}
	vs, err := vectors.Load("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := wasmhost.New(ctx, release.wasm, wasmhost.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	round := func() {
		for _, v := range vs {
			got, err := h.Call(ctx, v.Op, v.Request)
			if err != nil {
				t.Fatalf("%s: %v", v.Name, err)
			}
			if !bytes.Equal(got, v.Want) {
				t.Fatalf("%s: got %s want %s", v.Name, clip(got), clip(v.Want))
			}
		}
	}
	round()
	settled := h.MemoryBytes()
	check := func(after string) {
		t.Helper()
		if now := h.MemoryBytes(); now > settled+memorySlack {
			t.Fatalf("linear memory grew from %d to %d KiB after %s", settled>>10, now>>10, after)
		}
	}
	const rounds = 6
	for r := range rounds {
		round()
		check(fmt.Sprintf("round %d", r+2))
	}
	tiny := []byte(`{"json":"[1,2]"}`)
	want := core.Call("canonicalize", tiny)
	for i := range 20000 {
		got, err := h.Call(ctx, "canonicalize", tiny)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("canonicalize %d: %s %v", i, got, err)
		}
	}
	check("20,000 canonicalize calls")
	t.Logf("%d vectors × %d rounds and 20,000 canonicalize calls: linear memory %d KiB settled, %d KiB at the end",
		len(vs), rounds+1, settled>>10, h.MemoryBytes()>>10)
}
