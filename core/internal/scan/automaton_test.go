package scan

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/coretest"
)

// TestAutomatonAsNaive: the literals the words pass's automaton reports
// are those a search of every literal at every place finds, with the same
// boundaries and exclusions, on the descriptions of the real servers, each
// also in upper case and with every literal of the table written into it.
func TestAutomatonAsNaive(t *testing.T) {
	c := rules()
	var texts []string
	files, _ := filepath.Glob(coretest.RepoPath(t, "testdata", "scan-real", "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := canon.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		list, _ := v.Get("tools")
		for _, tl := range coretest.Hashed(t, list.String()) {
			texts = append(texts, tl.Description, strings.ToUpper(tl.Description))
		}
	}
	var all strings.Builder
	for _, l := range c.ac.lits {
		all.WriteString("See " + l.text + ", x" + l.text + "y " + strings.ToUpper(l.text) + ". ")
	}
	texts = append(texts, all.String())
	type hit struct{ lit, start, end int }
	index := map[*literal]int{}
	for i := range c.ac.lits {
		index[&c.ac.lits[i]] = i
	}
	s := newScanner(nil)
	for _, text := range texts {
		var got, want []hit
		s.splitWords(text)
		c.ac.report(text, s.hits, func(l *literal, start, end int) {
			got = append(got, hit{index[l], start, end})
		})
		low := strings.ToLower(text) // ASCII letters only: a literal is ASCII
		if len(low) != len(text) {
			continue
		}
		for li, l := range c.ac.lits {
			for at := 0; ; at++ {
				k := strings.Index(low[at:], l.text)
				if k < 0 {
					break
				}
				at += k
				start, end := at, at+len(l.text)
				if l.startBound && start > 0 && byteClass[text[start-1]]&classAlnum != 0 ||
					l.endBound && end < len(text) && byteClass[text[end]]&classAlnum != 0 ||
					followedBy(text[end:], l.notBefore) {
					continue
				}
				want = append(want, hit{li, start, end})
			}
		}
		order := func(a, b hit) int {
			if a.end != b.end {
				return a.end - b.end
			}
			return a.lit - b.lit
		}
		slices.SortFunc(got, order)
		slices.SortFunc(want, order)
		if !slices.Equal(got, want) {
			t.Fatalf("%.80q: automaton %v, search %v", text, got, want)
		}
	}
}
