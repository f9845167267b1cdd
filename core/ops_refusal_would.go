package core

import (
	"strconv"
	"strings"

	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/policy"
	"github.com/crawlcheck/verifier/core/textsafe"
)

// wouldNamedTools is how many withheld tools an observe-mode notice names
// one by one; the rest are counted. A server that changed two hundred
// tools gives a person one readable line, and the record names them all.
const wouldNamedTools = 5

// wouldText words what enforce would have refused in an observe-mode
// record (its would member, each observation's would): the line a host
// prints once, on stderr or console.warn, so that observe is not silent
// about a change it let through (issue 34). ok is false when enforce
// would have refused nothing: a record of another mode, or one whose
// would effects all proceed. A session enforce would stop is named alone
// (it would withhold every tool); otherwise each tool it would withhold,
// in name order, with the observations that decided and what differed.
func wouldText(rec canon.Value) (string, bool) {
	w, ok := rec.Get("would")
	if !ok || w.Kind() != canon.Object {
		return "", false
	}
	var clauses []string
	// pause_tool as the session's effect only says some tool is withheld.
	if e, ok := policy.ParseEffect(memberStr(w, "effect")); ok && (e == policy.Refresh || e >= policy.Pause) {
		clauses = append(clauses, "the session "+effectWhy(rec, "", false, e.String(), "would"))
	} else {
		tools, _ := w.Get("tools")
		var blocked []string
		for _, m := range tools.Members() {
			s, _ := m.Value.Str()
			if e, ok := policy.ParseEffect(s); ok && e.Blocks() {
				blocked = append(blocked, m.Key)
			}
		}
		for i, name := range blocked {
			if i == wouldNamedTools {
				clauses = append(clauses, "and "+strconv.Itoa(len(blocked)-i)+" more tools")
				break
			}
			te, _ := tools.Get(name)
			s, _ := te.Str()
			clauses = append(clauses, "tool \""+textsafe.Escape(name)+"\" "+effectWhy(rec, name, true, s, "would"))
		}
	}
	if len(clauses) == 0 {
		return "", false
	}
	return "crawlcheck: observe mode let this through; enforce would have: " + strings.Join(clauses, "; ") + recordSuffix(memberStr(rec, "record_sha256")), true
}
