package scan

import "testing"

// The recall at medium the scan must keep on each half of
// testdata/scan-public/cases.json (public poisoned tools from sources other
// than ../shared/scan-corpus, issue 38 round 2): the figures measured when
// the rules were last changed, so a change that loses a caught attack fails.
// The development half shaped the rules of round 2; the held-out half (whole
// source files) shaped none of them and was the honest figure of round 2
// (0.73). Measured three times by then, it was development in round 3 (its
// misses were read), so its floor now only keeps what was caught; the honest
// figure of round 3 is TestPublicAttackCorpusFresh's.
const (
	publicDevFloor     = 0.97
	publicHeldoutFloor = 0.95
)

// TestPublicAttackCorpus scores the scan on both halves of the public
// corpus, by class. With -v it shows what each missed development case
// gave; a missed held-out case is named by id only, so that reading the
// test's output does not turn the held-out half into a development one.
func TestPublicAttackCorpus(t *testing.T) {
	bySplit := map[string][]corpusCase{}
	for _, c := range readCorpus(t, "scan-public", "cases.json") {
		bySplit[c.Split] = append(bySplit[c.Split], c)
	}
	for split, floor := range map[string]float64{"development": publicDevFloor, "heldout": publicHeldoutFloor} {
		if len(bySplit[split]) == 0 {
			t.Fatalf("no %s cases", split)
		}
		byClass, all := scoreCases(t, bySplit[split], func(c corpusCase, r Result) {
			if split == "development" {
				t.Logf("missed (%s) %s: %s", r.Severity, c.ID, r.Value())
			} else {
				t.Logf("missed (%s) %s", r.Severity, c.ID)
			}
		})
		for _, c := range sortedClasses(byClass) {
			s := byClass[c]
			t.Logf("%-11s %-26s %2d of %2d", split, c, s.caught, s.total)
		}
		recall := all.recall()
		t.Logf("%-11s all: %d of %d (%.1f%%)", split, all.caught, all.total, 100*recall)
		if recall < floor {
			t.Errorf("%s: recall at medium %.3f is below the floor %.3f", split, recall, floor)
		}
	}
}
