package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/hosttest/artifact"
	"github.com/tetratelabs/wazero"
)

// testWasm is crawlcheck.wasm built with the crawlcheck_testpanic tag, whose
// core has test_spin, an op that runs for minutes.
var testWasm []byte

// cacheRoot is the compilation cache the tests share, so only the first
// host of a run compiles.
var cacheRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wasmhost-")
	if err == nil {
		var set artifact.Set
		if set, err = artifact.Build(dir, "crawlcheck_testpanic"); err == nil {
			testWasm, err = os.ReadFile(set.WASM)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wasmhost:", err)
		os.Exit(1)
	}
	cacheRoot = filepath.Join(dir, "cache")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func newHost(t testing.TB) *Host {
	t.Helper()
	h, err := New(context.Background(), testWasm, Config{CacheRoot: cacheRoot})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

// TestDeadline: a call that would run for minutes ends at its deadline with
// the context's error, its instance is discarded, and the host goes on.
func TestDeadline(t *testing.T) {
	h := newHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := h.Call(ctx, "test_spin", []byte("{}"))
	elapsed := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("test_spin under a 100 ms deadline: %v", err)
	}
	t.Logf("stopped after %v: %v", elapsed, err)
	if elapsed > 2*time.Second {
		t.Errorf("the deadline took %v to stop the call", elapsed)
	}
	if n := h.Idle(); n != 0 {
		t.Errorf("%d instances in the pool; the interrupted one must be discarded", n)
	}
	resp, err := h.Call(context.Background(), "version", []byte("{}"))
	if err != nil || !strings.HasPrefix(string(resp), `{"ok":true`) {
		t.Errorf("after the deadline: %s %v", resp, err)
	}
}

// TestCanceled: a context canceled before the call never reaches the module.
func TestCanceled(t *testing.T) {
	h := newHost(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Call(ctx, "version", []byte("{}")); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: %v", err)
	}
}

// TestOverCapNotCopied: the module refuses an over-cap request from its
// length alone; its memory does not grow to hold it, and malloc refuses a
// buffer that large.
func TestOverCapNotCopied(t *testing.T) {
	h := newHost(t)
	ctx := context.Background()
	inst, err := h.get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer h.put(inst)
	if _, err := inst.run(ctx, "version", []byte("{}"), nil); err != nil { // buffers allocated
		t.Fatal(err)
	}
	before := inst.mem.Size()
	resp, err := inst.run(ctx, "canonicalize", make([]byte, MaxRequest+1), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(resp), `"code":"input_too_large"`) {
		t.Errorf("over-cap request: %s", resp)
	}
	if after := inst.mem.Size(); after != before {
		t.Errorf("memory grew from %d to %d bytes for a refused request", before, after)
	}
	inst.stack[0] = MaxRequest + 1
	if err := inst.malloc.CallWithStack(inst.ctx, inst.stack[:1]); err != nil || inst.stack[0] != 0 {
		t.Errorf("malloc(cap+1) = %d, %v; want 0", inst.stack[0], err)
	}
}

// TestCacheDir: the compilation cache lives in a directory named after the
// wazero version and the module's SHA-256, and a second host loads from it.
func TestCacheDir(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	start := time.Now()
	cold, err := Compile(ctx, testWasm, Config{CacheRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	coldTime := time.Since(start)
	cold.Close(ctx)
	dir := cold.CacheDir()
	if base := filepath.Base(dir); !strings.HasPrefix(base, "wazero-v1.") || len(base) != len("wazero-")+len(wazeroVersion())+1+64 {
		t.Errorf("cache directory %q does not name the wazero version and the module hash", base)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) == 0 {
		t.Errorf("cache directory %s is empty (%v)", dir, err)
	}
	start = time.Now()
	warm, err := Compile(ctx, testWasm, Config{CacheRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	warm.Close(ctx)
	t.Logf("compile: cold %v, from cache %v", coldTime, time.Since(start))
}

// BenchmarkGuard compares the cost of a call without a deadline, with this
// package's guard, and with wazero's WithCloseOnContextDone, on the
// smallest op (the guard's fixed cost) and on hashing 200 tools (the cost
// of wazero's per-loop checks).
func BenchmarkGuard(b *testing.B) {
	ctx := context.Background()
	tools := make([]string, 200)
	for i := range tools {
		tools[i] = fmt.Sprintf(`{"name":"tool_%d","description":"does %d things","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`, i, i)
	}
	calls := []struct{ name, op, req string }{
		{"version", "version", "{}"},
		{"hash_tools_200", "hash_tools", `{"tools":[` + strings.Join(tools, ",") + `]}`},
	}
	ours, err := New(ctx, testWasm, Config{CacheRoot: cacheRoot})
	if err != nil {
		b.Fatal(err)
	}
	defer ours.Close(ctx)
	theirs, err := compile(ctx, testWasm, Config{CacheRoot: b.TempDir()},
		wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(true))
	if err != nil {
		b.Fatal(err)
	}
	defer theirs.Close(ctx)
	for _, c := range calls {
		run := func(b *testing.B, h *Host, deadline bool) {
			for b.Loop() {
				cctx, cancel := ctx, context.CancelFunc(func() {})
				if deadline {
					cctx, cancel = context.WithTimeout(ctx, time.Minute)
				}
				if _, err := h.Call(cctx, c.op, []byte(c.req)); err != nil {
					b.Fatal(err)
				}
				cancel()
			}
		}
		b.Run(c.name+"/none", func(b *testing.B) { run(b, ours, false) })
		b.Run(c.name+"/guard", func(b *testing.B) { run(b, ours, true) })
		b.Run(c.name+"/wazero-close-on-done", func(b *testing.B) { run(b, theirs, true) })
	}
}
