package core_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/core/internal/canon"
)

// sessionSequence is a recorded session: the events a host fed the engine,
// in order, each answered with actions (testdata/session.json).
type sessionSequence struct {
	Name   string
	Events []obj
}

// sessionSequences are the session engine's vectors: each rule it took
// over from the hosts, as a session that meets it.
func sessionSequences(t testing.TB) []sessionSequence {
	base := baseTools()
	lock := lockDoc(t, base, approvedAt)
	one := func(ts []obj) []string { return []string{page(t, ts, "")} }
	check := func(r obj, seen int) obj { return obj{"type": "check", "check": r, "seen": seen} }
	call := func(name string) obj { return obj{"type": "call", "name": name} }
	getPrompt := func(name string) obj { return obj{"type": "call", "method": "prompts/get", "name": name} }
	read := func(uri string) obj { return obj{"type": "call", "method": "resources/read", "uri": uri} }
	complete := func(member, key string) obj { return obj{"type": "call", "method": "completion/complete", member: key} }
	use := func(seen int) obj { return obj{"type": "use", "seen": seen} }
	changed := func(at int) obj { return obj{"type": "list_changed", "at_ms": at} }
	timer := func(at int) obj { return obj{"type": "timer", "at_ms": at} }
	enforce := continuityRequest(lock, one(base), "enforce")
	pulled := continuityRequest(lock, one(rugPull(base)), "enforce")
	expired := with(enforce, "evidence", []any{obj{"observation": "evidence_expired", "detail": obj{"expired_at": "2026-11-30T11:50:00.000Z"}}})
	unreadable := with(with(with(enforce, "fetched_key_directory", `{"kind":"crawlcheck-key-directory","v":1,"keys":{}}`),
		"pinned_keys", []any{obj{"kid": "test-issuer-2026", "public_key": "R2+nOTqJ24B+Bub9jH6p+WWS7P39GRzcQVzBDMKGvUQ="}}),
		"issuer", obj{"url": "https://issuer.example.com"})
	withoutPages := deepCopy(enforce)
	delete(withoutPages["observed"].(obj), "pages")
	note := func(size int) string {
		return fmt.Sprintf("issuer.example.com/log\n%d\nAAAA\n\n— issuer.example.com sig\n", size)
	}
	proof := func(size int) string { return "crawlcheck-tlog-proof\nindex 3\n\n" + note(size) }
	return append([]sessionSequence{
		{"a rug pull withholds one tool, the calls follow the handoff", []obj{
			check(pulled, 0), call("get_issue"), call("list_issues"), call("delete_repository"),
		}},
		{"a call before any check is refused", []obj{call("get_issue")}},
		{"a denied session refuses every call in the session's words", []obj{
			check(with(pulled, "observed", with(pulled["observed"].(obj), "endpoint", "https://evil.example.com/mcp")), 0), call("list_issues"),
		}},
		{"observe mode lets a name the list did not offer through", []obj{
			check(continuityRequest(lock, one(rugPull(base)), "observe"), 0), call("get_issue"), call("not_listed"),
		}},
		{"observe mode tells what enforce would have refused once for each would", []obj{
			check(continuityRequest(lock, one(rugPull(base)), "observe"), 0), check(continuityRequest(lock, one(rugPull(base)), "observe"), 0),
			check(continuityRequest(lock, one(base), "observe"), 0), check(continuityRequest(lock, one(rugPull(base)), "observe"), 0),
		}},
		{"check_again is exactly one more check", []obj{
			check(expired, 0), check(expired, 0), call("list_issues"),
		}},
		{"an unreadable live key directory is checked again without it", []obj{check(unreadable, 0)}},
		{"a live key directory that is not JSON, the lock check refused, is the directory's fault", []obj{check(with(with(unreadable,
			"fetched_key_directory", `<html>busy</html>`), "issuer", obj{"url": "https://issuer.example.com", "step": "lock_check", "fault": "connect_refused"}), 0)}},
		{"pages the core refused as too large are recorded as pages_over_cap", []obj{
			{"type": "check", "check": withoutPages, "seen": 0, "oversized": 2},
		}},
		{"a list_changed storm is paced and its records say so", []obj{
			check(enforce, 0),
			changed(1000), check(enforce, 1),
			changed(1200), changed(1500), timer(2000), check(enforce, 3),
			changed(2100), timer(4000), check(enforce, 4),
			changed(4100), timer(8000), check(enforce, 5),
			changed(100000), check(enforce, 6),
		}},
		{"a call's check covers the notifications a wake was due for", []obj{
			check(enforce, 0), changed(1000), check(enforce, 1), changed(1300), check(enforce, 2), timer(2000), call("get_issue"),
		}},
		{"a use the record does not cover re-checks first, by the host's count", []obj{
			check(enforce, 0), use(0), changed(1000), use(1), check(enforce, 1), use(1),
			use(3), check(enforce, 3), use(3), call("get_issue"),
		}},
		{"a use of a session that does not proceed is refused in the session's words", []obj{
			check(with(pulled, "observed", with(pulled["observed"].(obj), "endpoint", "https://evil.example.com/mcp")), 0), use(0),
		}},
		{"a use before any check is refused", []obj{use(2)}},
		{"a check passes only when nothing offered is withheld, a prompt included", []obj{
			check(featuresRequest(t, featuresLock(t), richTools(), featuresObserved(t, basePrompts(), baseResources(), baseTemplates(), uiTemplateApproved), "enforce"), 0),
			check(featuresRequest(t, featuresLock(t), richTools(), featureChanges()[0].features(t), "enforce"), 0),
		}},
		// The engine judges a prompts/get and a resources/read as a
		// tools/call: by the handoff's keys, in the refusal op's item words.
		// A URI only a handed resource template matches is not handed over.
		{"a prompts/get and a resources/read follow the handoff", []obj{
			check(featuresRequest(t, featuresLock(t), richTools(), featureChanges()[0].features(t), "enforce"), 0),
			getPrompt("weekly"), getPrompt("triage"), getPrompt("not_offered"), getPrompt("close_issue"),
			read("issues://readme"), read("issues://issue/7"), read("issues://issue/{number}"), call("get_issue"),
			check(featuresRequest(t, featuresLock(t), richTools(), featureChanges()[3].features(t), "enforce"), 0),
			getPrompt("triage"), read("issues://readme"),
		}},
		// A completion/complete reaches a prompt (ref/prompt: name) or a
		// resource (ref/resource: uri, a template's uriTemplate or a
		// resource's uri): judged as a prompts/get is, the uri by the
		// handoff's templates and resources.
		{"a completion/complete follows the handoff of its prompt or resource template", []obj{
			check(featuresRequest(t, featuresLock(t), richTools(), featureChanges()[0].features(t), "enforce"), 0),
			complete("name", "weekly"), complete("name", "triage"), complete("uri", "issues://issue/{number}"), complete("uri", "issues://readme"),
			check(featuresRequest(t, featuresLock(t), richTools(), featureChanges()[5].features(t), "enforce"), 0),
			complete("uri", "issues://issue/{number}"), complete("name", "triage"),
		}},
		// MCP's ResourceTemplateReference uri is "the URI or URI template
		// of the resource": a handed resource's uri may be completed, a
		// withheld one is refused in its own list's words, a uri neither
		// list names in the template's words.
		{"a completion's ref/resource may name a fixed resource's uri", []obj{
			check(featuresRequest(t, featuresLock(t), richTools(), featureChanges()[0].features(t), "enforce"), 0),
			complete("uri", "issues://readme"), complete("uri", "issues://issue/7"),
			check(featuresRequest(t, featuresLock(t), richTools(), featureChanges()[3].features(t), "enforce"), 0),
			complete("uri", "issues://readme"), complete("uri", "issues://issue/{number}"),
		}},
		// A check made without texts (tool_texts false: a command line)
		// keeps the keys it hands over, so an item call on its state is
		// judged as on a check with texts: the handed prompt allowed, the
		// withheld one refused for its change, not as unlisted.
		{"a check without texts judges item calls by the keys it hands over", []obj{
			check(with(featuresRequest(t, featuresLock(t), richTools(), featureChanges()[0].features(t), "enforce"), "tool_texts", false), 0),
			getPrompt("weekly"), getPrompt("triage"), read("issues://readme"), complete("uri", "issues://issue/{number}"),
		}},
		// Observe mode withholds nothing: an item call of a prompt the
		// list did not offer, or of a resource a template's URI reaches,
		// goes through as a tools/call of an unlisted name does.
		{"observe mode lets an item call of an item not handed over through", []obj{
			check(featuresRequest(t, featuresLock(t), richTools(), featureChanges()[0].features(t), "observe"), 0),
			call("not_offered"), getPrompt("triage"), getPrompt("not_offered"), read("issues://issue/7"), complete("uri", "issues://other"),
		}},
		{"an item call against a lockfile that pins no features is refused as not compared", []obj{
			check(enforce, 0), getPrompt("triage"), read("issues://readme"), complete("uri", "issues://issue/{number}"),
		}},
		{"an item call of a session that does not proceed is refused in the session's words", []obj{
			check(with(pulled, "observed", with(pulled["observed"].(obj), "endpoint", "https://evil.example.com/mcp")), 0), getPrompt("triage"), read("issues://readme"),
		}},
		{"an item call before any check is refused", []obj{getPrompt("triage"), read("issues://readme")}},
		{"tools the framework cannot hold are not handed over, and said once", []obj{
			check(enforce, 0), {"type": "unheld", "names": []any{"get_issue"}}, {"type": "unheld", "names": []any{"list_issues", "get_issue", "close_\u001b[2Jissue"}},
			{"type": "unheld", "names": []any{"list_issues"}}, call("get_issue"),
		}},
		// Names the record does not list are not taken in: a server renaming
		// its tools at every re-check cannot grow the state without bound.
		{"unheld names the record does not list are not kept", []obj{
			check(enforce, 0), {"type": "unheld", "names": []any{"renamed_1", "renamed_2"}},
		}},
		{"the issuer is asked only about a whole list", func() []obj {
			observed := enforce["observed"].(obj)
			ask := func(o obj) obj { return obj{"type": "issuer", "observed": o} }
			return []obj{
				ask(observed),
				ask(with(observed, "failure", "timeout")),
				ask(with(observed, "page_cap_reached", true)),
				ask(with(observed, "pages", []string{page(t, base, "next")})),
				ask(with(observed, "pages", []string{`{"tools":"not a list"}`})),
			}
		}()},
		{"a host's wake that brings no notification is no news", []obj{
			check(enforce, 0), {"type": "list_changed", "at_ms": 1000, "seen": 1}, {"type": "list_changed", "at_ms": 1100, "seen": 1},
			check(enforce, 1), {"type": "list_changed", "at_ms": 1200, "seen": 1}, {"type": "list_changed", "at_ms": 1300, "seen": 3}, timer(2000),
		}},
		{"a tlog proof of another size than the checkpoint kept asks for the consistency proof", []obj{
			{"type": "log_proof", "proof": proof(7), "checkpoint": note(5)},
			{"type": "log_proof", "proof": proof(5), "checkpoint": note(7)},
			{"type": "log_proof", "proof": proof(7), "checkpoint": note(7)},
			{"type": "log_proof", "proof": proof(7)},
			{"type": "log_proof", "proof": "no blank line", "checkpoint": note(7)},
			{"type": "log_proof", "proof": "crawlcheck-tlog-proof\nindex 3\n\nissuer.example.com/log\n07\nAAAA\n", "checkpoint": note(5)},
			{"type": "log_proof", "proof": proof(9007199254740993), "checkpoint": note(5)},
		}},
		{"a monitor's poll asks for consistency from the kept checkpoint's size", []obj{
			{"type": "log_poll"},
			{"type": "log_poll", "checkpoint": note(7)},
			{"type": "log_poll", "checkpoint": note(0)},
		}},
	}, walkSequences(t)...)
}

// sessionVectors are every step of every sequence as one testdata/ops
// vector (the state the step before answered in its request), so that
// each host's op replay — native Go, wazero, the C library, JS, Python —
// replays the sequences byte for byte too.
func sessionVectors(t testing.TB) []opVector {
	var vs []opVector
	for _, s := range sessionSequences(t) {
		var state json.RawMessage
		for i, ev := range s.Events {
			r := obj{"event": ev}
			if state != nil {
				r["state"] = state
			}
			vs = append(vs, opVector{Op: "session_step", Name: fmt.Sprintf("%s %02d %s", s.Name, i+1, ev["type"]), Request: r})
			out := core.Call("session_step", mustJSON(t, r))
			var env struct {
				OK     bool `json:"ok"`
				Result struct {
					State json.RawMessage `json:"state"`
				} `json:"result"`
			}
			if err := json.Unmarshal(out, &env); err != nil || !env.OK {
				t.Fatalf("%s step %d: %s", s.Name, i+1, out)
			}
			state = env.Result.State
		}
	}
	bad := func(name string, r obj) { vs = append(vs, opVector{Op: "session_step", Name: name, Request: r}) }
	bad("an event of no known type", obj{"event": obj{"type": "frame"}})
	bad("a state the core did not write", obj{"state": obj{"kind": "crawlcheck-session-state", "v": 2}, "event": obj{"type": "call", "name": "x"}})
	bad("a check that sets its own recheck", obj{"event": obj{"type": "check", "check": obj{"recheck": obj{}}}})
	bad("a use whose count is not a count", obj{"event": obj{"type": "use", "seen": -1}})
	bad("unheld names that are not strings", obj{"event": obj{"type": "unheld", "names": []any{1}}})
	bad("a timer without its time", obj{"event": obj{"type": "timer"}})
	bad("a call of a method the engine does not judge", obj{"event": obj{"type": "call", "method": "tools/list", "name": "x"}})
	bad("a resources/read naming its resource by name", obj{"event": obj{"type": "call", "method": "resources/read", "name": "readme"}})
	bad("a prompts/get without its name", obj{"event": obj{"type": "call", "method": "prompts/get"}})
	bad("a completion naming both a prompt and a template", obj{"event": obj{"type": "call", "method": "completion/complete", "name": "triage", "uri": "issues://issue/{number}"}})
	bad("a kept checkpoint whose size does not read", obj{"event": obj{"type": "log_poll", "checkpoint": "issuer.example.com/log\n007\nAAAA\n"}})
	bad("a kept checkpoint of one line", obj{"event": obj{"type": "log_poll", "checkpoint": "issuer.example.com/log"}})
	return append(vs, walkBadVectors()...)
}

// sessionFile is testdata/session.json: the sequences with the actions of
// each step, what an executor compares with.
type sessionFile struct {
	Sequences []struct {
		Name    string            `json:"name"`
		Events  []json.RawMessage `json:"events"`
		Actions []json.RawMessage `json:"actions"`
	} `json:"sequences"`
}

// TestSessionSequences is the fourth executor: a host of nothing but
// core.Call and encoding/json — no MCP SDK, no preflight — that keeps the
// state as the bytes it was given, feeds each recorded event and compares
// the actions with testdata/session.json byte for byte. A new binding
// needs no more than this besides its transport, files and clock.
func TestSessionSequences(t *testing.T) {
	path := filepath.Join(testdataDir, "session.json")
	if *update {
		var seqs []canon.Value
		for _, s := range sessionSequences(t) {
			var evs, acts []canon.Value
			var state []byte
			for _, ev := range s.Events {
				e, err := canon.Parse(mustJSON(t, ev))
				if err != nil {
					t.Fatal(err)
				}
				evs = append(evs, e)
				actions, next := step(t, state, mustJSON(t, ev))
				a, err := canon.Parse(actions)
				if err != nil {
					t.Fatal(err)
				}
				acts, state = append(acts, a), next
			}
			seqs = append(seqs, canon.Obj(canon.M("name", canon.Str(s.Name)), canon.M("events", canon.Arr(evs...)), canon.M("actions", canon.Arr(acts...))))
		}
		if err := os.WriteFile(path, canon.Indent(canon.Obj(canon.M("sequences", canon.Arr(seqs...)))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f sessionFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Sequences) != len(sessionSequences(t)) {
		t.Fatalf("%d sequences in testdata/session.json, %d in the code (run -update)", len(f.Sequences), len(sessionSequences(t)))
	}
	for _, s := range f.Sequences {
		var state []byte
		for i, ev := range s.Events {
			var actions []byte
			actions, state = step(t, state, compact(t, ev))
			if want := compact(t, s.Actions[i]); !bytes.Equal(actions, want) {
				t.Errorf("%s, event %d:\n got  %s\n want %s", s.Name, i+1, actions, want)
			}
		}
	}
}

// step is the executor's one move: the state kept and the event in, the
// actions and the state to keep out. The state travels as the document it
// is, untouched.
func step(t testing.TB, state, event []byte) (actions, next []byte) {
	t.Helper()
	req := []byte(`{"event":` + string(event))
	if state != nil {
		req = append(req, `,"state":`...)
		req = append(req, state...)
	}
	req = append(req, '}')
	out := core.Call("session_step", req)
	var env struct {
		OK     bool `json:"ok"`
		Result struct {
			Actions json.RawMessage `json:"actions"`
			State   json.RawMessage `json:"state"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &env); err != nil || !env.OK {
		t.Fatalf("session_step: %s", out)
	}
	return env.Result.Actions, env.Result.State
}

// TestItemCallRefusalIsTheRefusalOps: the engine refuses a prompts/get,
// resources/read or completion/complete of a session that proceeds in the refusal op's item words
// (a completion's ref/resource in the words of the resource a record lists
// by that uri, else of the template) for the record it keeps — the bytes the hosts' item refusals carried
// before the engine judged item calls — and every such refusal of the
// sequences is one of them.
func TestItemCallRefusalIsTheRefusalOps(t *testing.T) {
	compared := 0
	for _, s := range sessionSequences(t) {
		var state []byte
		for i, ev := range s.Events {
			before := state
			var actions []byte
			actions, state = step(t, state, mustJSON(t, ev))
			method, _ := ev["method"].(string)
			if ev["type"] != "call" || before == nil {
				continue
			}
			var kept struct {
				Record  json.RawMessage `json:"record"`
				Session *string         `json:"session"`
			}
			var text string
			if err := json.Unmarshal([]byte(mustString(t, before)), &kept); err != nil {
				t.Fatal(err)
			}
			var acts []struct {
				Action, Text string
				List, Key    *string
			}
			if err := json.Unmarshal(actions, &acts); err != nil || len(acts) != 1 {
				t.Fatalf("%s, event %d: %s", s.Name, i+1, actions)
			}
			if acts[0].Action != "refuse" {
				continue
			}
			if method == "" || method == "tools/call" || kept.Session == nil || *kept.Session != "proceed" {
				// Not an item's refusal (a tool's, or the session's): it
				// names no item, so a host raises no item error for it.
				if acts[0].List != nil || acts[0].Key != nil {
					t.Errorf("%s, event %d: a refusal that is not an item's names an item: %s", s.Name, i+1, actions)
				}
				continue
			}
			item := obj{"list": "prompts", "key": ev["name"]}
			switch {
			case method == "resources/read":
				item = obj{"list": "resources", "key": ev["uri"]}
			case ev["uri"] != nil:
				// A completion's uri: a template's, unless only the
				// record's resources name it (a withheld resource).
				item = obj{"list": "resource_templates", "key": ev["uri"]}
				var rec struct{ Features map[string]map[string]string }
				if err := json.Unmarshal(kept.Record, &rec); err != nil {
					t.Fatal(err)
				}
				key, _ := ev["uri"].(string)
				_, template := rec.Features["resource_templates"][key]
				if _, resource := rec.Features["resources"][key]; resource && !template {
					item = obj{"list": "resources", "key": key}
				}
			}
			out := core.Call("refusal", mustJSON(t, obj{"record": string(kept.Record), "item": item}))
			var env struct {
				Result struct{ Text string } `json:"result"`
			}
			if err := json.Unmarshal(out, &env); err != nil {
				t.Fatal(err)
			}
			if text = acts[0].Text; text != env.Result.Text {
				t.Errorf("%s, event %d: the engine refused\n %s\nthe refusal op words\n %s", s.Name, i+1, text, env.Result.Text)
			}
			// The action names the item its words are of: a host's error
			// and advice follow it, never a list of the host's choosing.
			if acts[0].List == nil || *acts[0].List != item["list"] || acts[0].Key == nil || *acts[0].Key != item["key"] {
				t.Errorf("%s, event %d: the engine's refusal names %s, its words are of %v", s.Name, i+1, actions, item)
			}
			compared++
		}
	}
	if compared < 5 {
		t.Errorf("%d item refusals compared: the sequences lost their item calls", compared)
	}
}

// mustString reads a JSON string's text.
func mustString(t testing.TB, raw []byte) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestObserveModeWithholdsNoItem: in observe mode every call of the
// sequence that says so is allowed, an item not handed over as a tool the
// list did not offer: observe withholds nothing (an unlisted prompt, a
// resource a template's URI reaches, a completion of a uri no list
// names). Review2: the engine refused the items while it let the tool
// through.
func TestObserveModeWithholdsNoItem(t *testing.T) {
	for _, s := range sessionSequences(t) {
		if s.Name != "observe mode lets an item call of an item not handed over through" {
			continue
		}
		var state []byte
		for i, ev := range s.Events {
			var actions []byte
			actions, state = step(t, state, mustJSON(t, ev))
			if ev["type"] == "call" && string(actions) != `[{"action":"allow"}]` {
				t.Errorf("event %d %v: %s", i+1, ev, actions)
			}
		}
		return
	}
	t.Fatal("no observe-mode item sequence")
}
