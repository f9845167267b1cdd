package scan

import (
	"encoding/json"
	"os"
	"sort"
	"testing"

	"github.com/crawlcheck/verifier/core/internal/coretest"
)

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
	b, err := os.ReadFile(coretest.RepoPath(t, "testdata", "scan-public", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var corpus struct {
		Cases []struct {
			ID, Class, Split string
			Tools            json.RawMessage
		}
	}
	if err := json.Unmarshal(b, &corpus); err != nil {
		t.Fatal(err)
	}
	type score struct{ caught, total int }
	bySplit := map[string]map[string]score{}
	for _, c := range corpus.Cases {
		r := Run(coretest.Hashed(t, string(c.Tools)), nil)
		if bySplit[c.Split] == nil {
			bySplit[c.Split] = map[string]score{}
		}
		s := bySplit[c.Split][c.Class]
		s.total++
		if r.Severity >= Medium {
			s.caught++
		} else if testing.Verbose() {
			if c.Split == "development" {
				t.Logf("missed (%s) %s: %s", r.Severity, c.ID, r.Value())
			} else {
				t.Logf("missed (%s) %s", r.Severity, c.ID)
			}
		}
		bySplit[c.Split][c.Class] = s
	}
	for split, floor := range map[string]float64{"development": publicDevFloor, "heldout": publicHeldoutFloor} {
		classes := make([]string, 0, len(bySplit[split]))
		all := score{}
		for c, s := range bySplit[split] {
			classes = append(classes, c)
			all.caught += s.caught
			all.total += s.total
		}
		sort.Strings(classes)
		for _, c := range classes {
			s := bySplit[split][c]
			t.Logf("%-11s %-26s %2d of %2d", split, c, s.caught, s.total)
		}
		if all.total == 0 {
			t.Fatalf("no %s cases", split)
		}
		recall := float64(all.caught) / float64(all.total)
		t.Logf("%-11s all: %d of %d (%.1f%%)", split, all.caught, all.total, 100*recall)
		if recall < floor {
			t.Errorf("%s: recall at medium %.3f is below the floor %.3f", split, recall, floor)
		}
	}
}
