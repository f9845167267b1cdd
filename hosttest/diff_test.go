package hosttest

import (
	"flag"
	"fmt"
	"testing"
)

var (
	diffN    = flag.Int("diff.n", 10000, "differential cases to run")
	diffSeed = flag.Uint64("diff.seed", 1, "seed of the first differential case; case i has seed diff.seed+i")
)

// TestDifferential sends generated calls to the three builds and requires
// the same bytes from each, errors included. A failure prints the case's
// seed: -diff.seed=S -diff.n=1 replays it alone.
func TestDifferential(t *testing.T) {
	g := newGen(t)
	t.Logf("ops exercised: %v (plus version and unknown ops)", g.Ops())
	const batch = 500
	failures := 0
	codes := map[string]int{}
	for start := 0; start < *diffN && failures < 10; start += batch {
		n := min(batch, *diffN-start)
		calls := make([]call, n)
		for i := range calls {
			seed := *diffSeed + uint64(start+i)
			c := g.Case(seed)
			calls[i] = call{fmt.Sprintf("seed %d", seed), c.Op, c.Request}
		}
		for i, a := range ask(t, calls) {
			codes[envelopeCode(a.native)]++
			if envelopeCode(a.native) == "internal" {
				t.Errorf("%s: internal (a recovered panic is a bug): %s", calls[i].name, clip(a.native))
			}
			if msg := a.same(); msg != "" {
				failures++
				t.Errorf("%s (replay: go test ./hosttest -run TestDifferential -diff.seed=%d -diff.n=1): op %q request %s%s",
					calls[i].name, *diffSeed+uint64(start+i), calls[i].op, clip(calls[i].req), msg)
			}
		}
	}
	t.Logf("%d cases from seed %d; answers by code: %v", *diffN, *diffSeed, codes)
}
