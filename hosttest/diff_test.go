package hosttest

import (
	"bytes"
	"flag"
	"fmt"
	"testing"
)

var (
	diffN    = flag.Int("diff.n", 10000, "differential cases to run")
	diffSeed = flag.Uint64("diff.seed", 1, "seed of the first differential case; case i has seed diff.seed+i")
)

// statefulOps are the ops that may use state an earlier call left (the
// core's lockfile cache, the walk memo of tools/list pages), directly or
// through a receipt's inputs.
var statefulOps = map[string]bool{"lock_check": true, "continuity_check": true, "guard": true,
	"replay_decision": true, "sign_receipt": true, "continuity_handoff": true, "hash_tools": true,
	"make_lock": true, "diff": true, "approve": true, "convert_lock": true, "scan": true, "session_step": true}

// TestDifferential sends generated calls to the three builds and requires
// the same bytes from each, errors included, and asks the cases of the ops
// that keep state a second time. A failure prints the case's
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
		first := ask(t, calls)
		for i, a := range first {
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
		// Again, in reverse order, for the ops that keep state between
		// calls (the lockfile cache, the walk memo): warm, they must answer as they did cold.
		var again []call
		var was []answers
		for i := len(calls) - 1; i >= 0; i-- {
			if statefulOps[calls[i].op] {
				again, was = append(again, calls[i]), append(was, first[i])
			}
		}
		for i, a := range ask(t, again) {
			if msg := a.same(); msg != "" || !bytes.Equal(a.native, was[i].native) {
				failures++
				t.Errorf("%s asked again: op %q request %s%s\n  first: %s\n  again: %s",
					again[i].name, again[i].op, clip(again[i].req), msg, clip(was[i].native), clip(a.native))
			}
		}
	}
	t.Logf("%d cases from seed %d; answers by code: %v", *diffN, *diffSeed, codes)
}
