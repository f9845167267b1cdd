package scan

import "strings"

// word is one ASCII word of a text at t[start:end]; its lower-case form,
// apostrophes dropped ("Don't" is "dont"), is low[lo:hi] of the scanner.
type word struct {
	start, end int
	lo, hi     int
}

// wordsIn splits the text into words and identifiers, then matches the
// phrase rules over the words and the tool-name rules over the identifiers.
func (s *scanner) wordsIn(t string, add func(rule, start, end int)) {
	s.words, s.low = splitWords(t, s.words[:0], s.low[:0])
	s.phrasesIn(t, add)
	s.identifiersIn(t, add)
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func splitWords(t string, ws []word, low []byte) ([]word, []byte) {
	for i := 0; i < len(t); {
		if !isAlnum(t[i]) {
			i++
			continue
		}
		w := word{start: i, lo: len(low)}
		for i < len(t) {
			c := t[i]
			switch {
			case isAlnum(c):
				low = append(low, lower(c))
				i++
				continue
			case c == '\'' && i+1 < len(t) && isAlnum(t[i+1]):
				i++
				continue
			case c == 0xE2 && strings.HasPrefix(t[i:], "\u2019") && i+3 < len(t) && isAlnum(t[i+3]):
				i += 3
				continue
			}
			break
		}
		w.end, w.hi = i, len(low)
		ws = append(ws, w)
	}
	return ws, low
}

// phrasesIn matches every phrase starting at every word. The positions a
// phrase can have reached are kept as a set, so a gap never makes a match
// depend on which earlier word was taken; the set is bounded by the gaps,
// which keeps the pass linear.
func (s *scanner) phrasesIn(t string, add func(rule, start, end int)) {
	ws := s.words
	ruleEnd := s.phraseEnd // rule → end of its latest match, in words
	if len(ws) == 0 {
		return
	}
	clear(ruleEnd)
	for i := range ws {
		w := s.low[ws[i].lo:ws[i].hi]
		if !s.c.firstFilter.has(w[0], w[len(w)-1], len(w)) {
			continue
		}
		for _, pi := range s.c.byFirst[string(w)] {
			p := &s.c.phrases[pi]
			if i < ruleEnd[p.rule] {
				continue
			}
			if end, ok := s.matchPhrase(p, i); ok {
				add(p.rule, ws[i].start, ws[end].end)
				ruleEnd[p.rule] = end + 1
			}
		}
	}
}

func (s *scanner) matchPhrase(p *phrase, i int) (int, bool) {
	ws := s.words
	cur := append(s.cur[:0], i)
	for _, st := range p.steps[1:] {
		nxt := s.nxt[:0]
		for _, at := range cur {
			for q := at + 1; q <= at+1+st.gap && q < len(ws); q++ {
				s.work++
				if st.match(s.low[ws[q].lo:ws[q].hi]) && !contains(nxt, q) {
					nxt = append(nxt, q)
				}
			}
		}
		s.cur, s.nxt = nxt, cur
		if len(nxt) == 0 {
			return 0, false
		}
		cur = nxt
	}
	end := cur[0]
	for _, q := range cur {
		end = min(end, q)
	}
	return end, true
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// identifiersIn looks up each identifier of the text (letters, digits, _,
// - and . between them) among the list's tool names and the well-known
// tool names of other servers.
func (s *scanner) identifiersIn(t string, add func(rule, start, end int)) {
	buf := s.ident[:0]
	for i := 0; i < len(t); {
		if byteClass[t[i]]&classID == 0 {
			i++
			continue
		}
		start, marked, letter := i, false, false
		for i < len(t) && byteClass[t[i]]&classID != 0 {
			switch c := t[i]; {
			case 'a' <= c && c <= 'z':
				letter = true
			case 'A' <= c && c <= 'Z':
				// An inner capital marks camelCase; a first one only starts a sentence.
				marked, letter = marked || i > start, true
			default:
				marked = true // a tool name looked for has _, -, ., a digit or an inner capital
			}
			i++
		}
		if !marked || !letter {
			continue
		}
		lo, hi := start, i
		for lo < hi && (t[lo] == '.' || t[lo] == '-') {
			lo++
		}
		for hi > lo && (t[hi-1] == '.' || t[hi-1] == '-') {
			hi--
		}
		if hi-lo < 3 || !s.nameFilter.has(lower(t[lo]), lower(t[hi-1]), hi-lo) {
			continue
		}
		buf = buf[:0]
		for j := lo; j < hi; j++ {
			buf = append(buf, lower(t[j]))
		}
		if string(buf) == s.self {
			continue
		}
		if rule, ok := s.names[string(buf)]; ok {
			add(rule, lo, hi)
		}
	}
	s.ident = buf
}
