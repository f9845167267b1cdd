package hosttest

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/hosttest/chost"
	"github.com/crawlcheck/verifier/hosttest/wasmhost"
)

// TestPanicRecovered uses the crawlcheck_testpanic build, whose core has an
// op that panics (test_panic) and whose ABI layers panic themselves on
// test_abi_panic. Each panic must come back as an "internal" envelope, the
// same from both builds where the core panicked, and the host must go on:
// the next call on the same instance or process answers normally.
func TestPanicRecovered(t *testing.T) {
	set, err := tagged()
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(set.WASM)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := wasmhost.New(ctx, wasm, wasmhost.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	c, err := chost.Start(set.Harness, set.Lib)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}()

	version := core.Call("version", []byte("{}"))
	for _, op := range []string{"test_panic", "test_abi_panic"} {
		for round := range 2 { // twice: the first panic left the host usable
			w, err := h.Call(ctx, op, []byte("{}"))
			if err != nil {
				t.Fatalf("wasm %s: %v", op, err)
			}
			cr, err := c.Call(op, []byte("{}"))
			if err != nil {
				t.Fatalf("C %s: %v", op, err)
			}
			for name, resp := range map[string][]byte{"wasm": w, "C": cr} {
				if envelopeCode(resp) != "internal" {
					t.Errorf("%s %s round %d: %s", name, op, round, resp)
				}
			}
			if op == "test_panic" && !bytes.Equal(w, cr) {
				t.Errorf("a core panic answered differently: wasm %s, C %s", w, cr)
			}
			t.Logf("%s: %s", op, w)
			if w, err := h.Call(ctx, "version", []byte("{}")); err != nil || !bytes.Equal(w, version) {
				t.Errorf("wasm after %s: %s %v", op, w, err)
			}
			if cr, err := c.Call("version", []byte("{}")); err != nil || !bytes.Equal(cr, version) {
				t.Errorf("C after %s: %s %v", op, cr, err)
			}
		}
	}
	if n := h.Idle(); n != 1 {
		t.Errorf("%d instances in the pool; the panics should not have cost the one instance", n)
	}
}
