package scan

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/coretest"
)

// corpusFloor is the share of the public poisoned corpus
// (../shared/scan-corpus, issue 21) the scan must rate medium or higher:
// the figure measured when the rules were last changed, so a change that
// loses a caught attack fails here.
const corpusFloor = 1.0 // 48 of 48 measured (issue 21)

// TestPublicCorpus scores the scan on poisoned tools nobody here wrote:
// 48 tools from public security repositories, each one list of one tool.
// Recall at medium must not drop below corpusFloor.
func TestPublicCorpus(t *testing.T) {
	dir := coretest.RepoPath(t, "..", "shared", "scan-corpus")
	b, err := os.ReadFile(dir + "/manifest.json")
	if err != nil {
		t.Fatalf("the public corpus is beside the clone (CI copies shared/ there): %v", err)
	}
	var m struct {
		Poisoned []struct{ File, Class, Tool string }
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	caught, byClass, total := 0, map[string][2]int{}, len(m.Poisoned)
	for _, e := range m.Poisoned {
		b, err := os.ReadFile(dir + "/" + e.File)
		if err != nil {
			t.Fatal(err)
		}
		v, err := canon.Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", e.File, err)
		}
		list, _ := v.Get("tools")
		r := Run(coretest.Hashed(t, list.String()), nil)
		c := byClass[e.Class]
		c[1]++
		if r.Severity >= Medium {
			caught++
			c[0]++
		} else if testing.Verbose() {
			t.Logf("missed (%s) %s: %s", r.Severity, e.File, r.Value())
		}
		byClass[e.Class] = c
	}
	recall := float64(caught) / float64(total)
	t.Logf("recall at medium: %d of %d (%.1f%%); by class: %v", caught, total, 100*recall, byClass)
	if total < 48 {
		t.Errorf("the corpus has %d tools, expected 48", total)
	}
	if recall < corpusFloor {
		t.Errorf("recall at medium %.3f is below the floor %.3f", recall, corpusFloor)
	}
}
