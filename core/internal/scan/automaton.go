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
	next    []int32   // state*columns + column → next state (times columns once built)
	out     [][]int32 // state → literals ending there
	ends    []bool    // state*columns → whether literals end in that state
}

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
	// Transitions hold the target's row offset, sparing a multiplication
	// per byte; ends marks the rows of states where literals end.
	a.ends = make([]bool, len(a.next))
	for i, t := range a.next {
		a.next[i] = t * int32(a.columns)
	}
	for st, o := range a.out {
		a.ends[st*a.columns] = len(o) > 0
	}
	return a
}

// find calls hit with each literal occurrence in s that meets its word
// boundaries, as (literal, start, end).
func (a *automaton) find(s string, hit func(l *literal, start, end int)) {
	row := int32(0)
	for i := 0; i < len(s); i++ {
		row = a.next[row+int32(a.class[s[i]])]
		if !a.ends[row] {
			continue
		}
		for _, li := range a.out[row/int32(a.columns)] {
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
)

var byteClass = func() (t [256]uint8) {
	for c := range 256 {
		b := byte(c)
		if 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' {
			t[c] |= classAlnum | classWord | classID
		}
	}
	t['_'] |= classWord | classID
	t['-'] |= classID
	t['.'] |= classID
	return t
}()

func isWordByte(c byte) bool { return byteClass[c]&classWord != 0 }
