package scan

import (
	"testing"

	"github.com/crawlcheck/verifier/core/internal/coretest"
)

// attackFloor is the share of each class of testdata/scan-attacks (the
// project's own poisoned lists, written after the public literature's
// classes, issue 38) the scan must rate medium or higher: the issue's
// target, 85%, for every class, so a rule change that loses a class fails.
const attackFloor = 0.85

// TestAttackCorpus scores the scan on testdata/scan-attacks/cases.json by
// class and fails when a class falls below attackFloor. Run with -v to see
// what each missed case gave.
func TestAttackCorpus(t *testing.T) {
	scoreAttacks(t, "cases.json", attackFloor)
}

// lateFloor is the share of testdata/scan-attacks/late.json, lists written
// after the rules were frozen and never tuned against, the scan rates
// medium or higher, all classes together: what was measured when they were
// written (issue 38: 3 of 20). The second round of rules was then shaped
// on them (18 of 20 since), so they no longer measure generalisation:
// late2.json does. The floor is today's figure, so a change that loses one
// fails.
const lateFloor = 0.9

// TestAttackCorpusLate scores the scan on the lists written after the
// rules: how far they generalise.
func TestAttackCorpusLate(t *testing.T) {
	scoreAtLeast(t, "late.json", lateFloor)
}

// scoreAtLeast scores the scan on one file of testdata/scan-attacks and
// fails when the recall of all classes together is below floor (a share; a
// figure measured as k of n passes at exactly k/n).
func scoreAtLeast(t *testing.T, file string, floor float64) {
	t.Helper()
	if recall := scoreAttacks(t, file, 0); recall < floor-1e-9 {
		t.Errorf("recall at medium %.3f is below the floor %.3f", recall, floor)
	}
}

// scoreAttacks scores the scan on one file of testdata/scan-attacks, fails
// when a class is below floor, and answers the recall of all classes.
func scoreAttacks(t *testing.T, file string, floor float64) float64 {
	t.Helper()
	byClass, all := scoreCases(t, readCorpus(t, "scan-attacks", file), func(c corpusCase, r Result) {
		t.Logf("missed (%s) %s: %s", r.Severity, c.ID, r.Value())
	})
	for _, c := range sortedClasses(byClass) {
		n := byClass[c]
		t.Logf("%-28s %2d of %2d (%.0f%%)", c, n.caught, n.total, 100*n.recall())
		if float64(n.caught) < floor*float64(n.total) {
			t.Errorf("class %s: %d of %d at medium, below %.0f%%", c, n.caught, n.total, 100*floor)
		}
	}
	recall := all.recall()
	t.Logf("all: %d of %d (%.1f%%)", all.caught, all.total, 100*recall)
	return recall
}

// late2Floor is the recall at medium, all classes together, on
// testdata/scan-attacks/late2.json: lists written after the second round
// of issue 38's rules (which late.json had been used to shape), never
// tuned against; the figure measured when they were written (3 of 20),
// and 6 of 20 since the structural rules of issue 38 round 2, written from
// the public corpus's development half (not from these lists); 8 of 20
// after round 5 (whose rules were not written from them either); 10 of 20
// after round 6, whose rules were written from late3.json and three probe
// sets of our own, with late2's texts left unread.
const late2Floor = 0.5

// TestAttackCorpusLate2 scores the scan on the lists written last.
func TestAttackCorpusLate2(t *testing.T) {
	scoreAtLeast(t, "late2.json", late2Floor)
}

// late3Floor is the recall at medium on testdata/scan-attacks/late3.json:
// twelve lists written after all of issue 38 round 5's rules, in shapes
// chosen to differ from them; 1 of 12 when they were written (docs/scan.md,
// "Round 5"). Round 6 read every miss and generalised their structures, so
// they are development data now: 12 of 12 is what the rules were shaped to
// reach, not a measure of transfer (late2.json, never read, is one).
const late3Floor = 1.0

// TestAttackCorpusLate3 scores the scan on the lists written after round 5.
func TestAttackCorpusLate3(t *testing.T) {
	scoreAtLeast(t, "late3.json", late3Floor)
}

// probes6Floor is the recall at medium on testdata/scan-attacks/probes6.json:
// the three probe sets of issue 38 round 6, each scored once when written
// (9 of 32, 7 of 30, 13 of 30: docs/scan.md, "Round 6") and then used to
// generalise the rules, so development data: 87 of 92 since. The floor is
// today's figure, so a change that loses one fails.
const probes6Floor = 0.94

// TestAttackCorpusProbes6 scores the scan on round 6's probe sets.
func TestAttackCorpusProbes6(t *testing.T) {
	scoreAtLeast(t, "probes6.json", probes6Floor)
}

// late4Floor is the recall at medium on testdata/scan-attacks/late4.json:
// 24 lists written after every rule of issue 38 round 6 was committed, in
// shapes chosen to differ from them, never tuned against (docs/scan.md,
// "Round 6"): 6 of 24 when they were written. The floor is that figure, so a
// change that loses one fails; a change shaped on them would spend them.
const late4Floor = 0.25

// TestAttackCorpusLate4 scores the scan on the lists written after round 6.
func TestAttackCorpusLate4(t *testing.T) {
	scoreAtLeast(t, "late4.json", late4Floor)
}

// late5Floor is the recall at medium on testdata/scan-attacks/late5.json:
// 60 lists written blind on the day of issue 38 round 7 by an engineer who
// never saw the rules, measured once when written (38 of 60 on round 5's
// rules, 41 of 60 on round 6's) and then used as development data by round
// 7, whose patterns were written from its 19 misses (docs/scan.md, "Round
// 7"): 60 of 60 since, development recall, not transfer. The floor is
// today's figure, so a change that loses one fails.
const late5Floor = 1.0

// TestAttackCorpusLate5 scores the scan on the blind set of round 7.
func TestAttackCorpusLate5(t *testing.T) {
	scoreAtLeast(t, "late5.json", late5Floor)
}

// late5BenignMedium is how many of late5.json's 40 benign lists the scan
// rates medium today (none may be high): the blind set's clean side. It
// gave 3 of 40 when measured as written, single-tool lists whose text names
// a sibling tool; with the siblings on the list (as a real server has them)
// it gives none. A rule that flags one fails.
const late5BenignMedium = 0

// TestAttackCorpusLate5Benign scans the "benign" member of late5.json: it
// reports how many lists are rated medium and high, and fails on any high
// or on more at medium than late5BenignMedium.
func TestAttackCorpusLate5Benign(t *testing.T) {
	scoreBenign(t, "late5.json", late5BenignMedium)
}

// scoreBenign scans the "benign" member of one file of testdata/scan-attacks:
// it reports how many lists are rated medium and high, and fails on any high
// or on more at medium than ceiling.
func scoreBenign(t *testing.T, file string, ceiling int) {
	t.Helper()
	benign := readBenign(t, "scan-attacks", file)
	medium, high := 0, 0
	for _, c := range benign {
		r := Run(coretest.Hashed(t, string(c.Tools)), nil)
		switch {
		case r.Severity >= High:
			high++
			t.Errorf("benign %s rated high: %s", c.ID, r.Value())
		case r.Severity >= Medium:
			medium++
			t.Logf("benign %s rated medium: %s", c.ID, r.Value())
		}
	}
	t.Logf("benign: %d of %d at medium, %d high", medium, len(benign), high)
	if medium > ceiling {
		t.Errorf("%d benign lists at medium, more than %d", medium, ceiling)
	}
}

// probes7Floor is the recall at medium on testdata/scan-attacks/probes7.json:
// twelve lists written by round 7's engineer after the round's first
// patterns, in other words for the same classes, scored once when written
// (2 of 12: the round's transfer check on its own wording, docs/scan.md,
// "Round 7"); eleven patterns were then generalised from its misses, so it
// is development data: 12 of 12 since. The floor is today's figure, so a
// change that loses one fails.
const probes7Floor = 1.0

// TestAttackCorpusProbes7 scores the scan on round 7's probe set.
func TestAttackCorpusProbes7(t *testing.T) {
	scoreAtLeast(t, "probes7.json", probes7Floor)
}

// late6Floor is the recall at medium on testdata/scan-attacks/late6.json:
// 60 lists written blind after round 7's patterns by an engineer who never
// saw the rules, the corpora or the earlier blind sets, a third of them
// with the payload in a parameter's description, default, enum or title,
// measured once when written (32 of 60 on round 5's rules, 35 on round
// 6's, 37 on round 7's). No rule has been written from it: it measures
// transfer, and its figure is the floor, so a change that loses one fails.
const late6Floor = 37.0 / 60

// TestAttackCorpusLate6 scores the scan on the blind set written after
// round 7.
func TestAttackCorpusLate6(t *testing.T) {
	scoreAtLeast(t, "late6.json", late6Floor)
}

// late6BenignMedium is how many of late6.json's 40 benign lists (siblings
// named by a text are on its list) the scan rates medium when written: one,
// a firewall rule's "0.0.0.0/0 is allowed only for ports 80 and 443"
// (docs/scan.md, "Round 7", measured after).
const late6BenignMedium = 1

// TestAttackCorpusLate6Benign scans the "benign" member of late6.json.
func TestAttackCorpusLate6Benign(t *testing.T) {
	scoreBenign(t, "late6.json", late6BenignMedium)
}
