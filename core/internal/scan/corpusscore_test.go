package scan

import (
	"encoding/json"
	"os"
	"sort"
	"testing"

	"github.com/crawlcheck/verifier/core/internal/coretest"
)

// corpusCase is one poisoned tools/list of a scored corpus in testdata
// (scan-attacks, scan-public): Split only in scan-public/cases.json.
type corpusCase struct {
	ID, Class, Split string
	Tool             string // when set, the poisoned tool of a whole list: the case is scored on its findings
	Tools            json.RawMessage
}

// readCorpus reads the cases of testdata/dir/file, failing when there are
// none: an empty corpus would score nothing and pass any floor.
func readCorpus(t *testing.T, dir, file string) []corpusCase {
	t.Helper()
	b, err := os.ReadFile(coretest.RepoPath(t, "testdata", dir, file))
	if err != nil {
		t.Fatal(err)
	}
	var corpus struct{ Cases []corpusCase }
	if err := json.Unmarshal(b, &corpus); err != nil {
		t.Fatal(err)
	}
	if len(corpus.Cases) == 0 {
		t.Fatalf("%s/%s: no cases", dir, file)
	}
	return corpus.Cases
}

// readBenign reads the "benign" member of testdata/dir/file (honest lists
// kept beside the attacks of a blind set), failing when there are none.
func readBenign(t *testing.T, dir, file string) []corpusCase {
	t.Helper()
	b, err := os.ReadFile(coretest.RepoPath(t, "testdata", dir, file))
	if err != nil {
		t.Fatal(err)
	}
	var corpus struct{ Benign []corpusCase }
	if err := json.Unmarshal(b, &corpus); err != nil {
		t.Fatal(err)
	}
	if len(corpus.Benign) == 0 {
		t.Fatalf("%s/%s: no benign lists", dir, file)
	}
	return corpus.Benign
}

// score counts the cases of a class (or of all) the scan rated medium or
// higher.
type score struct{ caught, total int }

// recall is the share caught.
func (s score) recall() float64 { return float64(s.caught) / float64(s.total) }

// scoreCases runs the scan on each case and answers the score of each
// class and of all; with -v, miss is told each case rated below medium
// (the caller decides how much of it to show: a hold-out's miss is named
// by id only).
func scoreCases(t *testing.T, cases []corpusCase, miss func(corpusCase, Result)) (map[string]score, score) {
	t.Helper()
	byClass := map[string]score{}
	all := score{}
	for _, c := range cases {
		var only map[string]bool
		if c.Tool != "" {
			only = map[string]bool{c.Tool: true}
		}
		r := Run(coretest.Hashed(t, string(c.Tools)), only)
		s := byClass[c.Class]
		s.total++
		all.total++
		if r.Severity >= Medium {
			s.caught++
			all.caught++
		} else if testing.Verbose() {
			miss(c, r)
		}
		byClass[c.Class] = s
	}
	return byClass, all
}

// sortedClasses are the classes of byClass in order, for a stable log.
func sortedClasses(byClass map[string]score) []string {
	classes := make([]string, 0, len(byClass))
	for c := range byClass {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	return classes
}
