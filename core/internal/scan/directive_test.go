package scan

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/coretest"
)

// TestIsValue: what the directive rule counts as a concrete destination or
// account, and what it does not (versions, file names, dates, model names,
// words).
func TestIsValue(t *testing.T) {
	tlds := map[string]bool{"com": true, "example": true, "io": true}
	for v, want := range map[string]bool{
		"ops@relay.example":                  true,
		"https://collector.example/in":       true,
		"www.malicious-data-collector.com":   true,
		"hooks.partner-sync.io":              true,
		"203.0.113.77":                       true,
		"GB33BUKB20201555555555":             true,
		"bc1qxy2kgdygjrsqtzq2n0yrf2493p83kk": true,
		"4402998112":                         true,
		"ATK-CIPHER-99887766":                true,
		"1.2.3":                              false,
		"package.json":                       false,
		"2025-01-01":                         false,
		"gpt-4o":                             false,
		"https://":                           false,
		"e.g":                                false,
		"recipient":                          false,
		"v1.2.30":                            false,
		"1.2.3.4.5":                          false,
	} {
		if got := isValue(v, tlds); got != want {
			t.Errorf("isValue(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestDirectiveValueCue: the directive matcher skips a text whose words
// pass left s.valueCue false; run with the cue forced on, it must find the
// same spans in every text, and nothing where the cue is off (the skip
// drops work, never a finding). Texts: the real servers' descriptions, and
// generated ones mixing directive and role words with values and with the
// separators that join or split a chunk.
func TestDirectiveValueCue(t *testing.T) {
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
			texts = append(texts, tl.Description)
		}
	}
	if len(texts) == 0 {
		t.Fatal("no real descriptions read")
	}
	parts := []string{"send", "the", "report", "to", "use", "wallet", "as", "recipient", "always", "point", "record", "at",
		"ops", "relay", "example", "com", "203", "0", "113", "77", "https", "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kk", "e", "g", "i", "for", "an", "io", "x"}
	seps := []string{" ", ".", "@", ":", "://", "-", "/", ". ", "\n", "'", "\"", "(", ")", ", ", "e.g. ", ".-", ":\"", "@ "}
	r := rand.New(rand.NewPCG(38, 4))
	for range 20000 {
		var b strings.Builder
		for n := r.IntN(14); n >= 0; n-- {
			b.WriteString(parts[r.IntN(len(parts))])
			b.WriteString(seps[r.IntN(len(seps))])
		}
		texts = append(texts, b.String())
	}
	type span struct{ rule, start, end int }
	s := newScanner(nil)
	if s.c.directive == nil {
		t.Fatal("no directive rule compiled")
	}
	skipped, found := 0, 0
	for _, text := range texts {
		s.splitWords(text)
		cue := s.valueCue
		var got, want []span
		s.directivesIn(text, func(rule, start, end int) { got = append(got, span{rule, start, end}) })
		s.valueCue = true
		s.directivesIn(text, func(rule, start, end int) { want = append(want, span{rule, start, end}) })
		if !slices.Equal(got, want) || !cue && len(want) > 0 {
			t.Fatalf("%q: cue %v found %v, the matcher run whole %v", text, cue, got, want)
		}
		if !cue {
			skipped++
		}
		found += len(want)
	}
	if skipped == 0 || found == 0 {
		t.Fatalf("the texts test nothing: %d skipped, %d found", skipped, found)
	}
}
