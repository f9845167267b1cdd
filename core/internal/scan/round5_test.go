package scan

import "testing"

// round5DevFloor and round5HeldoutFloor are the recall at medium on the two
// halves of testdata/scan-public/round5.json, a corpus of scanner test suites'
// and demo servers' poisoned tools assembled for issue 38 round 5 and split by
// source file before any rule of the round was written (docs/scan.md,
// "Round 5"). The development half's misses were read and rules written from
// them; the held-out half was measured once, when the round was done.
// Before any rule of round 5: development 17 of 27, held-out 35 of 37;
// after: development 25 of 27, and held-out 35 of 37, measured once when the
// round was done (the same two missed before and after).
const (
	round5DevFloor     = 0.92 // 25 of 27
	round5HeldoutFloor = 0.94 // 35 of 37
)

// TestPublicAttackCorpusRound5 scores the scan on round5.json, each half by
// class. A development miss is named with its tool; a held-out miss by its id
// only, so that reading the test's output does not make the hold-out
// development data.
func TestPublicAttackCorpusRound5(t *testing.T) {
	halves := map[string][]corpusCase{}
	for _, c := range readCorpus(t, "scan-public", "round5.json") {
		halves[c.Split] = append(halves[c.Split], c)
	}
	for _, h := range []struct {
		split string
		floor float64
	}{{"development", round5DevFloor}, {"heldout", round5HeldoutFloor}} {
		cases := halves[h.split]
		if len(cases) == 0 {
			t.Fatalf("round5.json: no %s cases", h.split)
		}
		byClass, all := scoreCases(t, cases, func(c corpusCase, r Result) {
			if h.split == "heldout" {
				t.Logf("held-out missed %s", c.ID)
				return
			}
			t.Logf("development missed (%s) %s %s", r.Severity, c.ID, c.Tool)
		})
		for _, c := range sortedClasses(byClass) {
			t.Logf("round5 %s %-26s %3d of %3d", h.split, c, byClass[c].caught, byClass[c].total)
		}
		recall := all.recall()
		t.Logf("round5 %s all: %d of %d (%.1f%%)", h.split, all.caught, all.total, 100*recall)
		if recall < h.floor {
			t.Errorf("round5.json %s: recall at medium %.3f is below the floor %.3f", h.split, recall, h.floor)
		}
	}
}
