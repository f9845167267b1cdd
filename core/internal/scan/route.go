package scan

import (
	"sort"
	"strings"
)

// routeRule is the compiled data of the foreign_route matcher (issue 38
// round 6): a tool that is on no list the scan was given, named right after
// a word that routes something to it ("pass it to telemetry_push", "keep a
// copy with backup_sync", "uploaded through file_share", "mirror its
// content into wiki_cache"), in a sentence with a verb that moves data
// (send, pass, copy, log, upload, register …). The foreign_tool matcher
// reads a call ordered outright; this one reads the same steering worded
// as a destination. Either word alone is everywhere in honest text ("set
// to Standard_DS1_v2", "pass the id"), and an identifier of the list (a
// sibling tool) or a parameter of the tool is never a destination here:
// a server routing data among its own tools is normal.
type routeRule struct {
	rule   int
	routes map[string]bool // the word right before the name: to, with, via, into, through …
	flows  map[string]bool // a verb of moving data before it in the same sentence
	data   map[string]bool // a word for what is moved (the user's text, files, messages …) before it in the same sentence
}

// routeWindow bounds how many words before the name are read for a verb of
// moving data: the matcher stays linear (a constant per name, and
// only for names of no list after a route word).
const routeWindow = 16

// routeGroups reads the matcher's Args: route words, "|", verbs of moving
// data, "|", words for what is moved. The foreign_tool rule must come before it in the table: the two
// share the list's names (foreignState).
func routeGroups(f *foreignRule, rule int, args []string) {
	if f == nil {
		panic("scan: a foreign_route rule needs the foreign_tool rule before it")
	}
	r := &routeRule{rule: rule, routes: map[string]bool{}, flows: map[string]bool{}, data: map[string]bool{}}
	groups := []map[string]bool{r.routes, r.flows, r.data}
	g := 0
	for _, a := range args {
		if a == "|" {
			if g++; g == len(groups) {
				panic("scan: a foreign_route rule has three groups of words")
			}
			continue
		}
		groups[g][a] = true
	}
	if len(r.routes) == 0 || len(r.flows) == 0 || len(r.data) == 0 {
		panic("scan: a foreign_route rule needs route words, \"|\", verbs, \"|\" and data words")
	}
	f.route = r
}

// routedBefore says whether a route word of the rule ends right before lo
// (across blanks, quotes, backticks or asterisks, at most three), and
// returns where it starts. Only a name written with "_" and a lower-case
// letter is read (snake_case, as most tool names are; GITHUB_TOKEN is an
// environment variable): a camelCase or hyphenated word
// after "to" or "via" was, on the real servers, a field, a parameter of
// another tool, a product or a compound adjective ("via `workspaceRoot`",
// "with **ShopifyQL**", "to hand-drawn"). Bounded: a few bytes back.
func (s *scanner) routedBefore(t string, lo, hi int) (int, bool) {
	r := s.c.foreign.route
	if r == nil || strings.IndexByte(t[lo:hi], '_') < 0 || !hasLower(t[lo:hi]) {
		return 0, false
	}
	j := lo
	for k := 0; k < 3 && j > 0 && strings.IndexByte(" \t\r\n`'\"*", t[j-1]) >= 0; k++ {
		j--
	}
	if j == lo {
		return 0, false
	}
	v := j
	for v > 0 && j-v < 10 && byteClass[t[v-1]]&classAlnum != 0 {
		v--
	}
	s.work += lo - v
	if v == j || v > 0 && byteClass[t[v-1]]&classID != 0 {
		return 0, false
	}
	var buf [10]byte
	for k := v; k < j; k++ {
		buf[k-v] = lower(t[k])
	}
	return v, r.routes[string(buf[:j-v])]
}

// flowsBefore says whether a verb of moving data and a word for what is
// moved are among the words of the sentence before the word that starts at
// lo, at most routeWindow words back: the verb governs the destination and
// the data is the user's ("pass the user's text along to review_queue";
// "sync the repository with upstream_main" moves no such thing). The words are splitWords' (already split for the phrase
// pass).
func (s *scanner) flowsBefore(lo int) bool {
	r, ws := s.c.foreign.route, s.words
	k := sort.Search(len(ws), func(i int) bool { return int(ws[i].start) >= lo })
	if k == len(ws) {
		return false
	}
	sent := ws[k].sentence
	flow, data := false, false
	for q := k - 1; q >= max(0, k-routeWindow) && ws[q].sentence == sent && !(flow && data); q-- {
		s.work++
		w := s.low[ws[q].lo:ws[q].hi]
		flow = flow || r.flows[string(w)]
		data = data || r.data[string(w)]
	}
	return flow && data
}

// hasLower says whether id has a lower-case ASCII letter.
func hasLower(id string) bool {
	for i := 0; i < len(id); i++ {
		if 'a' <= id[i] && id[i] <= 'z' {
			return true
		}
	}
	return false
}
