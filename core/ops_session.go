package core

import (
	"strings"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/continuity"
	"github.com/crawlcheck/verifier/core/internal/features"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/session"
	"github.com/crawlcheck/verifier/core/internal/tools"
	"github.com/crawlcheck/verifier/core/textsafe"
)

// opSessionStep is the session engine (docs/abi.md, The session engine):
// the session's state as the host kept it and one event, answered with the
// new state and the actions the host executes, in order. The rules a
// session follows between checks live here, once, instead of in every
// host: a check the issuer's unreadable key directory or the server's
// oversized pages refused is made again as the record of that fault; a
// refresh is exactly one more check; the re-checks a list_changed storm
// asks for are paced and their records say so; a use of the session (a
// listing handed over, a call) waits for a re-check when the record does
// not cover a change announced, and is allowed or refused, with the
// refusal's words.
func opSessionStep(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	st := session.New()
	if doc, ok := rd.Doc("state"); ok {
		var err error
		if st, err = session.Parse(doc, rd.Field("state")); err != nil {
			return canon.Value{}, err
		}
	}
	ev, ok := rd.Object("event")
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	if !ok {
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.event is required")
	}
	typ, err := ev.Str("type", true)
	if err != nil {
		return canon.Value{}, err
	}
	fields, known := eventFields[typ]
	if !known {
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.event.type %q is not an event of the session engine (known: handshake, page, check, list_changed, timer, use, call, unheld, issuer, log_proof, log_poll)", typ)
	}
	if err := ev.Only(append([]string{"type"}, fields...)...); err != nil {
		return canon.Value{}, err
	}
	var actions []canon.Value
	switch typ {
	case "handshake":
		actions, err = sessionHandshake(&st, ev)
	case "page":
		actions, err = sessionPage(&st, ev)
	case "check":
		actions, err = sessionCheck(&st, ev)
	case "list_changed":
		actions, err = sessionListChanged(&st, ev)
	case "timer":
		actions, err = sessionTimer(&st, ev)
	case "use":
		actions, err = sessionUse(&st, ev)
	case "call":
		actions, err = sessionCall(&st, ev)
	case "unheld":
		actions, err = sessionUnheld(&st, ev)
	case "issuer":
		actions, err = sessionIssuer(ev)
	case "log_proof":
		actions, err = sessionLogProof(ev)
	case "log_poll":
		actions, err = sessionLogPoll(ev)
	}
	if err != nil {
		return canon.Value{}, err
	}
	if actions == nil {
		actions = []canon.Value{}
	}
	// The state and a record travel as their canonical text in a string:
	// what a host keeps and appends are those bytes, and every host's JSON
	// reader gives a string's text back exactly, where re-encoding an
	// object (JavaScript reorders keys that look like integers) would not.
	return canon.Obj(canon.M("actions", canon.Arr(actions...)), canon.M("state", canon.Str(string(canon.Canonical(st.Value()))))), nil
}

// eventFields are the members each event type takes besides its type.
var eventFields = map[string][]string{
	"handshake":    {"handshake", "result", "negotiated", "page_cap", "fault"},
	"page":         {"page", "fault", "oversized"},
	"check":        {"check", "seen", "oversized"},
	"list_changed": {"at_ms", "seen"},
	"timer":        {"at_ms"},
	"use":          {"seen"},
	"call":         {"method", "name", "uri"},
	"unheld":       {"names"},
	"issuer":       {"observed"},
	"log_proof":    {"proof", "checkpoint"},
	"log_poll":     {"checkpoint"},
}

func action(name string, ms ...canon.Member) canon.Value {
	return session.Obj(append(ms, canon.M("action", canon.Str(name)))...)
}

// count reads an optional non-negative integer member of an event.
func count(ev req.Obj, name string) (int64, error) {
	if !ev.Has(name) {
		return 0, nil
	}
	n, ok := session.Int(ev.Value(name))
	if !ok {
		return 0, cerr.New(cerr.BadRequest, "request.event.%s must be a whole number from 0 to 2^53", name)
	}
	return n, nil
}

// sessionCheck runs the check the event carries (continuity_handoff's
// request, without recheck and refreshed: the engine sets them) and
// answers append_record, keep_checkpoint (when the record's log says to
// keep a checkpoint), hand, warn (observe mode's would, once for each
// distinct one), and check_again when one more check is due.
func sessionCheck(st *session.State, ev req.Obj) ([]canon.Value, error) {
	chk, ok, err := ev.Object("check")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, cerr.New(cerr.BadRequest, "request.event.check is required")
	}
	for _, k := range []string{"recheck", "refreshed"} {
		if chk.Has(k) {
			return nil, cerr.New(cerr.BadRequest, "request.event.check.%s is the session engine's to set: leave it out", k)
		}
	}
	seen, err := count(ev, "seen")
	if err != nil {
		return nil, err
	}
	oversized, err := count(ev, "oversized")
	if err != nil {
		return nil, err
	}
	// The check reads as the op's own request: its errors name
	// request.lock, as continuity_handoff's do.
	chk = chk.At("request")
	v := chk.V
	if oversized > 0 {
		// The host's event with these pages was more than the core takes
		// (input_too_large before any op ran); it sent it again without them.
		obs, _ := v.Get("observed")
		v = session.With(v, nil, canon.M("observed", session.OverCap(obs, oversized)))
	}
	refreshed := st.Refresh
	switch rc := st.Recheck(seen); {
	case refreshed:
		v = session.With(v, nil, canon.M("refreshed", canon.BoolOf(true)))
	case !rc.IsNull():
		v = session.With(v, nil, canon.M("recheck", rc))
	}
	handoff, err := run("continuity_handoff", opContinuityHandoff, chk.With(v))
	if cerr.CodeOf(err) == cerr.IssuerKeysInvalid {
		fault := continuity.IssuerKeysInvalid
		if !isJSONObject(chk.With(v), "fetched_key_directory") {
			fault = continuity.IssuerResponseMalformed
		}
		if again, ok := session.WithoutUnreadableDirectory(v, fault); ok {
			v = again
			handoff, err = run("continuity_handoff", opContinuityHandoff, chk.With(v))
		}
	}
	if cerr.CodeOf(err) == cerr.InputTooLarge {
		obs, _ := v.Get("observed")
		if pages, _ := obs.Get("pages"); len(pages.Elems()) > 0 {
			v = session.With(v, nil, canon.M("observed", session.OverCap(obs, int64(len(pages.Elems())))))
			handoff, err = run("continuity_handoff", opContinuityHandoff, chk.With(v))
		}
	}
	if err != nil {
		return nil, err
	}
	again := st.Checked(handoff, seen, refreshed)
	rec, _ := handoff.Get("record")
	actions := []canon.Value{action("append_record", canon.M("record", canon.Str(string(canon.Canonical(rec)))))}
	if log, ok := rec.Get("log"); ok {
		if keep, _ := log.Get("keep"); !keep.IsNull() {
			if s, _ := keep.Str(); s != "" {
				actions = append(actions, action("keep_checkpoint", canon.M("checkpoint", keep)))
			}
		}
	}
	actions = append(actions, action("hand", append(handoff.Without("record").Members(), canon.M("passes", canon.BoolOf(passes(handoff, rec))))...))
	// Observe mode withholds nothing, so a change it let through would go
	// unseen by anyone not reading the log: a person is told, in the
	// refusal op's words, what enforce would have refused — once for each
	// distinct would.
	if would, _ := rec.Get("would"); st.Tell(would) {
		if text, ok := wouldText(rec); ok {
			actions = append(actions, action("warn", canon.M("text", canon.Str(text))))
		}
	}
	if again {
		actions = append(actions, action("check_again"))
	}
	return actions, nil
}

// passes is whether a check passes, the CLI's exit 0 (docs/cli.md, Exit
// status): the session proceeds and everything offered is handed over —
// no tool withheld, and no prompt, resource or resource template whose
// effect withholds it (pause_tool or stronger).
func passes(handoff, rec canon.Value) bool {
	sess, _ := handoff.Get("session")
	withheld, _ := handoff.Get("withheld")
	if s, _ := sess.Str(); s != "proceed" || len(withheld.Elems()) > 0 {
		return false
	}
	features, _ := rec.Get("features")
	for _, list := range features.Members() {
		for _, item := range list.Value.Members() {
			switch e, _ := item.Value.Str(); e {
			case "pause_tool", "pause", "deny":
				return false
			}
		}
	}
	return true
}

func atMS(ev req.Obj) (int64, error) {
	if !ev.Has("at_ms") {
		return 0, cerr.New(cerr.BadRequest, "request.event.at_ms is required: the host's monotonic clock in milliseconds")
	}
	return count(ev, "at_ms")
}

// sessionListChanged paces the re-check a notifications/tools/list_changed
// asks for: recheck at once, or wake at the time the pace allows. With
// seen (the host's count of notifications, this one included), a wake of
// the host that brings no notification the engine has not counted is no
// news: a host's watcher may wake for other reasons (a stream ending, a
// frame it could not read) and coalesce notifications, and only its count
// says which.
func sessionListChanged(st *session.State, ev req.Obj) ([]canon.Value, error) {
	at, err := atMS(ev)
	if err != nil {
		return nil, err
	}
	if ev.Has("seen") {
		seen, err := count(ev, "seen")
		if err != nil {
			return nil, err
		}
		if seen <= st.Changes {
			return nil, nil
		}
		st.Changes = seen - 1
	}
	now, due := st.ListChanged(at)
	switch {
	case now:
		return []canon.Value{action("recheck", canon.M("held_back_ms", canon.Int(0)))}, nil
	case due >= 0:
		return []canon.Value{action("wake", canon.M("at_ms", canon.Int(due)))}, nil
	}
	return nil, nil
}

// sessionTimer is the wake firing: the held-back re-check starts, unless a
// check since covered every notification.
func sessionTimer(st *session.State, ev req.Obj) ([]canon.Value, error) {
	at, err := atMS(ev)
	if err != nil {
		return nil, err
	}
	if !st.Timer(at) {
		return nil, nil
	}
	return []canon.Value{action("recheck", canon.M("held_back_ms", canon.Int(st.HeldMS)))}, nil
}

// sessionUse answers the framework wanting the session's tools (a listing
// to hand over, or before a call): a re-check first when the newest record
// does not cover every list_changed the host has seen (the host re-checks
// and sends the same event again, with the same seen: the re-check's
// observation began after those notifications, so the second answer is
// never a re-check); else allow when the session proceeds, or refuse in
// the session's words. A use never waits out the pace: the framework is
// waiting, and no use is judged by a list the record did not cover.
func sessionUse(st *session.State, ev req.Obj) ([]canon.Value, error) {
	seen, err := count(ev, "seen")
	if err != nil {
		return nil, err
	}
	switch {
	case !st.Covers(seen):
		return []canon.Value{action("recheck", canon.M("held_back_ms", canon.Int(st.HeldMS)))}, nil
	case st.Session == "proceed":
		return []canon.Value{action("allow")}, nil
	case st.Record.Kind() != canon.Object:
		return []canon.Value{action("refuse", canon.M("text", canon.Str(noCheckYet)))}, nil
	}
	return []canon.Value{action("refuse", canon.M("text", canon.Str(refusalText(st.Record, "", false))))}, nil
}

// recordLists reports whether the record compared an item of list by key
// (its features.<list> names it, with whatever effect).
func recordLists(rec canon.Value, list, key string) bool {
	all, _ := rec.Get("features")
	items, _ := all.Get(list)
	if items.Kind() != canon.Object {
		return false
	}
	_, ok := items.Get(key)
	return ok
}

// noCheckYet is the refusal of a use before any check.
const noCheckYet = "crawlcheck: no check has been made: the session has no record to allow a call by"

// callForms are the requests a call event may name, each with the member
// of the event that names what it reaches and the handoff's list that item
// is judged by (none for tools/call: the handoff's calls), and a second
// list whose item it may name instead ("" none). A completion/complete
// names a prompt (ref/prompt: name) or a resource (ref/resource: uri):
// MCP's ResourceTemplateReference uri is "the URI or URI template of the
// resource", so a resource template's uriTemplate or a fixed resource's
// uri.
var callForms = map[string][]callForm{
	"tools/call":          {{"name", "", ""}},
	"prompts/get":         {{"name", features.Prompts.Name, ""}},
	"resources/read":      {{"uri", features.Resources.Name, ""}},
	"completion/complete": {{"name", features.Prompts.Name, ""}, {"uri", features.Templates.Name, features.Resources.Name}},
}

// callForm is one form of a call event: the member naming what it reaches,
// the handoff's list that item is judged by, and a second list ("" none).
type callForm struct{ param, list, or string }

// sessionCall answers a request the framework wants to send that reaches
// something the handoff hands over: a tools/call (the default method), a
// prompts/get, a resources/read or a completion/complete. Allow, or refuse
// with the words every host's refusal error carries (the refusal op's): of
// the session when it does not proceed, else of the tool, or of the item
// (the refusal op's item). A ui:// template read is not judged here: the
// host reads it and the core checks it against its pin
// (ui_template_check).
func sessionCall(st *session.State, ev req.Obj) ([]canon.Value, error) {
	method, err := ev.OneOf("method", "tools/call", "tools/call", "prompts/get", "resources/read", "completion/complete")
	if err != nil {
		return nil, err
	}
	forms := callForms[method]
	m := forms[0]
	if len(forms) > 1 && ev.Has("uri") {
		m = forms[1]
	}
	for _, p := range []string{"name", "uri"} {
		if p != m.param && ev.Has(p) {
			return nil, cerr.New(cerr.BadRequest, "request.event.%s is not a member of this %s call: it names what it reaches by %s", p, method, m.param)
		}
	}
	key, err := ev.Str(m.param, true)
	if err != nil {
		return nil, err
	}
	allowed := st.CallAllowed(key)
	if m.list != "" {
		allowed = st.ItemAllowed(m.list, key) || (m.or != "" && st.ItemAllowed(m.or, key))
	}
	if allowed {
		return []canon.Value{action("allow")}, nil
	}
	text := noCheckYet
	switch {
	case st.Record.Kind() != canon.Object:
	case m.list == "" || st.Session != "proceed":
		text = refusalText(st.Record, key, m.list == "" && st.Session == "proceed")
	default:
		return []canon.Value{itemRefusal(st.Record, m, key)}, nil
	}
	return []canon.Value{action("refuse", canon.M("text", canon.Str(text)))}, nil
}

// itemRefusal is the refuse action of an item call that a proceeding
// session's handoff does not hand over: the refusal op's item words, and
// the list and key they are the words of. One function picks the list and
// words it, so a host's error (ItemRefused's list, effect) and its advice
// after the words (what changed, how to approve it) follow the list the
// words name, never one the host guesses from the method: a completion's
// ref/resource uri that only the record's resources name (a withheld
// resource) is refused as that resource, anything else as the template.
func itemRefusal(rec canon.Value, m callForm, key string) canon.Value {
	list := m.list
	if m.or != "" && !recordLists(rec, m.list, key) && recordLists(rec, m.or, key) {
		list = m.or
	}
	text, _ := itemRefusalText(rec, list, key, true, nil, "")
	return action("refuse", canon.M("text", canon.Str(text)), canon.M("list", canon.Str(list)), canon.M("key", canon.Str(key)))
}

// sessionUnheld answers a host whose framework's type could not hold some
// of the tool objects the handoff gave it (the SDK refused the object, or
// read another name out of it): those tools are not handed over — nothing
// but the core's object may be — and a person is told so once, in the
// core's words (warn), never left to find a tool silently missing. The
// record is unchanged: it judged the list the server sent, not what a
// framework can parse.
func sessionUnheld(st *session.State, ev req.Obj) ([]canon.Value, error) {
	v := ev.Value("names")
	if v.Kind() != canon.Array {
		return nil, cerr.New(cerr.BadRequest, "request.event.names must be an array of strings")
	}
	var names []string
	for _, n := range v.Elems() {
		s, ok := n.Str()
		if !ok {
			return nil, cerr.New(cerr.BadRequest, "request.event.names must be an array of strings")
		}
		names = append(names, s)
	}
	fresh := st.NotHeld(names)
	if len(fresh) == 0 {
		return nil, nil
	}
	quoted := make([]string, len(fresh))
	for i, n := range fresh {
		quoted[i] = `"` + textsafe.Escape(n) + `"`
	}
	what := "tool " + quoted[0] + " is"
	if len(fresh) > 1 {
		what = "tools " + strings.Join(quoted, ", ") + " are"
	}
	text := "crawlcheck: " + what + " not handed over: the framework's type cannot hold the object the core checked"
	if sha, ok := st.Record.Get("record_sha256"); ok {
		s, _ := sha.Str()
		text += " (record " + s + ")"
	}
	return []canon.Value{action("warn", canon.M("text", canon.Str(text)))}, nil
}

// sessionIssuer answers whether the issuer is asked about an observation
// at all (the service path, docs/preflight.md): only about a whole list —
// no failure, no page cap reached, pages the core reads and no cursor left
// unfollowed — for a receipt speaks of a list's tools_sha256, which is
// the host's own reading handed to guard with the answer (ask_issuer
// {reading}). Otherwise nothing is asked: the consultation is not asked,
// and the check's own observations say why. Not an action of a session
// (no state is kept): the service path asks it before the check.
func sessionIssuer(ev req.Obj) ([]canon.Value, error) {
	obs, ok, err := ev.Object("observed")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, cerr.New(cerr.BadRequest, "request.event.observed is required")
	}
	rd := obs.Read()
	if f := rd.Str("failure", false); f != "" || rd.Bool("page_cap_reached") || rd.Failed() {
		return nil, nil
	}
	pages := rd.Pages("pages")
	if rd.Failed() {
		return nil, nil
	}
	list, err := tools.FromPages(pages, false)
	if err != nil || list.Truncated != "" {
		return nil, nil
	}
	return []canon.Value{action("ask_issuer", canon.M("reading", canon.Str(list.ListSHA256())))}, nil
}

// sessionLogProof answers what the log check of a tlog-proof needs besides
// the proof and the checkpoint kept: the consistency proof between their
// trees, when their sizes differ (ask_consistency); nothing when they are
// the same tree, or either size is unreadable (the core's log check then
// says what is wrong with it).
func sessionLogProof(ev req.Obj) ([]canon.Value, error) {
	proof, err := ev.Str("proof", true)
	if err != nil {
		return nil, err
	}
	kept, err := ev.Str("checkpoint", false)
	if err != nil || kept == "" {
		return nil, err
	}
	have, ok1 := session.ProofSize(proof)
	keptSize, ok2 := session.NoteSize(kept)
	if !ok1 || !ok2 || have == keptSize {
		return nil, nil
	}
	return []canon.Value{action("ask_consistency", canon.M("from", canon.Int(min(have, keptSize))), canon.M("to", canon.Int(max(have, keptSize))),
		canon.M("kept_size", canon.Int(keptSize)), canon.M("proof_size", canon.Int(have)))}, nil
}

// sessionLogPoll answers where a monitor's poll of the issuer's log
// starts: the consistency proof from the kept checkpoint's tree (from 0
// when none is kept), so that the log served now is shown to extend it.
// A kept checkpoint whose size does not read is a bad_request: it was the
// core's keep, so something else wrote the file, and no poll from a
// guessed size could show the log consistent with it.
func sessionLogPoll(ev req.Obj) ([]canon.Value, error) {
	kept, err := ev.Str("checkpoint", false)
	if err != nil {
		return nil, err
	}
	from := int64(0)
	if kept != "" {
		var ok bool
		if from, ok = session.NoteSize(kept); !ok {
			return nil, cerr.New(cerr.BadRequest, "request.event.checkpoint is not a checkpoint note: its second line is no tree size (digits without a leading zero, at most 2^53)")
		}
	}
	return []canon.Value{action("poll_log", canon.M("from", canon.Int(from)))}, nil
}
