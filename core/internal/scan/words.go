package scan

import "strings"

// word is one ASCII word of a text at t[start:end]; its lower-case form,
// apostrophes dropped ("Don't" is "dont"), is low[lo:hi] of the scanner.
//
// Its fields are 32 bits: a word list is written once per word of every
// text scanned, and half the bytes halve that traffic; a text is far
// shorter than 2 GiB (the core's inputs are bounded well below, and the
// wasm build's whole memory is 4 GiB).
type word struct {
	start, end int32
	lo, hi     int32
	sentence   int32  // phrases match within one sentence
	hash       uint32 // wordHash of the lower-case form
}

// wordsIn matches the phrase rules over the text's words (split by
// splitWords before) and the tool-name rules over its identifiers.
func (s *scanner) wordsIn(t string, add func(rule, start, end int)) {
	s.phrasesIn(t, add)
	s.identifiersIn(t, add)
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// splitWords splits the text into words (into s.words, their lower-case
// forms into s.low) and, in the same pass, runs the literal automaton over
// it (its end states into s.hits, for report): one read of each byte, and
// the automaton's chain of table lookups overlaps the word work instead of
// following it.
//
// It also numbers sentences: one ends at '.', '!' or '?' followed by a
// blank or the end, so "… you need. IMPORTANT: Always use …" is two. An
// inner capital after a lower-case letter starts a word: camelCase
// identifiers read as words (refererUrl is referer url), as snake_case
// ones already do. An apostrophe between letters ("Don't", also as ’) is
// dropped from the lower-case form: "dont".
//
// On the bytes between words it also notes what the later passes look
// for (s.seen): whether the text has a '<', a '[' or an '@' (tags and
// comments, bracketed labels, addresses start there), and whether a value
// the directive matcher reads can be in it at all. A text without them,
// as most are, skips those passes: each would read the whole text again
// to find nothing.
//
// The bytes of a word are read by a loop of their own that holds only what
// a word needs (the automaton's row, the lower-case form's length, the
// word's hash and digits) and calls nothing: it writes the lower-case form
// by index into a buffer sized for the text, notes only that the automaton
// reached an end state (a word where one did is read again from the row it
// started with, to list them), and leaves a camelCase word's end to the
// loop around it. With the whole pass in one loop that appended as it
// went, its state did not fit the registers and every byte stored and
// reloaded it (docs/benchmarks.md, issue 38 round 6). The result is that
// of splitWordsReference (split_test.go), which TestSplitWordsAsReference
// compares.
func (s *scanner) splitWords(t string) {
	a := s.c.ac
	next, endRow := a.next, a.endRow
	if cap(s.low) < len(t) {
		s.low = make([]byte, 0, max(len(t), 2*cap(s.low)))
	}
	low := s.low[:len(t)] // a text's lower-case words are at most its length
	ws, hits := s.words[:0], s.hits[:0]
	row := int32(acBase)
	sentence := int32(0)
	seen, digits := uint8(0), 0
	j := 0 // the length of the lower-case words so far
	for i := 0; i < len(t); i++ {
		c := t[i]
		row = next[row+next[c]]
		if row >= endRow {
			hits = append(hits, acHit{i, row})
		}
		bc := byteClass[c]
		if bc&classAlnum != 0 {
			// A word starts at i, whose byte the automaton has read.
			for {
				start, lo := int32(i), int32(j)
				lc := c | 0x20 // lower case for a letter, the same for a digit
				low[j] = lc
				j++
				h := (hashSeed ^ uint32(lc)) * hashPrime
				digits += int(bc >> classDigitShift & 1)
				from, fromRow := i+1, row
				top, camel := int32(0), false // top: the highest row the loop reaches
				for i++; i < len(t); i++ {
					c = t[i]
					row = next[row+next[c]]
					top = max(top, row)
					bc = byteClass[c]
					if bc&classAlnum == 0 {
						if c == '\'' && i+1 < len(t) && isAlnum(t[i+1]) {
							continue // inside the word, dropped
						}
						if c == 0xE2 && strings.HasPrefix(t[i:], "\u2019") && i+3 < len(t) && isAlnum(t[i+3]) {
							row = next[row+next[t[i+1]]] // the rest of the ’: the automaton reads it
							top = max(top, row)
							row = next[row+next[t[i+2]]]
							top = max(top, row)
							i += 2
							continue
						}
						break
					}
					digits += int(bc >> classDigitShift & 1)
					if bc&classUpper != 0 && byteClass[t[i-1]]&classLower != 0 {
						camel = true // the capital starts the next word
						break
					}
					lc = c | 0x20
					low[j] = lc
					j++
					h = (h ^ uint32(lc)) * hashPrime
				}
				if top >= endRow { // the end states the loop passed, again
					r := fromRow
					for k := from; k <= i && k < len(t); k++ {
						if r = next[r+next[t[k]]]; r >= endRow {
							hits = append(hits, acHit{k, r})
						}
					}
				}
				// The record is written field by field where it goes: a word
				// built on the stack by 32-bit stores and copied by 16-byte
				// loads stalled every word (the loads cannot be forwarded
				// from the stores; the copy held a third of this pass's
				// profile samples).
				if len(ws) == cap(ws) {
					ws = append(ws, word{})[:len(ws)]
				}
				ws = ws[:len(ws)+1]
				w := &ws[len(ws)-1]
				w.start, w.end, w.lo, w.hi, w.sentence, w.hash = start, int32(i), lo, int32(j), sentence, h
				if !camel {
					break
				}
			}
			if i == len(t) {
				break
			}
			// t[i] ends the word: it is read as any byte between words.
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
	s.words, s.low, s.hits = ws, low[:j], hits
	s.seen = seen | valueDigits(digits)
}

// What splitWords notes of a text for the passes after it (s.seen).
const (
	seenLT      uint8 = 1 << iota // a '<'
	seenBracket                   // a '['
	seenAt                        // an '@'
	seenValue                     // a value may be in it (directivesIn)
	seenMark                      // betweenWords only: '.', '@' or ':'
	seenRun                       // betweenWords only: '_' or '-', which a run of an identifier's digits spans
)

// betweenWords is what a byte that is not a letter or digit tells
// splitWords' seen.
var betweenWords = func() (t [256]uint8) {
	t['<'], t['['], t['@'] = seenLT, seenBracket, seenAt|seenMark
	t['.'], t[':'] = seenMark, seenMark
	t['_'], t['-'] = seenRun, seenRun
	return t
}()

// valueDigits is seenValue when a run of letters, digits, '_' and '-' has
// digits enough for a value that needs no mark: six in a row, or an
// identifier with four (isValue). Every other value has a '.', '@' or ':'
// joined on both sides, which splitWords notes itself.
func valueDigits(digits int) uint8 {
	if digits >= 4 {
		return seenValue
	}
	return 0
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
	// Only the rules that matched in the text before are cleared: a text
	// of a few words would otherwise clear the whole table.
	for _, r := range s.phraseHit {
		ruleEnd[r] = 0
	}
	s.phraseHit = s.phraseHit[:0]
	s.ownSentence = -1
	for i := range ws {
		sl := s.c.byFirst.get(ws[i].hash, s.low[ws[i].lo:ws[i].hi])
		if sl == nil || !sl.open && !s.secondFollows(sl, i) {
			continue
		}
		for _, pi := range sl.phrases {
			p := &s.c.phrases[pi]
			if i < ruleEnd[p.rule] {
				continue
			}
			if end, ok := s.matchPhrase(p, i); ok {
				rule := p.rule
				if s.c.ownLowers[rule] && s.namesOwnTools(t, i) {
					rule = s.c.ownTools
				}
				add(rule, int(ws[i].start), int(ws[end].end))
				if ruleEnd[p.rule] == 0 {
					s.phraseHit = append(s.phraseHit, p.rule)
				}
				ruleEnd[p.rule] = end + 1
			}
		}
	}
}

// secondFollows says whether a word within the slot's gap after word i,
// in its sentence, may be one of the second steps of the phrases word i
// starts (by its bit in the slot's second): when none is, none of them
// can match there.
func (s *scanner) secondFollows(sl *wordSlot, i int) bool {
	ws := s.words
	for q := i + 1; q <= i+1+sl.gap && q < len(ws) && ws[q].sentence == ws[i].sentence; q++ {
		s.work++
		if hi, bit := hashBit(ws[q].hash); sl.second[hi]&bit != 0 {
			return true
		}
	}
	return false
}

func (s *scanner) matchPhrase(p *phrase, i int) (int, bool) {
	ws := s.words
	cur := append(s.cur[:0], i)
	for k := 1; k < len(p.steps); k++ {
		st := &p.steps[k]
		nxt := s.nxt[:0]
		for _, at := range cur {
			for q := at + 1; q <= at+1+st.gap && q < len(ws) && ws[q].sentence == ws[i].sentence; q++ {
				s.work++
				if st.match(s.low[ws[q].lo:ws[q].hi], ws[q].hash) && !contains(nxt, q) {
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

// namesOwnTools says whether the sentence of word i names a tool of this
// list other than the one described (an identifier, or a plain name such as
// "fill" as a word) or a family of them ("other page tools", a word of
// four letters or more that is part of the name of a tool of the list
// other than the one described: a tool cannot make its own name a family), and neither
// another server's well-known tool nor "other", "another",
// "alternative(s)" or "server(s)" otherwise: "prefer this tool over fill or
// click" steers among the server's own tools, "prefer this tool over any
// other" does not. Each sentence is read once (phrases are
// matched in word order, so one remembered answer suffices).
func (s *scanner) namesOwnTools(t string, i int) bool {
	s.toolRead = true
	ws := s.words
	sent := int(ws[i].sentence)
	if s.ownSentence == sent {
		return s.ownAnswer
	}
	s.nameTables()
	s.ownTables()
	lo, hi := i, i+1
	for lo > 0 && int(ws[lo-1].sentence) == sent {
		lo--
	}
	for hi < len(ws) && int(ws[hi].sentence) == sent {
		hi++
	}
	s.work += hi - lo
	own, foreign := false, false
	for k := lo; k < hi && !foreign; k++ {
		switch w := string(s.low[ws[k].lo:ws[k].hi]); w {
		case "other", "others", "another":
			// "other Shopify tools": a family of this list's own names.
			if k+1 < hi && s.family(string(s.low[ws[k+1].lo:ws[k+1].hi])) {
				own = true
				k++
				continue
			}
			foreign = true
		case "alternative", "alternatives", "server", "servers":
			foreign = true
		default:
			own = own || w != s.selfName() && s.own[w]
		}
	}
	for a := int(ws[lo].start); a < int(ws[hi-1].end) && !foreign; {
		if byteClass[t[a]]&classID == 0 {
			a++
			continue
		}
		b := a
		for b < len(t) && byteClass[t[b]]&classID != 0 {
			b++
		}
		s.work += b - a
		x, y := a, b
		for x < y && (t[x] == '.' || t[x] == '-') {
			x++
		}
		for y > x && (t[y-1] == '.' || t[y-1] == '-') {
			y--
		}
		id := strings.ToLower(t[x:y])
		switch {
		case id == s.selfName():
		case s.own[id]:
			own = true
		case s.names[id] >= 0 && s.names[id] != s.c.listTool && hasKey(s.names, id):
			foreign = true
		}
		a = b
	}
	s.ownSentence, s.ownAnswer = sent, own && !foreign
	return s.ownAnswer
}

// family says whether w is a word of the name of a tool of the list other
// than the one described.
func (s *scanner) family(w string) bool {
	s.toolRead = true
	s.ownTables()
	n := s.ownPart[w]
	if n > 0 {
		self := map[string]int{} // rare: only after "other" or "another"
		nameParts(s.toolName, self)
		n -= self[w]
	}
	return n > 0
}

func hasKey(m map[string]int, k string) bool {
	_, ok := m[k]
	return ok
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
		start := i
		var marked, letter bool
		i, marked, letter = identifierAt(t, i)
		if s.c.foreign != nil && letter && start > 0 && (marked || t[start-1] == '`' || t[start-1] == '\'' || t[start-1] == '"') {
			s.foreignIn(t, start, i, marked, add)
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
		if s.c.callTool >= 0 && hi-lo >= 3 && lo > 0 && compound(t[lo:hi]) {
			if from, ok := s.calledDestructive(t, lo, hi); ok {
				add(s.c.callTool, from, hi)
			}
		}
		if s.c.callSyntax >= 0 && hi < len(t) && t[hi] == '(' && hi-lo >= 3 && compound(t[lo:hi]) {
			if from, to, ok := s.calledWithArguments(t, lo, hi); ok {
				add(s.c.callSyntax, from, to)
			}
		}
		if hi-lo < 3 {
			continue
		}
		if s.nameTables(); !s.nameFilter.has(lower(t[lo]), lower(t[hi-1]), hi-lo) {
			continue
		}
		buf = buf[:0]
		for j := lo; j < hi; j++ {
			buf = append(buf, lower(t[j]))
		}
		s.toolRead = true
		if string(buf) == s.selfName() {
			continue
		}
		if rule, ok := s.names[string(buf)]; ok {
			if rule != s.c.listTool && s.c.contrast >= 0 && s.contrasted(lo) {
				rule = s.c.contrast
			}
			add(rule, lo, hi)
		}
	}
	s.ident = buf
}

// identifierAt reads the identifier that starts at t[i] (a byte of
// classID): where it ends, whether it is marked as a tool name looked for
// is (an _, -, ., a digit or an inner capital: camelCase; a first capital
// only starts a sentence), and whether it has a letter. The bytes' classes
// are or-ed, not branched on: which kind of byte comes next is what a
// branch per byte mispredicted. TestIdentifierAtAsReference compares it
// with the byte-by-byte reading it replaced.
func identifierAt(t string, i int) (end int, marked, letter bool) {
	first, rest := byteClass[t[i]], uint8(0)
	for i++; i < len(t); i++ {
		bc := byteClass[t[i]]
		if bc&classID == 0 {
			break
		}
		rest |= bc
	}
	return i, (first|rest)&classMark != 0 || rest&classUpper != 0, (first|rest)&(classUpper|classLower) != 0
}

// calledDestructive says whether the identifier t[lo:hi] follows one of the
// call_tool rule's verbs (across blanks, quotes and backticks) and has a
// part (split on _, -, . and camelCase) among its name words: "call
// delete_item". It returns where the verb starts. Bounded: a few bytes
// back, and the identifier once.
func (s *scanner) calledDestructive(t string, lo, hi int) (int, bool) {
	v, ok := verbBefore(t, lo, s.c.callVerb)
	if !ok {
		return 0, false
	}
	s.work += hi - lo + lo - v
	var part [16]byte
	n := 0
	for k := lo; k <= hi; k++ {
		var c byte
		if k < hi {
			c = t[k]
		}
		camel := k > lo && 'A' <= c && c <= 'Z' && 'a' <= t[k-1] && t[k-1] <= 'z'
		if k == hi || !isAlnum(c) || camel {
			if n > 0 && n <= len(part) && s.c.callName[string(part[:n])] {
				return v, true
			}
			n = 0
			if !camel {
				continue
			}
		}
		if n < len(part) {
			part[n] = lower(c)
		}
		n++
	}
	return 0, false
}

// verbBefore says whether one of verbs (a word of at most ten letters)
// ends right before lo, across at most three blanks, quotes, backticks or
// asterisks, and returns where it starts. Bounded: a few bytes back.
func verbBefore(t string, lo int, verbs map[string]bool) (int, bool) {
	j := lo
	for k := 0; k < 3 && j > 0 && strings.IndexByte(" \t\r\n`'\"*", t[j-1]) >= 0; k++ {
		j--
	}
	if j == lo {
		return 0, false
	}
	v := j
	for v > 0 && j-v < 10 && ('a' <= t[v-1] && t[v-1] <= 'z' || 'A' <= t[v-1] && t[v-1] <= 'Z') {
		v--
	}
	if v == j || v > 0 && isAlnum(t[v-1]) {
		return 0, false
	}
	var buf [10]byte
	for k := v; k < j; k++ {
		buf[k-v] = lower(t[k])
	}
	return v, verbs[string(buf[:j-v])]
}

// contrasted says whether the word right before the identifier at lo is
// one of the contrast rule's words ("instead of read_file", "unlike
// execute_command").
func (s *scanner) contrasted(lo int) bool {
	ws := s.words
	i, j := 0, len(ws) // the first word ending after lo
	for i < j {
		m := (i + j) / 2
		if int(ws[m].end) <= lo {
			i = m + 1
		} else {
			j = m
		}
	}
	return i > 0 && s.c.contrastOf[string(s.low[ws[i-1].lo:ws[i-1].hi])]
}

// compound says whether an identifier joins words with _ or - or in
// camelCase: what a tool name the call_tool rule looks for has, and what a
// word that only ends a sentence ("answers.") has not.
func compound(id string) bool {
	for i := 1; i < len(id); i++ {
		if c := id[i]; c == '_' || c == '-' || 'A' <= c && c <= 'Z' && 'a' <= id[i-1] && id[i-1] <= 'z' {
			return true
		}
	}
	return false
}
