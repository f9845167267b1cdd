package scan

import "testing"

// freshFloor is the recall at medium on testdata/scan-public/fresh.json.
// The corpus was assembled before issue 38 round 3 and measured once when
// round 3 was done (125 of 185, 67.6%: docs/scan.md, "The fresh held-out
// corpus"); its misses were then read, and the structural rules of round 4
// were written from them, so it is development now and its floor only keeps
// what is caught (175 of 185 after round 4). The honest figure of round 4 is
// TestPublicAttackCorpusHoldout4's.
const freshFloor = 0.945 // 175 of 185

// holdout4Floor is the recall at medium on testdata/scan-public/holdout4.json,
// a second fresh corpus committed before any rule of round 4 and measured
// once, when round 4's rules were done: 8 of 11, the same 8 the rules before
// round 4 catch (docs/scan.md, "Round 4").
const holdout4Floor = 0.72 // 8 of 11

// TestPublicAttackCorpusFresh scores the scan on the round-3 fresh corpus,
// development since round 4, by class; with -v it names each miss by id.
func TestPublicAttackCorpusFresh(t *testing.T) {
	scoreCorpus(t, "fresh.json", freshFloor)
}

// TestPublicAttackCorpusHoldout4 scores the scan on the round-4 hold-out, by
// class. A miss is named by its id only, so that reading the test's output
// does not turn the hold-out into development data.
func TestPublicAttackCorpusHoldout4(t *testing.T) {
	scoreCorpus(t, "holdout4.json", holdout4Floor)
}

// scoreCorpus logs the recall at medium of testdata/scan-public/file by
// class, and fails below floor.
func scoreCorpus(t *testing.T, file string, floor float64) {
	t.Helper()
	byClass, all := scoreCases(t, readCorpus(t, "scan-public", file), func(c corpusCase, r Result) {
		t.Logf("missed (%s) %s", r.Severity, c.ID)
	})
	for _, c := range sortedClasses(byClass) {
		t.Logf("%s %-26s %3d of %3d", file, c, byClass[c].caught, byClass[c].total)
	}
	recall := all.recall()
	t.Logf("%s all: %d of %d (%.1f%%)", file, all.caught, all.total, 100*recall)
	if recall < floor {
		t.Errorf("%s: recall at medium %.3f is below the floor %.3f", file, recall, floor)
	}
}
