package core_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/scan"
	"github.com/crawlcheck/verifier/core/internal/tools"
	"github.com/crawlcheck/verifier/internal/benchdata"
)

// The scan's performance target: scanning a 1,000-tool list adds at most
// 50% to make_lock on the same list. make_lock includes the scan, so the
// share is ScanRun1000 / (MakeLock1000 − ScanRun1000).

func makeLockRequest(n int) []byte {
	b, _ := json.Marshal(map[string]any{"pages": []string{string(benchdata.Page(n))}, "approved_at": "2026-11-01T00:00:00Z"})
	return b
}

// BenchmarkMakeLock1000: make_lock of 1,000 tools from a page, scan included.
func BenchmarkMakeLock1000(b *testing.B) {
	req := makeLockRequest(1000)
	b.SetBytes(int64(len(req)))
	for b.Loop() {
		if out := core.Call("make_lock", req); !strings.HasPrefix(string(out[:12]), `{"ok":true`) {
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

// BenchmarkScanOp1000: the scan op on the same page, parsing included.
func BenchmarkScanOp1000(b *testing.B) {
	req, _ := json.Marshal(map[string]any{"pages": []string{string(benchdata.Page(1000))}})
	b.SetBytes(int64(len(req)))
	for b.Loop() {
		if out := core.Call("scan", req); !strings.HasPrefix(string(out[:12]), `{"ok":true`) {
			b.Fatalf("%s", out[:200])
		}
	}
}
