package core

import (
	"strings"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/textsafe"
)

// opRefusal words why a record refuses a call or a session, for the error
// every host raises (Go's RefusedError, JS and Python's ContinuityRefused):
// the effect, the observations that decided it and, for the first, what
// differed, every string from the record shown through textsafe. One
// wording, so that Go, JavaScript and Python say the same bytes.
func opRefusal(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	rec := rd.RequiredDoc("record")
	tool, hasTool := rd.Str("tool", false), rd.Has("tool")
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	if rec.Kind() != canon.Object {
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.record must be a continuity record object")
	}
	return canon.Obj(canon.M("text", canon.Str(refusalText(rec, tool, hasTool)))), nil
}

// refusalVerbs are how an effect reads in a refusal; another effect is
// written as itself.
var refusalVerbs = map[string]string{"pause_tool": "withheld", "pause": "paused", "deny": "denied", "refresh": "refused until refreshed"}

func refusalText(rec canon.Value, tool string, hasTool bool) string {
	str := func(v canon.Value, k string) string {
		x, _ := v.Get(k)
		s, _ := x.Str()
		return s
	}
	effect := str(rec, "effect")
	var b strings.Builder
	b.WriteString("crawlcheck: ")
	if hasTool {
		b.WriteString("tool \"" + textsafe.Escape(tool) + "\" ")
		tools, _ := rec.Get("tools")
		te, ok := tools.Get(tool)
		if !ok {
			b.WriteString("refused: not in the checked tool list")
			return b.String() + recordSuffix(str(rec, "record_sha256"))
		}
		effect, _ = te.Str()
	} else {
		b.WriteString("session ")
	}
	verb := refusalVerbs[effect]
	if verb == "" {
		verb = textsafe.Escape(effect)
	}
	b.WriteString(verb + " (" + textsafe.Escape(effect) + ")")

	// The observations that decided: those of the tool (or the session's)
	// that did not proceed; all of them when every one proceeded.
	obs, _ := rec.Get("observations")
	var decided, all []canon.Value
	for _, o := range obs.Elems() {
		t, _ := o.Get("tool")
		name, named := t.Str()
		if hasTool && named && name != tool {
			continue
		}
		all = append(all, o)
		if e := str(o, "effect"); e != "proceed" && e != "proceed_recorded" {
			decided = append(decided, o)
		}
	}
	if len(decided) == 0 {
		decided = all
	}
	if len(decided) > 0 {
		seen := map[string]bool{}
		var names []string
		for _, o := range decided {
			if n := str(o, "observation"); !seen[n] {
				seen[n] = true
				names = append(names, textsafe.Escape(n))
			}
		}
		b.WriteString(": " + strings.Join(names, ", "))
		if what := whatDiffered(decided[0]); what != "" {
			b.WriteString(" (" + what + ")")
		}
	}
	return b.String() + recordSuffix(str(rec, "record_sha256"))
}

func recordSuffix(sha string) string { return " (record " + textsafe.Escape(sha) + ")" }

// whatDiffered is one observation's difference in words: the tool and part
// it names, then its detail — the classes of a changed text first, a diff
// as its inserted and deleted text, an
// identity mismatch as what was approved and what is answering, any other
// member as its name and value. Values are clipped to 120 bytes.
func whatDiffered(o canon.Value) string {
	var parts []string
	if t, _ := o.Get("tool"); t.Kind() == canon.String {
		s, _ := t.Str()
		w := textsafe.Escape(s)
		if p, _ := o.Get("part"); p.Kind() == canon.String {
			ps, _ := p.Str()
			w += " " + textsafe.Escape(ps)
		}
		parts = append(parts, w)
	}
	identity := false
	if n, _ := o.Get("observation"); n.String() == `"server_identity_mismatch"` {
		identity = true
	}
	var details []string
	d, _ := o.Get("detail")
	// What a changed text introduces comes first (issue 38, docs/scan.md
	// "Change classes"); its evidence is the inserted text, which follows.
	if cs, ok := d.Get("classes"); ok && cs.Kind() == canon.Array {
		var names []string
		for _, c := range cs.Elems() {
			s, _ := c.Str()
			names = append(names, textsafe.Escape(s))
		}
		details = append(details, "classes "+strings.Join(names, ", "))
	}
	for _, m := range d.Members() {
		switch {
		case m.Key == "classes" || m.Key == "class_evidence":
		case strings.HasSuffix(m.Key, "_diff") && m.Value.Kind() == canon.Array:
			for _, e := range m.Value.Elems() {
				op, _ := e.Get("op")
				text, _ := e.Get("text")
				s, _ := text.Str()
				switch op.String() {
				case `"insert"`:
					details = append(details, "inserted \""+clipShown(s)+"\"")
				case `"delete"`:
					details = append(details, "deleted \""+clipShown(s)+"\"")
				}
			}
		case identity && m.Key == "observed":
			details = append(details, "answering "+valueShown(m.Value))
		default:
			details = append(details, textsafe.Escape(m.Key)+" "+valueShown(m.Value))
		}
	}
	if len(details) > 0 {
		if len(parts) > 0 {
			parts[0] += ":"
		}
		parts = append(parts, strings.Join(details, ", "))
	}
	return strings.Join(parts, " ")
}

func valueShown(v canon.Value) string {
	if s, ok := v.Str(); ok {
		return clipShown(s)
	}
	return clipShown(string(canon.Canonical(v)))
}

// clipShown is s shown safely, at most 120 bytes of it, whole characters.
func clipShown(s string) string {
	if len(s) > 120 {
		i := 120
		for i > 0 && s[i]&0xC0 == 0x80 {
			i--
		}
		s = s[:i] + "…"
	}
	return textsafe.Escape(s)
}
