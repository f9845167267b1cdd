package wasmhost

import (
	"context"
	"crypto/sha256"
	"strings"
	"sync/atomic"
	"testing"
)

// hashOnce is a request whose answer needs SHA-256.
const hashOnce = `{"json":"{\"a\":1}"}`

// TestHostSHA256Used: with a host that answers, the module hashes through
// it (far more than the known-answer test's calls); with one that answers
// 0 it asks exactly once and hashes by itself; the answers are the same.
func TestHostSHA256Used(t *testing.T) {
	var hostCalls, noneCalls atomic.Int64
	ctx := context.Background()
	answers := map[string]string{}
	for name, f := range map[string]func([]byte) ([32]byte, bool){
		"host": func(b []byte) ([32]byte, bool) { hostCalls.Add(1); return sha256.Sum256(b), true },
		"none": func([]byte) ([32]byte, bool) { noneCalls.Add(1); return [32]byte{}, false },
	} {
		h, err := New(ctx, testWasm, Config{CacheRoot: cacheRoot, SHA256: f})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close(ctx)
		for range 5 {
			resp, err := h.Call(ctx, "canonicalize", []byte(hashOnce))
			if err != nil {
				t.Fatal(err)
			}
			answers[name] = string(resp)
		}
	}
	if answers["host"] != answers["none"] || !strings.Contains(answers["host"], `"sha256":"015abd7f`) {
		t.Errorf("host SHA-256: %s\nmodule's own: %s", answers["host"], answers["none"])
	}
	// The known-answer test makes 10 calls; 5 canonicalize calls make 5 more.
	if n := hostCalls.Load(); n != 15 {
		t.Errorf("the host's SHA-256 was called %d times, want 10 for the known-answer test and 5 for the calls", n)
	}
	if n := noneCalls.Load(); n != 1 {
		t.Errorf("a host without SHA-256 was asked %d times, want once", n)
	}
}

// TestHostSHA256Wrong: a host whose SHA-256 answers wrong — on the first
// probe, or only for some lengths — gets a module that refuses every call
// with an internal error naming the import, instead of wrong hashes.
func TestHostSHA256Wrong(t *testing.T) {
	ctx := context.Background()
	for name, f := range map[string]func([]byte) ([32]byte, bool){
		"zeros":           func([]byte) ([32]byte, bool) { return [32]byte{}, true },
		"wrong past 64":   func(b []byte) ([32]byte, bool) { return sha256.Sum256(b[:min(len(b), 64)]), true },
		"one bit flipped": func(b []byte) ([32]byte, bool) { s := sha256.Sum256(b); s[31] ^= 1; return s, true },
	} {
		h, err := New(ctx, testWasm, Config{CacheRoot: cacheRoot, SHA256: f})
		if err != nil {
			t.Fatalf("%s: the module must start (and refuse calls): %v", name, err)
		}
		for _, op := range []string{"canonicalize", "version"} {
			resp, err := h.Call(ctx, op, []byte(hashOnce))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(resp), `{"error":{"code":"internal","message":"the host's crawlcheck.sha256 gave`) {
				t.Errorf("%s: %s: %s", name, op, resp)
			}
		}
		resp, _ := h.CallRaw(ctx, "canonicalize", []byte(hashOnce), []byte{})
		if !strings.Contains(string(resp), "known-answer test") {
			t.Errorf("%s: call_raw: %s", name, resp)
		}
		t.Logf("%s: %s", name, resp)
		h.Close(ctx)
	}
}
