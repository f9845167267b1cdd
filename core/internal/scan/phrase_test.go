package scan

import (
	"slices"
	"strings"
	"testing"
)

// TestSecondStepSkipsNothing: the phrases phrasesIn leaves untried after a
// word because no word after it can be a second step of theirs (the
// slot's second and gap) match nowhere. Every string of the scan corpora
// (as it is, in upper case, and joined to the one before), and every
// phrase of the table written out with its gaps filled, goes through the
// phrases twice: with the slots as compiled, and with every slot open,
// which tries every phrase after every word it starts with. What they find
// must be the same.
func TestSecondStepSkipsNothing(t *testing.T) {
	corpus := corpusTexts(t, nil)
	secondStepSkipsNothing(t, rules(), corpus)
	// The table with phrases of the shapes that open a slot (a second
	// step with prefixes, a phrase of one word), which today's rules may
	// not have, beside one that shares its first word with them.
	more := append(slices.Clone(Rules),
		Rule{ID: "test.prefix", Kind: KindInstruction, Severity: Medium, In: InAny, Match: MatchPhrase, Args: []string{"zorble frob* ~2 quux", "zorble wibble"}},
		Rule{ID: "test.one", Kind: KindInstruction, Severity: Medium, In: InAny, Match: MatchPhrase, Args: []string{"plugh", "plugh xyzzy ~1 fnord"}})
	secondStepSkipsNothing(t, compile(more), corpus[:2000])
}

func secondStepSkipsNothing(t *testing.T, c *compiled, corpus []string) {
	t.Helper()
	var texts []string
	for _, p := range c.phrases { // each phrase written out, every alternative of its second step in turn
		alts := 1
		if len(p.steps) > 1 {
			alts = len(p.steps[1].words) + len(p.steps[1].prefixes)
		}
		for a := range alts {
			var b strings.Builder
			for k, st := range p.steps {
				for range st.gap {
					b.WriteString("so ")
				}
				switch n := a % (len(st.words) + len(st.prefixes)); {
				case k != 1 && len(st.words) > 0:
					b.WriteString(st.words[0])
				case n < len(st.words):
					b.WriteString(st.words[n])
				default:
					b.WriteString(st.prefixes[n-len(st.words)] + "ing")
				}
				b.WriteString(" ")
			}
			texts = append(texts, b.String())
		}
	}
	written := len(texts)
	texts = append(texts, corpus...)
	open := *c
	open.byFirst.slots = slices.Clone(c.byFirst.slots)
	for i := range open.byFirst.slots {
		open.byFirst.slots[i].open = true
	}
	s := newScanner([]string{"send_email", "get_user"})
	s.phraseEnd = make([]int, len(c.ownLowers)) // a rule → its latest match, for this table's rules
	type hit struct{ rule, start, end int }
	matches := func(x string, with *compiled) []hit {
		var hits []hit
		s.c = with
		s.splitWords(x)
		s.phrasesIn(x, func(rule, start, end int) { hits = append(hits, hit{rule, start, end}) })
		return hits
	}
	found, matched := 0, 0
	for i, text := range texts {
		for v, x := range []string{text, strings.ToUpper(text), texts[max(i-1, 0)] + " " + text} {
			got, want := matches(x, c), matches(x, &open)
			if !slices.Equal(got, want) {
				t.Fatalf("%.200q: with the second steps' bits %v, every phrase tried %v", x, got, want)
			}
			found += len(want)
			if i < written && v == 0 && len(want) > 0 {
				matched++
			}
		}
	}
	if found < 100 || matched < written*9/10 {
		t.Fatalf("the phrases matched %d times, %d of the %d written phrases: the test reads too little", found, matched, written)
	}
	t.Logf("%d texts, %d matches, %d of %d written phrases", len(texts), found, matched, written)
}
