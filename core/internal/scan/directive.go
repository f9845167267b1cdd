package scan

import "strings"

// directiveRule is the compiled data of the directive matcher: a clause
// that orders the agent (a directive word), about where something goes or
// what an argument holds (a role word, or a parameter of the tool read),
// and names a concrete value (an address, a domain, an account), is how
// parameter tampering reads whatever its words ("the refund should go to
// card ending 4242", "use wallet bc1q… as the receiving wallet for all
// conversions"). Documentation gives values too, as examples or defaults:
// a clause that says so is not one.
type directiveRule struct {
	rule                        int
	directive, role, docs, tlds map[string]bool
}

// directiveGroups reads the matcher's Args: directive words, "|", role
// words, "|", documentation words, "|", top-level domains a bare domain
// may end with.
func directiveGroups(rule int, args []string) *directiveRule {
	d := &directiveRule{rule: rule, directive: map[string]bool{}, role: map[string]bool{}, docs: map[string]bool{}, tlds: map[string]bool{}}
	groups := []map[string]bool{d.directive, d.role, d.docs, d.tlds}
	g := 0
	for _, a := range args {
		if a == "|" {
			g++
			if g == len(groups) {
				panic("scan: a directive rule has four groups of words")
			}
			continue
		}
		groups[g][a] = true
	}
	if g != len(groups)-1 {
		panic("scan: a directive rule has four groups of words")
	}
	return d
}

// clause is what the directive matcher has seen of the current clause:
// where each kind of cue first is (start -1 when not yet).
type clause struct {
	dirStart, dirEnd     int
	roleStart, roleEnd   int
	valueStart, valueEnd int
	docs                 bool
	prev                 string // the previous word, lower case, for "for example"
}

func (c *clause) reset() {
	*c = clause{dirStart: -1, roleStart: -1, valueStart: -1}
}

// chunkByte says whether c belongs to a chunk: what is not a blank, a quote
// or a bracket. A value is a chunk or a part of one.
func chunkByte(c byte) bool {
	return c > ' ' && strings.IndexByte("'\"`()[]{}<>,;*|", c) < 0
}

// directivesIn runs the directive matcher over a text: one pass over its
// chunks, each looked at a constant number of times, so linear. Clauses end
// at a line break, or at '.', '!' or '?' before a blank (not "e.g." or
// "i.e.").
func (s *scanner) directivesIn(t string, add func(rule, start, end int)) {
	d := s.c.directive
	if d == nil {
		return
	}
	var c clause
	c.reset()
	flush := func() {
		if c.dirStart >= 0 && c.roleStart >= 0 && c.valueStart >= 0 && !c.docs {
			add(d.rule, min(c.dirStart, c.roleStart, c.valueStart), max(c.dirEnd, c.roleEnd, c.valueEnd))
		}
		c.reset()
	}
	for i := 0; i < len(t); {
		if t[i] == '\n' {
			flush()
			i++
			continue
		}
		if !chunkByte(t[i]) {
			i++
			continue
		}
		start := i
		for i < len(t) && chunkByte(t[i]) {
			i++
		}
		s.work += i - start
		end := i
		// Punctuation that closes a chunk is not part of its value.
		vend := end
		for vend > start && strings.IndexByte(".:!?", t[vend-1]) >= 0 {
			vend--
		}
		abbrev := vend-start == 3 && (strings.EqualFold(t[start:vend], "e.g") || strings.EqualFold(t[start:vend], "i.e"))
		if abbrev {
			c.docs = true
		} else if c.valueStart < 0 && isValue(t[start:vend], d.tlds) {
			c.valueStart, c.valueEnd = start, vend
		}
		s.directiveWords(t, start, vend, &c)
		if !abbrev && end > start && strings.IndexByte(".!?", t[end-1]) >= 0 && (end == len(t) || t[end] <= ' ') {
			flush()
		}
	}
	flush()
}

// directiveWords reads the words of a chunk (letters and digits; an
// apostrophe inside a word is dropped) against the rule's groups and the
// tool's parameter names.
func (s *scanner) directiveWords(t string, lo, hi int, c *clause) {
	d := s.c.directive
	var buf [24]byte
	for i := lo; i < hi; {
		if !isAlnum(t[i]) {
			i++
			continue
		}
		a, n := i, 0
		for i < hi && (isAlnum(t[i]) || t[i] == '\'' && i+1 < hi && isAlnum(t[i+1])) {
			if t[i] != '\'' && n < len(buf) {
				buf[n] = lower(t[i])
				n++
			}
			i++
		}
		if i-a > len(buf) {
			c.prev = ""
			continue
		}
		w := string(buf[:n])
		switch {
		case d.docs[w], w == "example" && (c.prev == "for" || c.prev == "an" || i < len(t) && t[i] == ':'):
			c.docs = true
		case d.directive[w]:
			if c.dirStart < 0 {
				c.dirStart, c.dirEnd = a, i
			}
		case d.role[w] || s.params[w]:
			if c.roleStart < 0 {
				c.roleStart, c.roleEnd = a, i
			}
		}
		c.prev = w
	}
}

// isValue says whether a chunk is a concrete destination or account: an
// e-mail address, a URL, a domain ending in one of tlds, an IPv4 address,
// six digits or more in a row, or an identifier of eight characters or more
// with a letter and four digits or more (an IBAN, a wallet, a handle).
func isValue(v string, tlds map[string]bool) bool {
	if len(v) < 4 {
		return false
	}
	if at := strings.IndexByte(v, '@'); at > 0 && strings.IndexByte(v[at+1:], '.') > 0 {
		return true
	}
	if i := strings.Index(v, "://"); i > 0 && i+3 < len(v) && isAlnum(v[i+3]) {
		return true
	}
	if len(v) > 4 && strings.EqualFold(v[:4], "www.") && isAlnum(v[4]) {
		return true
	}
	letters, digits, run, maxRun, dots, ident := 0, 0, 0, 0, 0, true
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case '0' <= c && c <= '9':
			digits++
			run++
			maxRun = max(maxRun, run)
			continue
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			letters++
		case c == '.':
			dots++
			ident = false
		case c == '_' || c == '-':
		default:
			ident = false
		}
		run = 0
	}
	if maxRun >= 6 || ident && letters > 0 && digits >= 4 && len(v) >= 8 {
		return true
	}
	if dots == 3 && letters == 0 && ipv4(v) {
		return true
	}
	if dots >= 1 && letters > 0 {
		dot := strings.LastIndexByte(v, '.')
		return dot > 0 && tlds[strings.ToLower(v[dot+1:])] && isAlnum(v[0]) && isAlnum(v[dot-1])
	}
	return false
}

// ipv4 says whether v is four numbers of one to three digits joined by dots.
func ipv4(v string) bool {
	n := 0
	for _, p := range strings.Split(v, ".") {
		if len(p) == 0 || len(p) > 3 {
			return false
		}
		n++
	}
	return n == 4
}

// calledWithArguments says whether the identifier t[lo:hi], followed by
// "(", is a call written as code right after one of the call_syntax rule's
// verbs ("call `audit_log(level='x')`"), of a tool that is neither the one
// described nor one of its list: an order to run another server's tool with
// arguments the text fixes. It returns the span, from the verb to the
// closing parenthesis (at most 80 bytes on) or the opening one. Bounded.
func (s *scanner) calledWithArguments(t string, lo, hi int) (int, int, bool) {
	v, ok := verbBefore(t, lo, s.c.callSyntaxVerb)
	if !ok {
		return 0, 0, false
	}
	var buf [64]byte
	if hi-lo > len(buf) {
		return 0, 0, false
	}
	for k := lo; k < hi; k++ {
		buf[k-lo] = lower(t[k])
	}
	if id := string(buf[:hi-lo]); id == s.self || s.own[id] {
		return 0, 0, false
	}
	end := hi + 1
	if i := strings.IndexByte(t[hi:min(len(t), hi+80)], ')'); i > 0 {
		end = hi + i + 1
	}
	s.work += end - v
	return v, end, true
}
