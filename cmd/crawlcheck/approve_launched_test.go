package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/internal/preflight"
)

// TestApproveSaysTheLaunchedPackageChanged: for each golden record of the
// core where the launched package is not the one approved (another
// version, another tarball, a tag no registry resolved), approve's text
// names the observation, both sides and `crawlcheck lock`, and its diff
// line says "no tool changed", never "no change"; a record without the
// change adds nothing.
func TestApproveSaysTheLaunchedPackageChanged(t *testing.T) {
	file := readGolden[struct {
		Cases []struct {
			Name   string          `json:"name"`
			Record json.RawMessage `json:"record"`
		} `json:"cases"`
	}](t, "continuity.json")
	const relock = "crawlcheck lock --server 'npx -y @modelcontextprotocol/server-memory' -o a.lock"
	changed, unchanged := 0, 0
	for _, c := range file.Cases {
		rec, err := preflight.ParseRecord(c.Record)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		var out bytes.Buffer
		printLaunchedChange(&out, rec, relock)
		if !bytes.Contains(c.Record, []byte(`"launched_package_changed"`)) {
			if launchedChanged(rec) || out.Len() != 0 {
				t.Errorf("%s: no launched change, but approve says:\n%s", c.Name, out.String())
			}
			unchanged++
			continue
		}
		changed++
		if !launchedChanged(rec) {
			t.Errorf("%s: the launched change not seen", c.Name)
		}
		text := out.String()
		var d struct {
			Approved launchedSide `json:"approved"`
			Observed launchedSide `json:"observed"`
		}
		for _, f := range rec.Observations {
			if f.Observation == launchedPackageChanged {
				if err := json.Unmarshal(f.Detail, &d); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, want := range []string{
			"launched_package_changed (deny): the package the command line launches is not the one approved",
			"  approved  " + d.Approved.String() + "\n",
			"  launched  " + d.Observed.String() + "\n",
			"keeps the approved package pinned, so the next check denies again; `" + relock + "` pins the new one",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: approve's text lacks %q:\n%s", c.Name, want, text)
			}
		}
		if d.Approved.Name == "" || d.Observed.String() == "" || d.Approved.String() == d.Observed.String() {
			t.Errorf("%s: the two sides are not told apart: %+v", c.Name, d)
		}
	}
	if changed < 5 || unchanged == 0 {
		t.Fatalf("%d records with a launched change, %d without: the golden file has fewer than expected", changed, unchanged)
	}
	var out bytes.Buffer
	printDiffNoting(&out, diffResult{Unchanged: 9}, "no tool changed")
	if out.String() != "no tool changed (9 tools)\n" {
		t.Errorf("the diff line: %q", out.String())
	}
}
