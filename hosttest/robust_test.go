package hosttest

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/hosttest/chost"
	"github.com/crawlcheck/verifier/hosttest/gen"
	"github.com/crawlcheck/verifier/hosttest/wasmhost"
)

// malformed are requests no op can accept as they are.
var malformed = []string{
	"", " ", "{", "}", "[", "nul", "nulls", "{}x", `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`,
	"\xff", `{"a":"` + "\xc3\x28" + `"}`, `{"a":"\ud800"}`, `{"a":"\udc00\ud800"}`, `{"a":"\x01"}`,
	"\ufeff{}", `{"a":1e400}`, `{"a":-1e400}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":+1}`,
	`{"a":NaN}`, `{"a":Infinity}`, `{"a":'x'}`, `{a:1}`, `{"a":1,}`, `[1,]`, `{"a" 1}`, `"\x"`,
	strings.Repeat("[", 129) + strings.Repeat("]", 129), strings.Repeat(`{"a":`, 200) + "1" + strings.Repeat("}", 200),
	"null", "true", "0", `"string"`, "[]", `{"tools":null}`, `{"tools":[null]}`, `{"tools":{}}`,
	`{"tools":[{"name":""}]}`, `{"tools":[{"name":"a"},{"name":"a"}]}`, `{"pages":"x"}`, `{"pages":[1]}`,
	`{"json":5}`, `{"lock":"{"}`, `{"lock":{},"now":"yesterday"}`, `{"old":{},"new":{}}`,
}

// TestMalformedIdentical: every malformed request to every op (listed or
// not) gets the same envelope from the three builds.
func TestMalformedIdentical(t *testing.T) {
	ops := append([]string{"version", "rules", "no_such_op", ""}, gen.Known...)
	var calls []call
	for _, op := range ops {
		for i, m := range malformed {
			calls = append(calls, call{fmt.Sprintf("%s/malformed[%d]", op, i), op, []byte(m)})
		}
	}
	for i, a := range ask(t, calls) {
		if msg := a.same(); msg != "" {
			t.Errorf("%s %q:%s", calls[i].name, calls[i].req, msg)
		}
	}
}

// mixed is a set of calls for the concurrency and memory tests: some
// answers, some errors, of several sizes.
func mixed(t testing.TB) []call {
	g := newGen(t)
	calls := []call{
		{"version", "version", []byte("{}")},
		{"long unknown op", strings.Repeat("x", 1000), []byte("{}")},
	}
	for seed := range uint64(30) {
		c := g.Case(1000 + seed)
		calls = append(calls, call{fmt.Sprintf("seed %d", 1000+seed), c.Op, c.Request})
	}
	return calls
}

// TestConcurrentWasm: 8 goroutines × 1,000 calls on the pooled host, each
// answer the native one; the pool grows to at most one instance per caller.
func TestConcurrentWasm(t *testing.T) {
	calls := mixed(t)
	want := make([][]byte, len(calls))
	for i, c := range calls {
		want[i] = core.Call(c.op, c.req)
	}
	ctx := context.Background()
	h, err := wasmhost.New(ctx, release.wasm, wasmhost.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				k := (g*7 + i) % len(calls)
				got, err := h.Call(ctx, calls[k].op, calls[k].req)
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(got, want[k]) {
					errs <- fmt.Errorf("goroutine %d call %d (%s): got %s want %s", g, i, calls[k].name, clip(got), clip(want[k]))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := h.Idle(); n < 1 || n > 8 {
		t.Errorf("pool holds %d instances after 8 concurrent callers", n)
	}
}

// TestConcurrentC: 8 threads × 1,000 calls on the library, each answer the
// one the harness got single-threaded, which is the native one.
func TestConcurrentC(t *testing.T) {
	calls := mixed(t)
	out, err := chost.Run(release.set.Harness, release.set.Lib, requests(calls), "threads", "8", "1000")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := chost.ReadFrames(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(ref) != len(calls) {
		t.Fatalf("%d reference answers for %d calls", len(ref), len(calls))
	}
	for i, c := range calls {
		if want := core.Call(c.op, c.req); !bytes.Equal(ref[i], want) {
			t.Errorf("%s: C %s, native %s", c.name, clip(ref[i]), clip(want))
		}
	}
}

// TestRSSBoundedC: 100,000 calls on the library grow the process by less
// than 16 MiB. A leaked response of the ~1 KB answers here would be 100 MB.
func TestRSSBoundedC(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 calls")
	}
	out, err := chost.Run(release.set.Harness, release.set.Lib, requests(mixed(t)), "rss", "100000")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`rss_before_kb=(\d+) rss_after_kb=(\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("harness said %q", out)
	}
	before, _ := strconv.Atoi(string(m[1]))
	after, _ := strconv.Atoi(string(m[2]))
	t.Logf("RSS %d KiB before, %d KiB after 100,000 calls", before, after)
	if after-before > 16<<10 {
		t.Errorf("RSS grew by %d KiB over 100,000 calls", after-before)
	}
}

// TestOverCap: a request one byte over the cap gets, from both builds,
// exactly the native core's answer, without being read: the C harness
// hands the library unreadable memory (a read would crash it) and the wasm
// host hands the module an address past the end of its memory (a read
// would trap). For an op that does not exist the answer is unknown_op.
// Through ABI 2 the request and its attachments together are one byte over.
func TestOverCap(t *testing.T) {
	over := make([]byte, wasmhost.MaxRequest+1)
	half := len(over) / 2
	harness := func(mode, op string) []byte {
		out, err := chost.Run(release.set.Harness, release.set.Lib, nil, mode, op)
		if err != nil {
			t.Fatal(err)
		}
		c, err := chost.ReadFrames(out)
		if err != nil || len(c) != 1 {
			t.Fatalf("harness %s: %q %v", mode, out, err)
		}
		return c[0]
	}
	for _, op := range []string{"canonicalize", "no_such_op"} {
		var a answers
		var err error
		a.native, a.nativeRaw = core.Call(op, over), core.CallRaw(op, over[:half], over[half:])
		if a.wasm, err = release.host.Call(context.Background(), op, over); err != nil {
			t.Fatal(err)
		}
		if a.wasmRaw, err = release.host.CallRaw(context.Background(), op, over[:half], over[half:]); err != nil {
			t.Fatal(err)
		}
		if a.wasmOwnHash, err = release.ownHash.CallRaw(context.Background(), op, over[:half], over[half:]); err != nil {
			t.Fatal(err)
		}
		a.c, a.cRaw = harness("overcap", op), harness("overcap_raw", op)
		if !bytes.Equal(a.nativeRaw, a.wasmRaw) || !bytes.Equal(a.nativeRaw, a.wasmOwnHash) || !bytes.Equal(a.nativeRaw, a.cRaw) {
			t.Errorf("%s through ABI 2: native %s, wasm %s, wasm (own SHA-256) %s, C %s", op, a.nativeRaw, a.wasmRaw, a.wasmOwnHash, a.cRaw)
		}
		a.nativeRaw, a.wasmRaw, a.wasmOwnHash, a.cRaw = a.native, a.native, a.native, a.native
		if msg := a.same(); msg != "" {
			t.Errorf("%s:%s", op, msg)
		}
		t.Logf("%s: %s", op, a.wasm)
	}
	for _, resp := range [][]byte{core.Call("canonicalize", over), core.CallRaw("canonicalize", over[:half], over[half:])} {
		if code := envelopeCode(resp); code != "input_too_large" {
			t.Errorf("canonicalize of an over-cap request: %s", code)
		}
	}
}

func requests(calls []call) []chost.Request {
	reqs := make([]chost.Request, len(calls))
	for i, c := range calls {
		reqs[i] = chost.Request{Op: c.op, Body: c.req}
	}
	return reqs
}
