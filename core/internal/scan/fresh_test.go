package scan

import (
	"encoding/json"
	"os"
	"sort"
	"testing"

	"github.com/crawlcheck/verifier/core/internal/coretest"
)

// freshFloor is the recall at medium measured, once, on
// testdata/scan-public/fresh.json when the rules of issue 38 round 3 were
// done: a later rule change that loses a caught case fails here. The corpus
// was assembled and committed before any rule of round 3 was written and
// shaped none of them (docs/scan.md, "The fresh held-out corpus").
const freshFloor = 0.675 // 125 of 185

// TestPublicAttackCorpusFresh scores the scan on the fresh held-out corpus,
// by class. A missed case is named by its id only, with -v, so that reading
// the test's output does not turn the held-out corpus into a development one.
func TestPublicAttackCorpusFresh(t *testing.T) {
	b, err := os.ReadFile(coretest.RepoPath(t, "testdata", "scan-public", "fresh.json"))
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
	if len(corpus.Cases) == 0 {
		t.Fatal("no cases")
	}
	type score struct{ caught, total int }
	byClass := map[string]score{}
	all := score{}
	for _, c := range corpus.Cases {
		r := Run(coretest.Hashed(t, string(c.Tools)), nil)
		s := byClass[c.Class]
		s.total++
		all.total++
		if r.Severity >= Medium {
			s.caught++
			all.caught++
		} else if testing.Verbose() {
			t.Logf("missed (%s) %s", r.Severity, c.ID)
		}
		byClass[c.Class] = s
	}
	classes := make([]string, 0, len(byClass))
	for c := range byClass {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for _, c := range classes {
		t.Logf("fresh %-26s %3d of %3d", c, byClass[c].caught, byClass[c].total)
	}
	recall := float64(all.caught) / float64(all.total)
	t.Logf("fresh all: %d of %d (%.1f%%)", all.caught, all.total, 100*recall)
	if recall < freshFloor {
		t.Errorf("recall at medium %.3f is below the floor %.3f", recall, freshFloor)
	}
}
