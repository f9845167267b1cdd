package hosttest

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/crawlcheck/verifier/hosttest/vectors"
)

// The attacker's tools, kept (issue 10, item 11): requests mutated from
// every vector in testdata go to native Go, wazero and the C library, and
// each must answer the same bytes, and never internal (a panic the layers
// recovered is a bug, whatever the input). make test runs a few mutations a
// vector; make attack runs many (with TestDifferential at length and the
// lockfile bit flips of core).

var abiFuzzN = flag.Int("abifuzz.n", 2, "mutations of each testdata vector sent to the three builds")

// TestABIFuzz: mutated requests, the same answer from every build, no
// internal.
func TestABIFuzz(t *testing.T) {
	vs, err := vectors.Load("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	ops := listedOps(t)
	var calls []call
	for i, v := range vs {
		r := rand.New(rand.NewPCG(uint64(i), 10))
		for k := range *abiFuzzN {
			op, req := v.Op, mutate(r, v.Request)
			if r.IntN(20) == 0 {
				op = ops[r.IntN(len(ops))] // the request of one op sent to another
			}
			calls = append(calls, call{fmt.Sprintf("%s mutation %d", v.Name, k), op, req})
		}
	}
	codes := map[string]int{}
	for start := 0; start < len(calls); start += 500 {
		batch := calls[start:min(start+500, len(calls))]
		for i, a := range ask(t, batch) {
			code := envelopeCode(a.native)
			codes[code]++
			if msg := a.same(); msg != "" {
				t.Errorf("%s: op %q request %s%s", batch[i].name, batch[i].op, clip(batch[i].req), msg)
			}
			if code == "internal" {
				t.Errorf("%s: internal: %s (request %s)", batch[i].name, clip(a.native), clip(batch[i].req))
			}
		}
	}
	t.Logf("%d mutated calls; answers by code: %v", len(calls), codes)
}

// mutate damages a request the ways a fuzzer does: bit flips, bytes
// deleted, inserted or repeated, a cut, a splice of structural bytes.
func mutate(r *rand.Rand, in []byte) []byte {
	b := append([]byte(nil), in...)
	for range 1 + r.IntN(3) {
		if len(b) == 0 {
			b = append(b, byte(r.IntN(256)))
			continue
		}
		i := r.IntN(len(b))
		switch r.IntN(7) {
		case 0:
			b[i] ^= 1 << r.IntN(8)
		case 1:
			b = append(b[:i], b[i+1:]...)
		case 2:
			b = append(b[:i], append([]byte{byte(r.IntN(256))}, b[i:]...)...)
		case 3:
			j := min(len(b), i+1+r.IntN(32))
			b = append(b[:j], append(append([]byte(nil), b[i:j]...), b[j:]...)...)
		case 4:
			b = b[:i]
		case 5:
			tokens := []string{`{`, `}`, `[`, `]`, `"`, `,`, `:`, `\`, `\u`, `null`, `"\ud800"`, `1e999`, "\xff", `{"$raw":0}`}
			b = append(b[:i], append([]byte(tokens[r.IntN(len(tokens))]), b[i:]...)...)
		case 6:
			b[i] = "0123456789abcdef\"{}[],:"[r.IntN(23)]
		}
	}
	return b
}
