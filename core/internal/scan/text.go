package scan

import (
	"strings"
	"unicode/utf8"
)

// text runs every rule that applies to one text, or replays what they
// found when the list had the same text in the same place kind before and
// the scan of it read nothing of its tool (the memo, memo.go).
func (s *scanner) text(t string, w where) {
	m := s.memo
	if m == nil || w.name {
		s.scanText(t, w, nil)
		return
	}
	where := w.bits()
	if e, ok := m.find(t, where); ok {
		s.seq++
		s.work += len(t) + 1
		for _, a := range m.adds[e.from:e.to] {
			s.add(int(a.rule), w, t, int(a.start), int(a.end))
		}
		return
	}
	from := len(m.adds)
	s.toolRead = false
	s.scanText(t, w, m)
	if s.toolRead || !m.keep(t, where, from) {
		m.adds = m.adds[:from]
	}
}

// scanText runs every rule that applies to one text. Each pass is one walk
// over the text with bounded look-around, so the whole is linear in its
// length. With a memo, it notes there each finding it adds.
func (s *scanner) scanText(t string, w where, m *memo) {
	s.seq++
	s.work += len(t) + 1
	add := func(rule, start, end int) {
		if w.applies(Rules[rule].In) {
			if m != nil {
				m.adds = append(m.adds, memoAdd{int32(rule), int32(start), int32(end)})
			}
			s.add(rule, w, t, start, end)
		}
	}
	s.characters(t, w, add)
	if w.name || w.dialect {
		return
	}
	s.splitWords(t)
	s.c.ac.report(t, s.hits, func(l *literal, start, end int) {
		if s.c.isURL[l.rule] {
			e := addressEnd(t, end)
			s.work += e - end
			end = e
		}
		rule := l.rule
		if twin, ok := s.c.refusedOf[rule]; ok && s.refusing(t, start, end) {
			rule = twin
		}
		add(rule, start, end)
	})
	s.tagsIn(t, add)
	s.markupIn(t, add)
	s.emailsIn(t, add)
	s.wordsIn(t, add)
	s.directivesIn(t, add)
	if w.typ && s.c.typeProse >= 0 {
		add(s.c.typeProse, 0, len(t))
	}
	if w.unknownRequired && s.c.required >= 0 {
		add(s.c.required, 0, len(t))
	}
	for _, n := range s.c.length {
		if len(t) > n.n {
			add(n.rule, 0, len(t))
		}
	}
}

// characters is the pass over code points: character ranges (a run is one
// finding), escape sequences, lone carriage returns, runs of blanks, and
// words that mix scripts.
func (s *scanner) characters(t string, w where, add func(rule, start, end int)) {
	c := s.c
	runRule, runStart := -1, 0
	// A blank run: its length, and per line of it the blanks on that line
	// (hcur, the longest hmax) and its line breaks; indentation of many
	// lines is short runs on each line, not padding.
	blank, blankStart, hcur, hmax, lines := 0, 0, 0, 0, 0
	var word scriptWord
	var all scriptWord // the whole text, for a name
	nonASCII := false
	flushRun := func(at int) {
		if runRule >= 0 {
			add(runRule, runStart, at)
			runRule = -1
		}
	}
	minBlank := len(t) + 1 // the shortest run on one line a rule looks for
	for _, n := range c.spaceRun {
		minBlank = min(minBlank, n.n)
	}
	flushBlank := func(at int) {
		for _, n := range c.spaceRun {
			if hmax >= n.n || lines >= n.lines {
				add(n.rule, blankStart, at)
			}
		}
		blank, hcur, hmax, lines = 0, 0, 0, 0
	}
	flushWord := func(at int) {
		if !w.name {
			for _, m := range c.mixed {
				if word.mixed() && word.letters >= m.minLetters {
					add(m.rule, word.start, at)
				}
			}
		}
		word = scriptWord{}
	}
	if plainASCII(t, minBlank) {
		return
	}
	for i := 0; i < len(t) && !nonASCII; i++ {
		nonASCII = t[i] >= utf8.RuneSelf
	}
	for i := 0; i < len(t); {
		// Fast path: in an ASCII text, a printable character only ends a
		// run; scripts can only mix where there is something beyond ASCII.
		if b := t[i]; b >= ' ' && b < 0x7F && !nonASCII {
			if runRule >= 0 {
				flushRun(i)
			}
			if b == ' ' {
				if blank == 0 {
					blankStart = i
				}
				blank++
				hcur++
				hmax = max(hmax, hcur)
			} else if blank > 0 {
				flushBlank(i)
			}
			i++
			continue
		}
		r, size := rune(t[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(t[i:])
		}
		// Characters of the table.
		rule := -1
		if r < 0x20 || r >= 0x7F {
			rule = c.charRule(r)
		}
		if rule != runRule {
			flushRun(i)
			if rule >= 0 {
				runRule, runStart = rule, i
			}
		}
		switch {
		case r == 0x1B && c.escape >= 0:
			end := escapeEnd(t, i)
			s.work += end - i
			add(c.escape, i, end)
		case r == '\r' && c.loneCR >= 0 && (i+1 == len(t) || t[i+1] != '\n'):
			add(c.loneCR, i, i+1)
		}
		// Blanks.
		if isBlank(r) {
			if blank == 0 {
				blankStart = i
			}
			blank++
			switch r {
			case '\n', 0x2028, 0x2029:
				lines++
				hcur = 0
			case '\r':
			default:
				hcur++
				hmax = max(hmax, hcur)
			}
		} else if blank > 0 {
			flushBlank(i)
		}
		// Scripts.
		sc := scriptOf(r)
		if sc == scriptNone {
			flushWord(i)
		} else {
			if word.empty() {
				word.start = i
			}
			word.see(sc)
			all.see(sc)
		}
		i += size
	}
	flushRun(len(t))
	flushBlank(len(t))
	flushWord(len(t))
	if w.name && len(t) > 0 {
		mixed := false
		for _, m := range c.mixed {
			if Rules[m.rule].In == InName && all.mixed() && all.letters >= m.minLetters {
				add(m.rule, 0, len(t))
				mixed = true
			}
		}
		if nonASCII && !mixed && c.nonASCII >= 0 {
			add(c.nonASCII, 0, len(t))
		}
	}
}

// plainASCII says whether t is printable ASCII with no run of minBlank
// spaces: most texts of a tool list are, and in them the character pass can
// find nothing (no table character, no script to mix, no blank run), so one
// tight loop answers for the whole pass. Eight bytes at a time: a byte
// below ' ', at 0x7F or past it sets the high bit of its lane, and so does
// a space; only where two spaces meet are runs counted byte by byte.
func plainASCII(t string, minBlank int) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	adjacent := minBlank <= 1
	i, top := 0, uint64(0)
	for ; i+8 <= len(t) && !adjacent; i += 8 {
		x := uint64(t[i]) | uint64(t[i+1])<<8 | uint64(t[i+2])<<16 | uint64(t[i+3])<<24 |
			uint64(t[i+4])<<32 | uint64(t[i+5])<<40 | uint64(t[i+6])<<48 | uint64(t[i+7])<<56
		del, sp := x^0x7F*ones, x^0x20*ones // zero lanes where x has 0x7F, a space
		if (x|(x-0x20*ones)|(del-ones)&^del)&highs != 0 {
			return false
		}
		// Lanes holding a space (a borrow may mark a lane above one too:
		// that only sends the text to the byte count below).
		z := (sp - ones) &^ sp & highs
		adjacent = z&(z<<8) != 0 || top&z&0x80 != 0
		top = z >> 63 << 7
	}
	rest := i
	for ; i < len(t); i++ {
		if b := t[i]; b < ' ' || b >= 0x7F {
			return false
		}
	}
	if !adjacent && !strings.Contains(t[max(rest-1, 0):], "  ") {
		return true // no two spaces meet in the words read eight at a time, nor after them
	}
	run := 0
	for i := 0; i < len(t); i++ {
		if t[i] != ' ' {
			run = 0
		} else if run++; run >= minBlank {
			return false
		}
	}
	return true
}

// escapeEnd is the end of the escape sequence starting at i: ESC [ … final
// (CSI), ESC ] … BEL or ESC \ (OSC), or ESC and one character; bounded.
func escapeEnd(t string, i int) int {
	const bound = 64
	j := i + 1
	if j >= len(t) {
		return j
	}
	switch t[j] {
	case '[':
		for j++; j < len(t) && j-i < bound; j++ {
			if c := t[j]; c >= 0x40 && c <= 0x7E {
				return j + 1
			} else if c < 0x20 || c > 0x7E {
				return j
			}
		}
		return j
	case ']':
		for j++; j < len(t) && j-i < 4*bound; j++ {
			if t[j] == 0x07 {
				return j + 1
			}
			if t[j] == 0x1B && j+1 < len(t) && t[j+1] == '\\' {
				return j + 2
			}
		}
		return j
	}
	_, size := utf8.DecodeRuneInString(t[j:])
	return j + size
}

func isBlank(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// Scripts that matter for look-alikes: Latin, and the scripts with letters
// that look like Latin ones. Digits and combining marks belong to any word.
type script uint8

const (
	scriptNone    script = iota // not part of a word
	scriptNeutral               // digits, combining marks, _
	scriptLatin
	scriptGreek
	scriptCyrillic
	scriptArmenian
	scriptCherokee
	scriptFullwidth
	scriptMath
	scriptOther // letters of other scripts: part of a word, no look-alike
)

func scriptOf(r rune) script {
	switch {
	case 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z':
		return scriptLatin
	case '0' <= r && r <= '9' || r == '_' || 0x300 <= r && r <= 0x36F:
		return scriptNeutral
	case r < 0xC0:
		return scriptNone
	case r <= 0x24F:
		if r == 0xD7 || r == 0xF7 {
			return scriptNone
		}
		return scriptLatin
	case 0x370 <= r && r <= 0x3FF:
		return scriptGreek
	case 0x400 <= r && r <= 0x52F:
		return scriptCyrillic
	case 0x531 <= r && r <= 0x58F:
		return scriptArmenian
	case 0x13A0 <= r && r <= 0x13FF, 0xAB70 <= r && r <= 0xABBF:
		return scriptCherokee
	case 0xFF21 <= r && r <= 0xFF3A, 0xFF41 <= r && r <= 0xFF5A:
		return scriptFullwidth
	case 0x1D400 <= r && r <= 0x1D7FF:
		return scriptMath
	case 0x1E00 <= r && r <= 0x1EFF:
		return scriptLatin
	case 0x2000 <= r && r <= 0x2BFF, 0x3000 <= r && r <= 0x303F, 0xFE00 <= r && r <= 0xFE0F, 0xFF00 <= r && r <= 0xFF20:
		return scriptNone // punctuation, symbols, arrows, CJK punctuation
	case r >= 0xE0000:
		return scriptNone
	}
	return scriptOther
}

// scriptWord collects the scripts of one word.
type scriptWord struct {
	start   int
	letters int
	seen    uint16 // bit per script
}

func (w *scriptWord) empty() bool { return w.seen == 0 }

func (w *scriptWord) see(sc script) {
	w.seen |= 1 << sc
	if sc != scriptNeutral {
		w.letters++
	}
}

// mixed: Latin together with a look-alike script.
func (w *scriptWord) mixed() bool {
	const lookalikes = 1<<scriptGreek | 1<<scriptCyrillic | 1<<scriptArmenian | 1<<scriptCherokee | 1<<scriptFullwidth | 1<<scriptMath
	return w.seen&(1<<scriptLatin) != 0 && w.seen&lookalikes != 0
}

// addressEnd extends a URL from the end of its scheme to the end of the
// address: up to a blank, a quote or a bracket, without trailing punctuation.
func addressEnd(t string, end int) int {
	const bound = 2048
	j := end
	for j < len(t) && j-end < bound {
		c := t[j]
		if c <= ' ' || c >= 0x7F || strings.IndexByte("\"'<>()[]{}`|\\^", c) >= 0 {
			break
		}
		j++
	}
	for j > end && strings.IndexByte(".,;:!?", t[j-1]) >= 0 {
		j--
	}
	return j
}

// emailsIn runs the e-mail rules: the address, and the address a word
// before it sends something to.
func (s *scanner) emailsIn(t string, add func(rule, start, end int)) {
	if s.c.email < 0 && s.c.sendTo < 0 || s.seen&seenAt == 0 {
		return
	}
	s.work += emails(t, func(start, end int) {
		if s.c.email >= 0 {
			add(s.c.email, start, end)
		}
		if s.c.sendTo >= 0 {
			if from, ok := s.sentTo(start); ok {
				add(s.c.sendTo, from, end)
			}
		}
	})
}

// emails finds local@domain.tld addresses, looking at most 64 bytes back
// and 253 forward from each @; it returns the bytes it looked at.
func emails(t string, hit func(start, end int)) (work int) {
	local := func(c byte) bool { return isWordByte(c) || strings.IndexByte(".%+-", c) >= 0 }
	domain := func(c byte) bool { return isWordByte(c) && c != '_' || c == '.' || c == '-' }
	for at := strings.IndexByte(t, '@'); at >= 0; {
		start := at
		for start > 0 && at-start < 64 && local(t[start-1]) {
			start--
		}
		end := at + 1
		for end < len(t) && end-at <= 253 && domain(t[end]) {
			end++
		}
		work += end - start
		for end > at+1 && (t[end-1] == '.' || t[end-1] == '-') {
			end--
		}
		if dot := strings.LastIndexByte(t[at+1:end], '.'); start < at && dot > 0 && end-(at+1+dot) > 2 {
			hit(start, end)
		}
		next := strings.IndexByte(t[at+1:], '@')
		if next < 0 {
			break
		}
		at += 1 + next
	}
	return work
}

// tagsIn finds markup tags of the table: <name …>, </name>, < name >, case
// insensitive, with at most 256 bytes of attributes.
func (s *scanner) tagsIn(t string, add func(rule, start, end int)) {
	if s.seen&seenLT == 0 {
		return
	}
	var name [32]byte
	for lt := strings.IndexByte(t, '<'); lt >= 0; {
		j := lt + 1
		if j < len(t) && t[j] == '/' {
			j++
		}
		for j < len(t) && t[j] == ' ' && j-lt < 8 {
			j++
		}
		n := 0
		s.work += j - lt
		for j < len(t) && n < len(name) && (isWordByte(t[j]) || t[j] == '-') {
			name[n] = lower(t[j])
			n++
			j++
		}
		if rule, ok := s.c.tags[string(name[:n])]; ok && n > 0 && !placeholder(t, lt, j) {
			for k := j; k < len(t) && k-j <= 256 && t[k] != '<'; k++ {
				s.work++
				if t[k] == '>' {
					add(rule, lt, k+1)
					break
				}
			}
		}
		next := strings.IndexByte(t[lt+1:], '<')
		if next < 0 {
			break
		}
		lt += 1 + next
	}
}

// refusalReach bounds how far around a match refusing looks for its words.
const refusalReach = 200

// refusing says whether the sentence around t[start:end] (at most
// refusalReach bytes either way) has one of the refused rule's words:
// "~/.ssh … are rejected". Bounded per match; a text's matches of the
// rules it lowers are few (a sentence ends at ". ").
func (s *scanner) refusing(t string, start, end int) bool {
	if s.refSeq == s.seq && start >= s.refLo && end <= s.refHi {
		return s.refAnswer // the same sentence as the match before: read once
	}
	lo, hi := start, end
	for lo > 0 && start-lo < refusalReach && !(t[lo-1] == ' ' && lo >= 2 && (t[lo-2] == '.' || t[lo-2] == '!' || t[lo-2] == '?')) {
		lo--
	}
	for hi < len(t) && hi-end < refusalReach && !((t[hi] == '.' || t[hi] == '!' || t[hi] == '?') && (hi+1 == len(t) || t[hi+1] <= ' ')) {
		hi++
	}
	s.work += hi - lo
	s.refSeq, s.refLo, s.refHi, s.refAnswer = s.seq, lo, hi, false
	var w [16]byte
	n := 0
	for i := lo; i <= hi; i++ {
		if i < hi && isAlnum(t[i]) {
			if n < len(w) {
				w[n] = lower(t[i])
			}
			n++
			continue
		}
		if n > 0 && n <= len(w) && s.c.refusedWord[string(w[:n])] {
			s.refAnswer = true
			return true
		}
		n = 0
	}
	return false
}

// placeholder says whether the opening tag t[lt:j] (no attributes, closed
// right after its name) is a command line's placeholder: right after an
// option and a blank ("--secret <secret>", "-k <secret>") or an equals
// sign ("--token=<secret>"). A closing tag is never one.
func placeholder(t string, lt, j int) bool {
	if j >= len(t) || t[j] != '>' || t[lt+1] == '/' || lt == 0 {
		return false
	}
	if t[lt-1] == '=' {
		return true
	}
	k := lt - 1
	if t[k] != ' ' {
		return false
	}
	for k > 0 && lt-k < 40 && (isAlnum(t[k-1]) || t[k-1] == '-' || t[k-1] == '_') {
		k--
	}
	return k+1 < lt-1 && t[k] == '-' && k+1 < len(t) && (t[k+1] == '-' || isAlnum(t[k+1])) && (k == 0 || t[k-1] == ' ' || t[k-1] == '`' || t[k-1] == '(')
}

// sentTo says whether one of the send_to rule's words is among the five
// words before an address at start, and where the first such word starts.
func (s *scanner) sentTo(start int) (int, bool) {
	ws := s.words
	lo, hi := 0, len(ws) // the first word ending after start
	for lo < hi {
		m := (lo + hi) / 2
		if int(ws[m].end) <= start {
			lo = m + 1
		} else {
			hi = m
		}
	}
	for k := lo - 1; k >= 0 && k >= lo-5; k-- {
		s.work++
		if s.c.sendWord[string(s.low[ws[k].lo:ws[k].hi])] {
			from := int(ws[k].start)
			for j := k - 1; j >= 0 && j >= lo-5; j-- { // the earliest, for the span
				if s.c.sendWord[string(s.low[ws[j].lo:ws[j].hi])] {
					from = int(ws[j].start)
				}
			}
			return from, true
		}
	}
	return 0, false
}

// markupIn finds HTML comments (<!-- to -->, or to 160 bytes when not
// closed there) and bracketed labels ([Important], [SYSTEM DIRECTIVE]: one
// to four words of letters, one of them the rule's).
func (s *scanner) markupIn(t string, add func(rule, start, end int)) {
	if s.c.comment >= 0 && s.seen&seenLT != 0 {
		for i := strings.Index(t, "<!--"); i >= 0; {
			end := min(len(t), i+MaxSpan)
			if j := strings.Index(t[i+4:end], "-->"); j >= 0 {
				end = i + 4 + j + 3
			}
			s.work += end - i
			add(s.c.comment, i, end)
			next := strings.Index(t[end:], "<!--")
			if next < 0 {
				break
			}
			i = end + next
		}
	}
	if s.c.bracket < 0 || s.seen&seenBracket == 0 {
		return
	}
	var word [16]byte
	for lb := strings.IndexByte(t, '['); lb >= 0; {
		j, n, words, hit := lb+1, 0, 0, false
		for ; j < len(t) && j-lb <= 48; j++ {
			c := t[j]
			s.work++
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
				if n == 0 {
					words++
				}
				if n < len(word) {
					word[n] = lower(c)
				}
				n++
				continue
			}
			if n > 0 && n <= len(word) && s.c.bracketWord[string(word[:n])] {
				hit = true
			}
			n = 0
			if c != ' ' && c != '_' && c != '-' {
				break
			}
		}
		if j < len(t) && t[j] == ']' && hit && words <= 4 {
			add(s.c.bracket, lb, j+1)
		}
		next := strings.IndexByte(t[lb+1:], '[')
		if next < 0 {
			break
		}
		lb += 1 + next
	}
}
