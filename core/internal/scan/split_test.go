package scan

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSplitWordsAsReference: splitWords finds the words, lower-case forms,
// automaton end states and notes that splitWordsReference (the pass as it
// was before its words got a loop of their own, kept here) finds, on every
// string of the scan corpora (as it is, in upper case, without its blanks,
// and joined to the one before), on texts written to sit at the edges of
// the words (apostrophes, ’, camelCase, digits, marks, the ends of the text),
// and on random texts of the bytes that matter to it.
func TestSplitWordsAsReference(t *testing.T) {
	texts := []string{
		"", "a", "A", "'", "’", "a'", "'a", "a'b", "a''b", "a’", "’a", "a’b", "a’’b", "a\xe2\x80", "a\xe2\x80\x99", "a\xe2b",
		"Don't", "DON’T", "don’t.", "it's 1234'5678", "refererUrl", "aB", "ABc", "aBC", "a1B", "x’Y", "x'Y", "getHTTPResponse",
		"e.g. 1.2.3.4", "ops@x.example", "a_1-2_3-4", "12-34", "1234", "x.", ".x", "...", "a. b! c? d.e", "end.",
		"Tool 0 does one thing well. It reads the input, checks it and answers.", "<x>[y]@z:w", "\u00e9t\u00e9 caf\u00e9",
	}
	texts = corpusTexts(t, texts)
	r := rand.New(rand.NewPCG(38, 6))
	const alphabet = "aZ9 '._-@:<[!?\n\xe2\x80\x99"
	for range 20000 {
		b := make([]byte, r.IntN(24))
		for k := range b {
			b[k] = alphabet[r.IntN(len(alphabet))]
		}
		texts = append(texts, string(b))
	}
	for _, l := range rules().ac.lits {
		texts = append(texts, l.text, "x"+strings.ToUpper(l.text)+"'s")
	}
	s := newScanner(nil)
	type split struct {
		words []word
		low   string
		hits  []acHit
		seen  uint8
	}
	run := func(f func(string), x string) split {
		f(x)
		return split{slices.Clone(s.words), string(s.low), slices.Clone(s.hits), s.seen}
	}
	checked, words := 0, 0
	for i, text := range texts {
		for _, x := range []string{text, strings.ToUpper(text), strings.ReplaceAll(text, " ", ""), texts[max(i-1, 0)] + " " + text} {
			got, want := run(s.splitWords, x), run(s.splitWordsReference, x)
			if !slices.Equal(got.words, want.words) || got.low != want.low || !slices.Equal(got.hits, want.hits) || got.seen != want.seen {
				t.Fatalf("%.200q: splitWords %+v, reference %+v", x, got, want)
			}
			checked++
			words += len(want.words)
		}
	}
	t.Logf("%d texts, %d words", checked, words)
}

// splitWordsReference is splitWords as it was written first: the whole
// pass in one loop over the bytes. Kept as what TestSplitWordsAsReference
// compares splitWords with.
func (s *scanner) splitWordsReference(t string) {
	a := s.c.ac
	next, endRow := a.next, a.endRow
	ws, low, hits := s.words[:0], s.low[:0], s.hits[:0]
	row := int32(acBase)
	sentence, inWord, skip := int32(0), false, 0
	seen, digits := uint8(0), 0
	var w word
	var h uint32
	for i := 0; i < len(t); i++ {
		c := t[i]
		row = next[row+next[c]]
		if row >= endRow {
			hits = append(hits, acHit{i, row})
		}
		if skip > 0 { // the rest of a ’ inside a word
			skip--
			continue
		}
		bc := byteClass[c]
		alnum := bc&classAlnum != 0
		if inWord {
			switch {
			case alnum:
				digits += int(bc >> classDigitShift & 1)
				if c <= 'Z' && c >= 'A' && t[i-1] >= 'a' && t[i-1] <= 'z' {
					break // camelCase: the capital starts the next word
				}
				lc := lower(c)
				low = append(low, lc)
				h = (h ^ uint32(lc)) * hashPrime
				continue
			case c == '\'' && i+1 < len(t) && isAlnum(t[i+1]):
				continue
			case c == 0xE2 && strings.HasPrefix(t[i:], "\u2019") && i+3 < len(t) && isAlnum(t[i+3]):
				skip = 2
				continue
			}
			w.end, w.hi, w.hash = int32(i), int32(len(low)), h
			ws = append(ws, w)
			inWord = false
		}
		if alnum {
			digits += int(bc >> classDigitShift & 1)
			w = word{start: int32(i), lo: int32(len(low)), sentence: sentence}
			lc := lower(c)
			low = append(low, lc)
			h = (hashSeed ^ uint32(lc)) * hashPrime
			inWord = true
			continue
		}
		if f := betweenWords[c]; f != 0 {
			seen |= f & (seenLT | seenBracket | seenAt)
			// A mark joined on both sides: "ops@x.example", "e.g.", "https://".
			if f&seenMark != 0 && i > 0 && i+1 < len(t) && joins[t[i-1]] && joins[t[i+1]] {
				seen |= seenValue
			}
			if f&seenRun == 0 {
				seen |= valueDigits(digits)
				digits = 0
			}
		} else {
			seen |= valueDigits(digits)
			digits = 0
		}
		if (c == '.' || c == '!' || c == '?') && (i+1 == len(t) || t[i+1] <= ' ') {
			sentence++
		}
	}
	if inWord {
		w.end, w.hi, w.hash = int32(len(t)), int32(len(low)), h
		ws = append(ws, w)
	}
	s.words, s.low, s.hits = ws, low, hits
	s.seen = seen | valueDigits(digits)
}
