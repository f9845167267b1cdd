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
	would := rd.Bool("would")
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	if rec.Kind() != canon.Object {
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.record must be a continuity record object")
	}
	if rd.Has("item") {
		if hasTool || would {
			return canon.Value{}, cerr.New(cerr.BadRequest, "request.item words an item's refusal: give no tool and no would")
		}
		text, _ := refusalItem(rd, rec)
		if err := rd.Err(); err != nil {
			return canon.Value{}, err
		}
		return canon.Obj(canon.M("text", canon.Str(text))), nil
	}
	if would {
		if hasTool {
			return canon.Value{}, cerr.New(cerr.BadRequest, "request.would words the whole record: give no tool")
		}
		text, ok := wouldText(rec)
		return canon.Obj(canon.M("text", canon.StrOrNull(text, ok))), nil
	}
	return canon.Obj(canon.M("text", canon.Str(refusalText(rec, tool, hasTool)))), nil
}

// refusalVerbs are how an effect reads in a refusal; another effect is
// written as itself.
var refusalVerbs = map[string]string{"pause_tool": "withheld", "pause": "paused", "deny": "denied", "refresh": "refused until refreshed"}

// refusalVerb is effect in a refusal's words: its verb, or the effect
// itself (escaped: a record may carry any string) when it has none.
func refusalVerb(effect string) string {
	if verb := refusalVerbs[effect]; verb != "" {
		return verb
	}
	return textsafe.Escape(effect)
}

// memberStr is the string member k of the object v; "" when v has no such
// member or it is not a string, which the refusal words treat as a thing
// not to say.
func memberStr(v canon.Value, k string) string {
	x, _ := v.Get(k)
	s, _ := x.Str()
	return s
}

func refusalText(rec canon.Value, tool string, hasTool bool) string {
	effect := memberStr(rec, "effect")
	var b strings.Builder
	b.WriteString("crawlcheck: ")
	if hasTool {
		b.WriteString("tool \"" + textsafe.Escape(tool) + "\" ")
		tools, _ := rec.Get("tools")
		te, ok := tools.Get(tool)
		if !ok {
			b.WriteString("refused: not in the checked tool list")
			return b.String() + recordSuffix(memberStr(rec, "record_sha256"))
		}
		effect, _ = te.Str()
	} else {
		b.WriteString("session ")
	}
	b.WriteString(effectWhy(rec, tool, hasTool, effect, "effect"))
	return b.String() + recordSuffix(memberStr(rec, "record_sha256"))
}

// effectWhy is an effect in words and the observations that decided it:
// those of the tool (or the session's) whose effect (the observation's
// member effectKey: "effect", or "would" in observe mode) did not
// proceed; all of them when every one proceeded. The first says what
// differed.
func effectWhy(rec canon.Value, tool string, hasTool bool, effect, effectKey string) string {
	verb := refusalVerb(effect)
	var b strings.Builder
	b.WriteString(verb + " (" + textsafe.Escape(effect) + ")")
	obs, _ := rec.Get("observations")
	var decided, all []canon.Value
	for _, o := range obs.Elems() {
		t, _ := o.Get("tool")
		name, named := t.Str()
		if hasTool && named && name != tool {
			continue
		}
		all = append(all, o)
		if e := memberStr(o, effectKey); e != "proceed" && e != "proceed_recorded" {
			decided = append(decided, o)
		}
	}
	if len(decided) == 0 {
		decided = all
	}
	if len(decided) > 0 {
		b.WriteString(": " + observationNames(decided))
		server, _ := rec.Get("server")
		if what := whatDiffered(decided[0], server); what != "" {
			b.WriteString(" (" + what + ")")
		}
		// An identity refusal always says which server was approved and
		// which answered, and an untrusted baseline which key to pass,
		// even behind another observation: neither can be guessed from
		// the tool list (issue 34, items 3 and 7).
		for _, o := range decided[1:] {
			if (isIdentity(o) || keyHint(o, detailOf(o)) != "") && whatDiffered(o, server) != whatDiffered(decided[0], server) {
				b.WriteString(" (" + whatDiffered(o, server) + ")")
			}
		}
	}
	return b.String()
}

// observationNames are the names of the observations obs, each once in
// the order first met, escaped, joined by ", ": the list a refusal says
// decided it.
func observationNames(obs []canon.Value) string {
	seen := map[string]bool{}
	var names []string
	for _, o := range obs {
		if n := memberStr(o, "observation"); !seen[n] {
			seen[n] = true
			names = append(names, textsafe.Escape(n))
		}
	}
	return strings.Join(names, ", ")
}

func recordSuffix(sha string) string { return " (record " + textsafe.Escape(sha) + ")" }

// whatDiffered is one observation's difference in words: the tool and part
// it names, then its detail — the classes of a changed text first, a diff
// as its inserted and deleted text, an identity mismatch as "approved X,
// answering Y", any other member as its name and value. Values are clipped
// to 120 bytes. An identity mismatch whose detail does not name both
// endpoints (signed evidence naming another subject) takes what it lacks
// from the record's server (approved_url, observed_url), so that it always
// names both.
func whatDiffered(o, server canon.Value) string {
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
	identity := isIdentity(o)
	var details []string
	d, _ := o.Get("detail")
	if identity {
		details = append(details, "approved "+endpointShown(d, "approved", server, "approved_url"),
			"answering "+endpointShown(d, "observed", server, "observed_url"))
	}
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
		case identity && (m.Key == "observed" || m.Key == "approved"):
			// Worded first, above.
		default:
			details = append(details, textsafe.Escape(m.Key)+" "+valueShown(m.Value))
		}
	}
	if hint := keyHint(o, d); hint != "" {
		details = append(details, hint)
	}
	if len(details) > 0 {
		if len(parts) > 0 {
			parts[0] += ":"
		}
		parts = append(parts, strings.Join(details, ", "))
	}
	return strings.Join(parts, " ")
}

// keyHint says what a person checking a signed lockfile without the key
// that signed it must give (issue 34, item 7): the issuer's key directory
// for an issuer's key, the operator's public key for an operator's (op_…).
// The flag is the CLI's; the SDKs name the same option in their words.
func keyHint(o, detail canon.Value) string {
	if n, _ := o.Get("observation"); n.String() != `"baseline_untrusted"` {
		return ""
	}
	if r, _ := detail.Get("reason"); r.String() != `"foreign_key"` {
		return ""
	}
	kid, _ := detail.Get("key_id")
	id, _ := kid.Str()
	if strings.HasPrefix(id, "op_") {
		return "no operator key given holds it: pass the operator's public key (--operator-key PUB; operator_keys / operatorKeys in the SDKs)"
	}
	return "no key directory given holds it: pass the issuer's key directory (--issuer-keys FILE; key_directory / keyDirectory in the SDKs)"
}

// detailOf is an observation's detail (null when it has none).
func detailOf(o canon.Value) canon.Value {
	d, _ := o.Get("detail")
	return d
}

// isIdentity says whether an observation is server_identity_mismatch.
func isIdentity(o canon.Value) bool {
	n, _ := o.Get("observation")
	return n.String() == `"server_identity_mismatch"`
}

// endpointShown is an identity mismatch's endpoint: the detail's member
// key when it is a string, else the record server's member, else "(none)".
func endpointShown(detail canon.Value, key string, server canon.Value, serverKey string) string {
	if v, ok := detail.Get(key); ok && v.Kind() == canon.String {
		return valueShown(v)
	}
	if v, ok := server.Get(serverKey); ok && v.Kind() == canon.String {
		return valueShown(v)
	}
	return "(none)"
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
