package scan

import (
	"encoding/json"
	"os"
	"sort"
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
	if recall := scoreAttacks(t, "late.json", 0); recall < lateFloor {
		t.Errorf("recall at medium %.3f is below the floor %.3f", recall, lateFloor)
	}
}

// scoreAttacks scores the scan on one file of testdata/scan-attacks, fails
// when a class is below floor, and answers the recall of all classes.
func scoreAttacks(t *testing.T, file string, floor float64) float64 {
	b, err := os.ReadFile(coretest.RepoPath(t, "testdata", "scan-attacks", file))
	if err != nil {
		t.Fatal(err)
	}
	var corpus struct {
		Cases []struct {
			ID, Class string
			Tools     json.RawMessage
		}
	}
	if err := json.Unmarshal(b, &corpus); err != nil {
		t.Fatal(err)
	}
	byClass := map[string][2]int{}
	caught := 0
	for _, c := range corpus.Cases {
		r := Run(coretest.Hashed(t, string(c.Tools)), nil)
		n := byClass[c.Class]
		n[1]++
		if r.Severity >= Medium {
			n[0]++
			caught++
		} else if testing.Verbose() {
			t.Logf("missed (%s) %s: %s", r.Severity, c.ID, r.Value())
		}
		byClass[c.Class] = n
	}
	classes := make([]string, 0, len(byClass))
	for c := range byClass {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for _, c := range classes {
		n := byClass[c]
		t.Logf("%-28s %2d of %2d (%.0f%%)", c, n[0], n[1], 100*float64(n[0])/float64(n[1]))
		if float64(n[0]) < floor*float64(n[1]) {
			t.Errorf("class %s: %d of %d at medium, below %.0f%%", c, n[0], n[1], 100*floor)
		}
	}
	recall := float64(caught) / float64(len(corpus.Cases))
	t.Logf("all: %d of %d (%.1f%%)", caught, len(corpus.Cases), 100*recall)
	return recall
}

// late2Floor is the recall at medium, all classes together, on
// testdata/scan-attacks/late2.json: lists written after the second round
// of issue 38's rules (which late.json had been used to shape), never
// tuned against; the figure measured when they were written (3 of 20),
// and 6 of 20 since the structural rules of issue 38 round 2, written from
// the public corpus's development half (not from these lists).
const late2Floor = 0.3

// TestAttackCorpusLate2 scores the scan on the lists written last.
func TestAttackCorpusLate2(t *testing.T) {
	if recall := scoreAttacks(t, "late2.json", 0); recall < late2Floor {
		t.Errorf("recall at medium %.3f is below the floor %.3f", recall, late2Floor)
	}
}
