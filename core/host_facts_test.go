package core_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core"
)

// Facts a host hands over instead of deciding (issue 8): which facts of the
// observed server a lockfile pins (make_lock and approve take observed),
// how a capture's own failures are recorded (list_cached and
// answer_not_captured, as capture_failed), which keys of
// a fetched key directory count (guard's fetched_key_directory), how an
// issuer that gave no answer is recorded (continuity_check's issuer step
// and error), where a lockfile says its server is (verify_lock's url) and
// a list of several pages as a diff side. Each is a vector here, and
// TestHostFactsGiveTheSameBytes holds that the core, given the facts,
// answers exactly what a host used to build from them.

// The words each capture failure was given by every host before the core
// worded them: the records keep them.
const (
	captureDetail     = "answered by the SDK without a tools/list request on the wire (its list cache)"
	notCapturedDetail = "the SDK accepted an answer that was not captured"
)

// hostFacts are the requests both the vectors and the equality test use.
type hostFacts struct {
	observed        obj // continuity_check's observed, of the base list
	lock            obj
	pages           []string // two pages of the base list
	check           obj      // a lock_check answer of a changed list
	changedObserved obj      // observed of that changed list, from another endpoint
	issuerCheck     obj      // a continuity_check request to add issuer facts to
	g               *guardFixture
	fetched         obj // the issuer's directory: the test directory and a foreign key
	pins            []any
}

func newHostFacts(t testing.TB) hostFacts {
	base := baseTools()
	lock := lockDoc(t, base, approvedAt)
	pages := []string{page(t, base[:2], "c2"), page(t, base[2:], "")}
	added := []string{page(t, toolAdded(rugPull(base)), "")}
	var check obj
	if err := json.Unmarshal(call(t, "lock_check", obj{"lock": lock, "pages": added}), &check); err != nil {
		t.Fatal(err)
	}
	changed := continuityRequest(lock, added, "enforce")["observed"].(obj)
	changed["endpoint"] = "https://mcp.example.com/v2/mcp"
	g := newGuardFixture(t)
	fetched := deepCopy(g.directory)
	fetched["keys"] = append(fetched["keys"].([]any), obj{"kid": g.foreign.KID, "alg": "ed25519", "public_key": g.foreign.PublicKey,
		"status": "active", "not_before": "2026-01-01T00:00:00.000Z", "not_after": "2027-01-01T00:00:00.000Z"})
	return hostFacts{
		observed:        continuityRequest(lock, pages, "enforce")["observed"].(obj),
		lock:            lock,
		pages:           pages,
		check:           check,
		changedObserved: changed,
		issuerCheck:     continuityRequest(g.lock, []string{page(t, g.tools, "")}, "enforce"),
		g:               g,
		fetched:         fetched,
		pins:            []any{obj{"kid": g.active.KID, "public_key": g.active.PublicKey}},
	}
}

func hostFactVectors(t testing.TB) []opVector {
	h := newHostFacts(t)
	g := h.g
	var vs []opVector
	add := func(op, name string, request any) { vs = append(vs, opVector{Op: op, Name: name, Request: request}) }
	obsWith := func(key string, v any) obj { o := deepCopy(h.observed); o[key] = v; return o }
	without := func(o obj, keys ...string) obj {
		o = deepCopy(o)
		for _, k := range keys {
			delete(o, k)
		}
		return o
	}

	add("make_lock", "from observed", obj{"observed": h.observed, "approved_at": approvedAt})
	add("make_lock", "from observed whose serverInfo is not an object", obj{"observed": obsWith("server_info", "issues 1.4.0"), "approved_at": approvedAt})
	add("make_lock", "agentgate from observed", obj{"observed": h.observed, "format": "agentgate", "name": "issues", "approved_at": approvedAt})
	add("make_lock", "observed with a failure refused", obj{"observed": obj{"endpoint": fixtureURL, "failure": "list_cached"}, "approved_at": approvedAt})
	add("make_lock", "observed and pages refused", obj{"observed": h.observed, "pages": h.pages, "approved_at": approvedAt})
	add("make_lock", "observed and server refused", obj{"observed": h.observed, "server": obj{"url": fixtureURL}, "approved_at": approvedAt})
	add("make_lock", "observed with an unknown member", obj{"observed": obsWith("tools", baseTools()), "approved_at": approvedAt})
	add("approve", "lock_check answer pins the observed server", obj{"record": h.check, "lock": h.lock, "observed": h.changedObserved,
		"names": []any{"delete_repository", "get_issue"}, "approved_at": checkNow})

	down := obj{"endpoint": fixtureURL, "failure": "list_cached"}
	add("continuity_check", "capture failed", with(continuityRequest(h.lock, nil, "enforce"), "observed", down))
	add("continuity_check", "answer not captured", with(continuityRequest(h.lock, nil, "enforce"), "observed", obj{"endpoint": fixtureURL, "failure": "answer_not_captured"}))
	add("continuity_check", "capture failure with a detail refused", with(continuityRequest(h.lock, nil, "enforce"), "observed", obj{"endpoint": fixtureURL, "failure": "list_cached", "failure_detail": captureDetail}))
	add("continuity_check", "capture_failed given by a host refused", with(continuityRequest(h.lock, nil, "enforce"), "observed", obj{"endpoint": fixtureURL, "failure": "capture_failed", "failure_detail": captureDetail}))
	add("lock_check", "capture failed", obj{"lock": h.lock, "failure": "list_cached"})
	cut := obj{"endpoint": fixtureURL, "failure": "answer_too_large", "failure_detail": "16777216"}
	add("continuity_check", "answer too large", with(continuityRequest(h.lock, nil, "enforce"), "observed", cut))
	add("lock_check", "answer too large", obj{"lock": h.lock, "failure": "answer_too_large", "failure_detail": "65536"})
	for name, bad := range map[string]string{"empty": "", "zero": "0", "with a leading zero": "065536", "negative": "-1",
		"in words": "64 KiB", "over 63 bits": "99999999999999999999"} {
		add("continuity_check", "answer too large with a limit "+name+" refused",
			with(continuityRequest(h.lock, nil, "enforce"), "observed", with(cut, "failure_detail", bad)))
	}
	add("lock_check", "answer too large without a limit refused", obj{"lock": h.lock, "failure": "answer_too_large"})

	issuer := "https://issuer.example"
	add("continuity_check", "issuer step and fault", with(h.issuerCheck, "issuer", obj{"url": issuer, "step": "lock_check", "fault": "http_status", "status": 503}))
	add("continuity_check", "issuer step and unavailable refused", with(h.issuerCheck, "issuer", obj{"url": issuer, "step": "lock_check", "fault": "timeout", "unavailable": "lock_check: x"}))
	add("continuity_check", "issuer error text refused", with(h.issuerCheck, "issuer", obj{"url": issuer, "step": "lock_check", "error": "POST /api/v1/mcp/lock/check: HTTP 503: \"busy\""}))
	add("continuity_check", "issuer fault without step refused", with(h.issuerCheck, "issuer", obj{"url": issuer, "fault": "connect_refused"}))
	add("continuity_check", "issuer http_status without status refused", with(h.issuerCheck, "issuer", obj{"url": issuer, "step": "lock_check", "fault": "http_status"}))
	add("continuity_check", "issuer status without http_status refused", with(h.issuerCheck, "issuer", obj{"url": issuer, "step": "lock_check", "fault": "timeout", "status": 500}))
	add("continuity_check", "issuer error without step refused", with(h.issuerCheck, "issuer", obj{"url": issuer, "error": "x"}))
	add("continuity_check", "issuer unknown step refused", with(h.issuerCheck, "issuer", obj{"url": issuer, "step": "dns", "fault": "timeout"}))
	add("continuity_check", "issuer unknown fault refused", with(h.issuerCheck, "issuer", obj{"url": issuer, "step": "lock_check", "fault": "dns_failed"}))

	good := without(g.request(g.receipt(receiptSpec{})), "key_directory")
	good["pinned_keys"] = h.pins
	add("guard", "fetched key directory", with(good, "fetched_key_directory", h.fetched))
	retired := with(good, "pinned_keys", []any{obj{"kid": g.retired.KID, "public_key": g.retired.PublicKey}})
	add("guard", "fetched key directory retires a pinned key", with(with(retired, "receipt", g.receipt(receiptSpec{key: g.retired})), "fetched_key_directory", h.fetched))
	add("guard", "fetched key directory without a pinned key", with(good, "fetched_key_directory", with(h.fetched, "keys", []any{})))
	add("guard", "fetched key directory not an object", with(good, "fetched_key_directory", `["keys"]`))
	add("guard", "fetched key directory not json", with(good, "fetched_key_directory", `<html>busy</html>`))
	add("guard", "fetched key directory keys not an array", with(good, "fetched_key_directory", with(h.fetched, "keys", "all")))
	add("guard", "fetched key directory the core refuses", with(good, "fetched_key_directory", with(h.fetched, "v", 2)))
	add("guard", "fetched and operator key directory refused", with(with(good, "fetched_key_directory", h.fetched), "key_directory", g.directory))
	add("guard", "fetched key directory without pins refused", without(with(good, "fetched_key_directory", h.fetched), "pinned_keys"))

	base := baseTools()
	add("diff", "pages side", obj{"old": h.lock, "new": obj{"pages": []string{page(t, rugPull(base)[:2], "c2"), page(t, rugPull(base)[2:], "")}}})
	add("diff", "pages side of page objects", obj{"old": base, "new": obj{"pages": []any{obj{"tools": toolAdded(base)[:3], "nextCursor": "c2"}, obj{"tools": toolAdded(base)[3:]}}}})
	add("diff", "pages side not the whole list", obj{"old": h.lock, "new": obj{"pages": []string{page(t, base[:2], "c2")}}})
	add("diff", "pages side with another member", obj{"old": h.lock, "new": obj{"pages": h.pages, "page_cap_reached": true}})
	add("diff", "pages side page neither text nor object", obj{"old": h.lock, "new": obj{"pages": []any{7}}})
	add("verify_lock", "lockfile without url", obj{"lock": lockWithout(t, base), "now": checkNow})
	return vs
}

// lockWithout is a crawlcheck lockfile that pins no server.
func lockWithout(t testing.TB, ts []obj) string {
	return resultField(t, call(t, "make_lock", obj{"tools": ts, "approved_at": approvedAt}), "lock")
}

// TestHostFactsGiveTheSameBytes holds that a host handing over facts gets
// exactly the answer it got when it applied the rule itself: the same facts
// give the same record, lockfile and answer.
func TestHostFactsGiveTheSameBytes(t *testing.T) {
	h := newHostFacts(t)
	g := h.g
	same := func(name, op string, facts, built any) {
		t.Helper()
		a, b := core.Call(op, mustJSON(t, facts)), core.Call(op, mustJSON(t, built))
		if !bytes.HasPrefix(a, []byte(`{"ok":true`)) || !bytes.Equal(a, b) {
			t.Errorf("%s:\n facts %s\n built %s", name, a, b)
		}
	}
	srv := obj{"url": fixtureURL, "protocol_version": "2025-06-18", "info": obj{"name": "issues", "version": "1.4.0"}}
	same("make_lock from observed", "make_lock",
		obj{"observed": h.observed, "approved_at": approvedAt},
		obj{"pages": h.pages, "server": srv, "approved_at": approvedAt})
	infoless := deepCopy(h.observed)
	infoless["server_info"] = []any{"issues"}
	same("make_lock: serverInfo not an object is not pinned", "make_lock",
		obj{"observed": infoless, "approved_at": approvedAt},
		obj{"pages": h.pages, "server": obj{"url": fixtureURL, "protocol_version": "2025-06-18"}, "approved_at": approvedAt})
	names := []any{"delete_repository", "get_issue"}
	same("approve pinning the observed server", "approve",
		obj{"record": h.check, "lock": h.lock, "observed": h.changedObserved, "names": names, "approved_at": checkNow},
		obj{"record": h.check, "lock": h.lock, "pages": h.changedObserved["pages"], "names": names, "approved_at": checkNow,
			"server": obj{"url": "https://mcp.example.com/v2/mcp", "protocol_version": "2025-06-18", "info": obj{"name": "issues", "version": "1.4.0"}}})

	req := continuityRequest(h.lock, nil, "enforce")
	same("list_cached is recorded as server_unavailable", "continuity_check",
		with(req, "observed", obj{"endpoint": fixtureURL, "failure": "list_cached"}),
		with(req, "observed", obj{"endpoint": fixtureURL, "failure": "server_unavailable", "failure_detail": "capture_failed: " + captureDetail}))
	same("answer_not_captured is recorded as server_unavailable", "continuity_check",
		with(req, "observed", obj{"endpoint": fixtureURL, "failure": "answer_not_captured"}),
		with(req, "observed", obj{"endpoint": fixtureURL, "failure": "server_unavailable", "failure_detail": "capture_failed: " + notCapturedDetail}))
	same("answer_too_large is recorded as server_unavailable", "continuity_check",
		with(req, "observed", obj{"endpoint": fixtureURL, "failure": "answer_too_large", "failure_detail": "16777216"}),
		with(req, "observed", obj{"endpoint": fixtureURL, "failure": "server_unavailable", "failure_detail": "the server sent an answer of more than 16777216 bytes: not read further"}))
	same("lock_check of answer_too_large", "lock_check",
		obj{"lock": h.lock, "failure": "answer_too_large", "failure_detail": "65536"},
		obj{"lock": h.lock, "failure": "server_unavailable", "failure_detail": "the server sent an answer of more than 65536 bytes: not read further"})
	same("lock_check of list_cached", "lock_check",
		obj{"lock": h.lock, "failure": "list_cached"},
		obj{"lock": h.lock, "failure": "server_unavailable", "failure_detail": "capture_failed: " + captureDetail})

	for _, step := range []string{"key_directory", "lock_check"} {
		const issuer, text = "https://issuer.example", "no answer within 5 s"
		same("issuer "+step+" failed", "continuity_check",
			with(h.issuerCheck, "issuer", obj{"url": issuer, "step": step, "fault": "timeout", "timeout_ms": 5000}),
			with(with(h.issuerCheck, "issuer", obj{"url": issuer, "unavailable": step + ": " + text}), "evidence", []any{obj{
				"observation": "service_unavailable",
				"detail":      obj{"issuer": issuer, "operation": "mcp.lock.check", "step": step, "error": text, "fallback": "local_comparison"},
			}}))
	}

	good := g.request(g.receipt(receiptSpec{}))
	delete(good, "key_directory")
	good["pinned_keys"] = h.pins
	kept := deepCopy(g.directory)
	kept["keys"] = kept["keys"].([]any)[:1] // the active key: the one pinned
	same("guard keeps only the pinned keys of a fetched directory", "guard",
		with(good, "fetched_key_directory", h.fetched), with(good, "key_directory", kept))
	same("guard: a fetched directory without a pinned key leaves the pins", "guard",
		with(good, "fetched_key_directory", with(h.fetched, "keys", []any{h.fetched["keys"].([]any)[2]})), good)
	got := core.Call("guard", mustJSON(t, with(good, "fetched_key_directory", "<html>")))
	if !bytes.Contains(got, []byte(`"issuer_fault":{"fault":"response_malformed","step":"key_directory"}`)) {
		t.Errorf("a fetched directory that is not JSON: %s", got)
	}

	base := baseTools()
	rugged := rugPull(base)
	same("diff of a pages side", "diff",
		obj{"old": h.lock, "new": obj{"pages": []string{page(t, rugged[:2], "c2"), page(t, rugged[2:], "")}}},
		obj{"old": h.lock, "new": rugged})

	info := call(t, "verify_lock", obj{"lock": h.lock, "now": checkNow})
	if !strings.Contains(string(info), `"url":"`+fixtureURL+`"`) {
		t.Errorf("verify_lock names no url: %s", info)
	}
}
