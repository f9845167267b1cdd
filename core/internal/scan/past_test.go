package scan

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/crawlcheck/verifier/core/internal/coretest"
)

// maxPastMedium is how many of the past releases' description texts in
// testdata/scan-changes/labelled.json the scan may rate medium or higher:
// today's figure, 33 of 486 (the same texts with the rules before issue 38
// round 6 and after it: docs/scan.md, "Round 6"), so a rule that starts
// flagging honest text of real releases fails here.
const maxPastMedium = 33

// TestPastReleasesStayQuiet scans every description text of the labelled
// changes (both sides: what a release said before and after), each with
// its release's other tool names where labelled.json keeps the list, and
// counts the texts rated medium or higher. Most of them are releases
// whose list is not kept (their own tools read as another server's) and
// firecrawl's older "the most powerful web search tool available".
func TestPastReleasesStayQuiet(t *testing.T) {
	b, err := os.ReadFile(coretest.RepoPath(t, "testdata", "scan-changes", "labelled.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Lists   map[string][]string
		Changes []struct{ From, To, Tool, Field, Old, New string }
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	texts, medium := 0, 0
	for _, c := range d.Changes {
		if c.Field != "description" {
			continue
		}
		for _, side := range []struct{ release, text string }{{c.From, c.Old}, {c.To, c.New}} {
			key := side.release + "\x00" + c.Tool + "\x00" + side.text
			if side.text == "" || seen[key] {
				continue
			}
			seen[key] = true
			tools := []map[string]string{{"name": c.Tool, "description": side.text}}
			for _, n := range d.Lists[side.release] {
				if n != c.Tool {
					tools = append(tools, map[string]string{"name": n})
				}
			}
			list, err := json.Marshal(tools)
			if err != nil {
				t.Fatal(err)
			}
			texts++
			r := Run(coretest.Hashed(t, string(list)), map[string]bool{c.Tool: true})
			if r.Severity >= Medium {
				medium++
				t.Logf("%s %s: %v", side.release, c.Tool, ruleIDs(r))
			}
		}
	}
	t.Logf("%d texts of past releases, %d at medium or higher", texts, medium)
	if texts < 300 {
		t.Fatalf("only %d texts: labelled.json is missing its changes", texts)
	}
	if medium > maxPastMedium {
		t.Errorf("%d past release texts are medium or higher, more than %d", medium, maxPastMedium)
	}
}
