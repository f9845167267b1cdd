package scan

import "strings"

// An Aho–Corasick automaton over ASCII-folded bytes finds every literal of
// the table in one pass, whatever their number: the cost is one table
// lookup per byte of text.

type literal struct {
	text                 string   // lower case, without anchors
	startBound, endBound bool     // a word boundary is required there
	notBefore            []string // lower case texts that must not follow the match ("id_rsa" before ".pub" is a public key)
	rule                 int
}

// newLiteral reads "^text$!x!y": ^ and $ ask for a word boundary, and each
// !x names a text that must not follow the match.
func newLiteral(s string, rule int) literal {
	l := literal{rule: rule}
	if i := strings.IndexByte(s, '!'); i > 0 {
		for _, x := range strings.Split(s[i+1:], "!") {
			if x == "" {
				panic("scan: empty exclusion in literal " + s)
			}
			l.notBefore = append(l.notBefore, strings.ToLower(x))
		}
		s = s[:i]
	}
	if len(s) > 1 && s[0] == '^' {
		l.startBound, s = true, s[1:]
	}
	if len(s) > 1 && s[len(s)-1] == '$' {
		l.endBound, s = true, s[:len(s)-1]
	}
	b := []byte(s)
	for i, c := range b {
		if c >= 0x80 {
			panic("scan: literal " + s + " is not ASCII")
		}
		b[i] = lower(c)
	}
	l.text = string(b)
	return l
}

type automaton struct {
	lits    []literal
	class   [256]uint8 // byte → column; 0 for bytes in no literal
	columns int
	// next is, once built, the byte → column table (class) in its first
	// acBase entries, then the transitions: the row of a state (acBase +
	// state*columns) plus a column → the row of the next state. The words
	// pass steps with next[row+next[c]]: one table, so its loop holds one
	// pointer for both (splitWords).
	next   []int32
	out    [][]int32 // state → literals ending there
	endRow int32     // the first row of a state where literals end: those states are numbered last
}

// acBase is where the automaton's rows start in next, after the byte →
// column table; it is also the row of the start state.
const acBase = 256

func newAutomaton(lits []literal) *automaton {
	a := &automaton{lits: lits, columns: 1}
	for _, l := range lits {
		for i := 0; i < len(l.text); i++ {
			c := l.text[i]
			if a.class[c] == 0 {
				a.class[c] = uint8(a.columns)
				a.columns++
			}
		}
	}
	for c := 'a'; c <= 'z'; c++ {
		a.class[c-'a'+'A'] = a.class[c]
	}
	// The trie.
	a.next = make([]int32, a.columns)
	a.out = [][]int32{nil}
	for li, l := range lits {
		s := int32(0)
		for i := 0; i < len(l.text); i++ {
			col := int32(a.class[l.text[i]])
			if a.next[s*int32(a.columns)+col] == 0 {
				a.next = append(a.next, make([]int32, a.columns)...)
				a.out = append(a.out, nil)
				a.next[s*int32(a.columns)+col] = int32(len(a.out) - 1)
			}
			s = a.next[s*int32(a.columns)+col]
		}
		a.out[s] = append(a.out[s], int32(li))
	}
	// Failure links folded into the transition table, breadth first.
	fail := make([]int32, len(a.out))
	queue := []int32{}
	for col := 1; col < a.columns; col++ {
		if t := a.next[col]; t != 0 {
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		a.out[s] = append(a.out[s], a.out[fail[s]]...)
		for col := 0; col < a.columns; col++ {
			i := s*int32(a.columns) + int32(col)
			f := a.next[fail[s]*int32(a.columns)+int32(col)]
			if t := a.next[i]; t != 0 && col != 0 {
				fail[t] = f
				queue = append(queue, t)
			} else {
				a.next[i] = f
			}
		}
	}
	// States where literals end are numbered after all others, so that
	// the scan asks "does anything end here" with one comparison of the
	// row it already holds, instead of a load from a table of its own.
	perm := make([]int32, len(a.out)) // old state → new
	n := int32(0)
	for _, last := range []bool{false, true} {
		for st, o := range a.out {
			if (len(o) > 0) == last {
				perm[st] = n
				n++
			}
		}
		if !last {
			a.endRow = acBase + n*int32(a.columns)
		}
	}
	// Transitions hold the target's row, sparing a multiplication per
	// byte; the byte → column table comes first.
	next := make([]int32, acBase+len(a.next))
	for c := range acBase {
		next[c] = int32(a.class[c])
	}
	out := make([][]int32, len(a.out))
	for st := range a.out {
		out[perm[st]] = a.out[st]
		for col := 0; col < a.columns; col++ {
			next[acBase+perm[st]*int32(a.columns)+int32(col)] = acBase + perm[a.next[st*a.columns+col]]*int32(a.columns)
		}
	}
	a.next, a.out = next, out
	return a
}

// acHit is where the automaton stood after reading byte at: a state where
// literals end (its row).
type acHit struct {
	at  int
	row int32
}

// report calls hit with each literal occurrence of hits (the automaton's
// end states over s, as the words pass collects them) that meets its word
// boundaries, as (literal, start, end), in the order of s.
func (a *automaton) report(s string, hits []acHit, hit func(l *literal, start, end int)) {
	for _, h := range hits {
		i := h.at
		for _, li := range a.out[(h.row-acBase)/int32(a.columns)] {
			l := &a.lits[li]
			start, end := i+1-len(l.text), i+1
			// A boundary is anything but a letter or digit: identifiers
			// split on _ as words do (ssh_id_rsa names id_rsa).
			if l.startBound && start > 0 && byteClass[s[start-1]]&classAlnum != 0 {
				continue
			}
			if l.endBound && end < len(s) && byteClass[s[end]]&classAlnum != 0 {
				continue
			}
			if followedBy(s[end:], l.notBefore) {
				continue
			}
			hit(l, start, end)
		}
	}
}

// followedBy says whether rest starts with one of xs (lower case), in any
// case. Bounded by the longest of xs.
func followedBy(rest string, xs []string) bool {
	for _, x := range xs {
		if len(rest) >= len(x) && strings.EqualFold(rest[:len(x)], x) {
			return true
		}
	}
	return false
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// Byte classes, by table: these are asked once or more per byte of text.
const (
	classAlnum = 1 << iota // ASCII letter or digit
	classWord              // letter, digit or _
	classID                // letter, digit, _, - or .
	classDigit             // ASCII digit
	classUpper             // ASCII capital letter
	classLower             // ASCII small letter
	classMark              // digit, _, - or .: what marks an identifier as a tool name (identifiersIn)
)

// classDigitShift is classDigit's bit, for adding it up without a branch.
const classDigitShift = 3

var byteClass = func() (t [256]uint8) {
	for c := range 256 {
		b := byte(c)
		if 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' {
			t[c] |= classAlnum | classWord | classID
		}
		if '0' <= b && b <= '9' {
			t[c] |= classDigit
		}
		if 'A' <= b && b <= 'Z' {
			t[c] |= classUpper
		}
		if 'a' <= b && b <= 'z' {
			t[c] |= classLower
		}
	}
	t['_'] |= classWord | classID
	t['-'] |= classID
	t['.'] |= classID
	for _, c := range "0123456789_-." {
		t[c] |= classMark
	}
	return t
}()

func isWordByte(c byte) bool { return byteClass[c]&classWord != 0 }
