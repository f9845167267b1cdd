package scan

import (
	"strings"

	"github.com/crawlcheck/verifier/core/internal/canon"
)

// foreignRule is the compiled data of the foreign_tool matcher (issue 38
// round 4): a tool that is on no list the scan was given, named as a tool
// the agent is to call ("then call `playwright_screenshot`", "call the
// 'web_search' tool") or as a tool whose behaviour the text announces ("the
// get_historical_stock_prices tool now uses …"). The scan reads one
// server's list, so a name the list does not have is another server's: an
// honest server names its own tools, and names others in prose, not as
// orders. What the scan cannot know is a name an honest server gets wrong,
// so names are compared loosely (case, separators and plurals ignored, a
// tail of a name of the list is that name).
type foreignRule struct {
	rule   int
	verbs  map[string]bool // a verb that orders the call, right before the name (an article between)
	claims [][]string      // words that, after "<name> tool", announce what it now does
	routes []*routeRule    // the foreign_route rules (route.go)
}

// foreignGroups reads the matcher's Args: verbs, "|", claims (one or two
// words each, space-separated).
func foreignGroups(rule int, args []string) *foreignRule {
	f := &foreignRule{rule: rule, verbs: map[string]bool{}}
	verbs := true
	for _, a := range args {
		switch {
		case a == "|":
			verbs = false
		case verbs:
			f.verbs[a] = true
		default:
			f.claims = append(f.claims, strings.Fields(a))
		}
	}
	if len(f.verbs) == 0 || len(f.claims) == 0 {
		panic("scan: a foreign_tool rule needs verbs, \"|\" and claims")
	}
	return f
}

// foreignState is what the matcher keeps per scanner: the list's names, and
// the current tool's parameter names, both as foreignKey reads them.
type foreignState struct {
	names    []string        // the list's names, as the list spells them
	own      map[string]bool // every name of the list and every tail of one at a word boundary
	params   map[string]bool
	paramsOf *canon.Value // the schema params was read from
	key      []byte
}

// foreignKey is a name with case and separators dropped and each word's
// final "s" dropped (split on _, -, ., blanks and camelCase), so that
// listFollowedProjects is list_followed_project and
// currents-get-test-signature is currents-get-tests-signatures. tails, when
// not nil, receives the key of every tail of the name that starts at a
// word: orchestrator-next is a tail of monitor_instrumentation_orchestrator-next.
func foreignKey(buf []byte, name string, tails map[string]bool) []byte {
	buf = buf[:0]
	var starts [32]int
	n := 0
	dropS := func() { // the final "s" of the word just read, if it has two letters or more
		if n > 0 && len(buf)-starts[n-1] > 1 && buf[len(buf)-1] == 's' {
			buf = buf[:len(buf)-1]
		}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isAlnum(c) {
			continue
		}
		if i == 0 || !isAlnum(name[i-1]) || 'A' <= c && c <= 'Z' && 'a' <= name[i-1] && name[i-1] <= 'z' {
			dropS()
			if n < len(starts) {
				starts[n] = len(buf)
				n++
			}
		}
		buf = append(buf, lower(c))
	}
	dropS()
	if tails != nil {
		for k := 0; k < n; k++ {
			tails[string(buf[starts[k]:])] = true
		}
	}
	return buf
}

// foreignIn is called for each identifier t[lo:hi] of a text (letters,
// digits, _, - and .): a marked one (an inner _, -, digit or capital) or a
// plain word in quotes or backticks. It adds a finding when the identifier
// names no tool of the list and no parameter of the current tool, and is
// either called (one of the verbs right before it, "the" between allowed)
// or announced ("<name> tool" followed by a claim).
func (s *scanner) foreignIn(t string, lo, hi int, marked bool, add func(rule, start, end int)) {
	f := s.c.foreign
	for lo < hi && (t[lo] == '.' || t[lo] == '-') {
		lo++
	}
	for hi > lo && (t[hi-1] == '.' || t[hi-1] == '-') {
		hi--
	}
	if hi-lo < 3 || hi-lo > 64 || lo == 0 {
		return
	}
	quoted := strings.IndexByte("`'\"", t[lo-1]) >= 0 && hi < len(t) && t[hi] == t[lo-1]
	if marked && !compound(t[lo:hi]) || !marked && !quoted {
		return
	}
	from, to := -1, hi
	if v, ok := s.calledBefore(t, lo); ok {
		from = v
	} else if end, ok := s.announcedAfter(t, hi); ok {
		from, to = lo, end
	}
	rule := f.rule
	if from < 0 {
		if r, v, ok := s.routed(t, lo, hi); ok {
			from, rule = v, r
		}
	}
	if from < 0 || s.ownOrParam(t[lo:hi]) {
		return
	}
	add(rule, from, to)
}

// calledBefore says whether a verb of the rule ends right before lo, across
// at most three blanks, quotes, backticks or asterisks and an optional
// "the", and is not the tail of a longer word ("paid-call pendingApproval"
// is not a call). It returns where the verb starts. Bounded: a few bytes
// back (wordBefore, route.go).
func (s *scanner) calledBefore(t string, lo int) (int, bool) {
	v, w, ok := s.wordBefore(t, lo)
	if ok && w.is("the") {
		v, w, ok = s.wordBefore(t, v)
	}
	return v, ok && w.in(s.c.foreign.verbs)
}

// announcedAfter says whether "tool" or "function" follows hi (after a
// closing quote and one blank) and then one of the rule's claims, and
// returns where the claim ends. Bounded: a few words ahead.
func (s *scanner) announcedAfter(t string, hi int) (int, bool) {
	i := hi
	if i < len(t) && strings.IndexByte("`'\"", t[i]) >= 0 {
		i++
	}
	next := func() string { // the next word after one blank, lower case
		if i >= len(t) || t[i] != ' ' {
			return ""
		}
		i++
		a := i
		for i < len(t) && i-a < 12 && byteClass[t[i]]&classAlnum != 0 {
			i++
		}
		s.work += i - a + 1
		return strings.ToLower(t[a:i])
	}
	if w := next(); w != "tool" && w != "function" {
		return 0, false
	}
	at := i
	for _, claim := range s.c.foreign.claims {
		i = at
		ok := true
		for _, w := range claim {
			if next() != w {
				ok = false
				break
			}
		}
		if ok {
			return i, true
		}
	}
	return 0, false
}

// ownOrParam says whether the identifier names a tool of the list (or a
// tail of one) or a parameter of the current tool. The list's keys are
// built on first need, the parameters' once per tool.
func (s *scanner) ownOrParam(id string) bool {
	s.toolRead = true
	st := &s.foreign
	if st.own == nil {
		st.own = map[string]bool{}
		for _, name := range st.names {
			st.key = foreignKey(st.key, name, st.own)
		}
	}
	if st.paramsOf != s.schema || st.params == nil {
		st.paramsOf = s.schema
		st.params = map[string]bool{}
		if s.schema != nil {
			if props, ok := s.schema.Get("properties"); ok && props.Kind() == canon.Object {
				for _, m := range props.Members() {
					st.key = foreignKey(st.key, m.Key, nil)
					st.params[string(st.key)] = true
				}
			}
		}
	}
	st.key = foreignKey(st.key, id, nil)
	s.work += len(id)
	return st.own[string(st.key)] || st.params[string(st.key)]
}
