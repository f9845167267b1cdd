package core_test

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ (read the diff before committing)")

type goldenCase struct {
	Name    string
	Request obj
}

// continuityRequest is a check of pages against a lockfile, as a binding
// connected to the approved endpoint would ask it.
func continuityRequest(lock obj, pages []string, mode string) obj {
	return obj{
		"now":  checkNow,
		"mode": mode,
		"lock": lock,
		"observed": obj{
			"endpoint":         fixtureURL,
			"protocol_version": "2025-06-18",
			"server_info":      obj{"name": "issues", "version": "1.4.0"},
			"handshake":        "initialize",
			"pages":            pages,
		},
	}
}

func with(r obj, key string, v any) obj {
	r = deepCopy(r)
	r[key] = v
	return r
}

func withObserved(r obj, key string, v any) obj {
	r = deepCopy(r)
	r["observed"].(obj)[key] = v
	return r
}

func operatorPolicy(edit func(obj)) obj {
	p := obj{"kind": "crawlcheck-policy", "v": 1, "version": "acme-2026-11", "max_baseline_age_days": 30,
		"effects": obj{"tool_removed": "pause_tool", "annotations_changed": "proceed"}}
	if edit != nil {
		edit(p)
	}
	return p
}

// continuityCases are the cases of spec §6: the 17 interface cases, the 14
// failure classes in the 3 modes, the signed-baseline cases, and the
// decisions this project made where the spec was silent.
func continuityCases(t testing.TB) []goldenCase {
	base := baseTools()
	lock := lockDoc(t, base, approvedAt)
	one := func(ts []obj) []string { return []string{page(t, ts, "")} }
	enforce := func(ts []obj) obj { return continuityRequest(lock, one(ts), "enforce") }

	legacy := deepCopy(lock)
	delete(legacy, "parts")
	delete(legacy, "coverage") // a lockfile from before either
	delete(legacy, "sha256")

	var cs []goldenCase
	add := func(name string, r obj) { cs = append(cs, goldenCase{name, r}) }

	// The 17 interface cases.
	add("unchanged", enforce(base))
	add("description rug pull withholds that tool alone", enforce(rugPull(base)))
	add("legitimate description update", enforce(descriptionUpdate(base)))
	add("schema widened", enforce(schemaWidening(base)))
	add("annotations flipped", enforce(annotationFlip(base)))
	add("tool added", enforce(toolAdded(base)))
	add("tool removed", enforce(toolRemoved(base)))
	add("legacy baseline without parts", continuityRequest(legacy, one(rugPull(base)), "enforce"))
	add("truncated list", continuityRequest(lock, []string{page(t, base[:2], "c2")}, "enforce"))
	add("malformed response", continuityRequest(lock, []string{`{"tools":[{"name":"get_issue"},null]}`}, "enforce"))
	add("old baseline", continuityRequest(lockDoc(t, base, oldApproval), one(base), "enforce"))
	add("policy version mismatch", with(enforce(base), "expected_policy_version", "acme-2026-11"))
	add("different server", withObserved(enforce(base), "endpoint", "https://mcp.example.net/mcp"))
	add("observe mode never blocks", continuityRequest(lock, one(rugPull(base)), "observe"))
	add("review mode pauses the session", continuityRequest(lock, one(descriptionUpdate(base)), "review"))
	rugHash := toolHash(t, rugPull(base), "get_issue")
	exception := func(until string) obj {
		return obj{"observation": "description_changed", "tool": "get_issue", "sha256": rugHash,
			"approved_by": "alice@example.com", "until": until, "reason": "wording change reviewed in TICKET-12"}
	}
	add("approved exception", with(enforce(rugPull(base)), "policy", operatorPolicy(func(p obj) {
		p["max_baseline_age_days"] = 90
		p["exceptions"] = []any{exception("2026-12-31T00:00:00Z")}
	})))
	add("expired exception", with(enforce(rugPull(base)), "policy", operatorPolicy(func(p obj) {
		p["max_baseline_age_days"] = 90
		p["exceptions"] = []any{exception("2026-11-01T00:00:00Z")}
	})))
	add("operator policy", with(enforce(annotationFlip(toolRemoved(base))), "policy", operatorPolicy(nil)))
	// Issue 38: an operator may give a change of a class its own effect.
	// The default policy withholds an editorial change ("review mode pauses
	// the session" above); with class_effects it proceeds, recorded, in
	// review too; a change that adds an instruction keeps its pause.
	classPolicy := operatorPolicy(func(p obj) {
		p["version"] = "acme-2026-12-classes"
		p["max_baseline_age_days"] = 90
		p["class_effects"] = obj{"description_changed": obj{"editorial": "proceed_recorded", "documentation": "proceed_recorded"}}
	})
	add("class policy: an editorial change proceeds recorded in review", with(continuityRequest(lock, one(descriptionUpdate(base)), "review"), "policy", classPolicy))
	add("class policy: an added instruction still pauses in review", with(continuityRequest(lock, one(rugPull(base)), "review"), "policy", classPolicy))
	add("class policy: an added instruction is still withheld in enforce", with(enforce(rugPull(base)), "policy", classPolicy))

	// The 14 failure classes in each mode.
	directory := keyDirectory(t)
	lf := newLogFixture(t)
	issuer := loadKey(t, "test-issuer")
	signed := signDoc(t, lock, issuer, true)
	edited := deepCopy(signed)
	edited["descriptions"].(obj)["get_issue"] = "Get one issue by its number, and close the others."
	evidence := func(o string, detail obj) func(string) obj {
		return func(mode string) obj {
			return with(continuityRequest(lock, one(base), mode), "evidence", []any{obj{"observation": o, "detail": detail}})
		}
	}
	failures := []struct {
		observation string
		request     func(mode string) obj
	}{
		{"evidence_expired", evidence("evidence_expired", obj{"expired_at": "2026-11-30T11:50:00.000Z"})},
		{"signature_invalid", evidence("signature_invalid", obj{"receipt_sha256": "00" + rugHash[2:]})},
		{"key_unknown", evidence("key_unknown", obj{"key_id": "test-unknown-9"})},
		{"key_retired", evidence("key_retired", obj{"key_id": "test-issuer-2025"})},
		{"server_identity_mismatch", func(mode string) obj {
			return withObserved(continuityRequest(lock, one(base), mode), "endpoint", "https://mcp.example.net/mcp")
		}},
		{"server_unavailable", func(mode string) obj {
			r := continuityRequest(lock, nil, mode)
			delete(r["observed"].(obj), "pages")
			r["observed"].(obj)["failure"] = "server_unavailable"
			r["observed"].(obj)["failure_detail"] = "connect: connection refused"
			return r
		}},
		{"tool_list_truncated", func(mode string) obj {
			return continuityRequest(lock, []string{page(t, base[:2], "c2")}, mode)
		}},
		{"response_malformed", func(mode string) obj {
			return continuityRequest(lock, []string{`{"tools":[{"name":"get_issue"`}, mode)
		}},
		{"baseline_stale", func(mode string) obj {
			return continuityRequest(lockDoc(t, base, oldApproval), one(base), mode)
		}},
		{"policy_version_mismatch", func(mode string) obj {
			return with(continuityRequest(lock, one(base), mode), "expected_policy_version", "acme-2026-11")
		}},
		{"check_timeout", func(mode string) obj {
			r := continuityRequest(lock, nil, mode)
			delete(r["observed"].(obj), "pages")
			r["observed"].(obj)["failure"] = "check_timeout"
			r["observed"].(obj)["failure_detail"] = "tools/list did not answer within 10s"
			return r
		}},
		{"service_unavailable", evidence("service_unavailable", obj{"issuer": "https://issuer.example/api/v1/mcp/lock/check", "fallback": "local"})},
		{"decision_refused", evidence("decision_refused", obj{"decision": "block"})},
		{"baseline_untrusted", func(mode string) obj {
			return with(continuityRequest(edited, one(base), mode), "key_directory", directory)
		}},
		{"log_proof_invalid", func(mode string) obj {
			return lf.check(t, mode, obj{"proof": strings.Replace(lf.proof(12), "index 9\n", "index 8\n", 1)})
		}},
		{"log_inconsistent", func(mode string) obj {
			return lf.check(t, mode, obj{"proof": lf.proof(12), "checkpoint": lf.fork.Checkpoint(10, lf.issuer), "consistency": lf.consistency(10, 12)})
		}},
	}
	for _, f := range failures {
		for _, mode := range []string{"observe", "review", "enforce"} {
			add(f.observation+" in "+mode, f.request(mode))
		}
	}

	// Signed baselines.
	foreign := loadKey(t, "test-foreign")
	operator := loadKey(t, "test-operator")
	other := loadKey(t, "test-operator-other")
	signedCheck := func(doc obj, extra obj) obj {
		r := with(continuityRequest(doc, one(base), "enforce"), "key_directory", directory)
		for k, v := range extra {
			r[k] = v
		}
		return r
	}
	add("signed by CrawlCheck", signedCheck(signed, nil))
	add("edited after signing", signedCheck(edited, nil))
	add("re-signed with a foreign key", signedCheck(signDoc(t, edited, foreign, true), nil))
	add("operator-signed", signedCheck(signDoc(t, lock, operator, false), obj{"operator_keys": []any{operator.PublicKey}}))
	add("wrong operator key", signedCheck(signDoc(t, lock, other, false), obj{"operator_keys": []any{operator.PublicKey}}))
	add("unsigned", continuityRequest(lock, one(base), "enforce"))

	// Decisions where the spec was silent (docs/decisions.md).
	add("log consistency unavailable", lf.check(t, "enforce", obj{"proof": lf.proof(12), "checkpoint": lf.checkpoint(10), "consistency_unavailable": true}))
	add("unsigned refused once an operator key is given", with(continuityRequest(lock, one(base), "enforce"), "operator_keys", []any{operator.PublicKey}))
	add("signed by a retired issuer key", signedCheck(signDoc(t, lock, loadKey(t, "test-issuer-retired"), true), nil))
	// A policy that requires an observed baseline (require_observed_baseline,
	// docs/issuer.md Trust model): only a lockfile whose signed provenance
	// says the issuer read the server itself is a baseline.
	requireObserved := operatorPolicy(func(p obj) { p["require_observed_baseline"] = true; delete(p, "max_baseline_age_days") })
	observedLock := signDoc(t, provenanceLockDoc(t, base, "observed", "anonymous"), issuer, true)
	submittedLock := signDoc(t, provenanceLockDoc(t, base, "submitted", "tenant:acme"), issuer, true)
	add("observed baseline, the policy requires observed", signedCheck(observedLock, obj{"policy": requireObserved}))
	add("submitted baseline, the policy requires observed", signedCheck(submittedLock, obj{"policy": requireObserved}))
	add("submitted baseline, no requirement", signedCheck(submittedLock, nil))
	add("baseline stating no provenance, the policy requires observed", signedCheck(signed, obj{"policy": requireObserved}))
	add("unsigned observed baseline, the policy requires observed", with(continuityRequest(provenanceLockDoc(t, base, "observed", "operator"), one(base), "enforce"), "policy", requireObserved))
	// The issuer's live directory, as a host with pinned issuer keys fetched
	// it at this check (pinned_keys and fetched_key_directory): guard's rule
	// for the baseline (docs/keys.md, Following the issuer's directory).
	retiredKey := loadKey(t, "test-issuer-retired")
	live := func(doc obj, fetched string, pins ...testKey) obj {
		r := continuityRequest(doc, one(base), "enforce")
		var ps []any
		for _, k := range pins {
			ps = append(ps, obj{"kid": k.KID, "public_key": k.PublicKey})
		}
		r["pinned_keys"] = ps
		if fetched != "" {
			r["fetched_key_directory"] = fetched
		}
		return r
	}
	rotated := deepCopy(directory)
	rotated["keys"].([]any)[0].(obj)["status"] = "retired"
	add("live directory: the pinned key verifies", live(signed, string(mustJSON(t, directory)), issuer, retiredKey))
	add("live directory: it lacks the pinned key, the pin decides", live(signed, `{"kind":"crawlcheck-key-directory","v":1,"issuer":"test-issuer.crawlcheck.invalid","keys":[]}`, issuer))
	add("live directory: it retired the pinned key", live(signed, string(mustJSON(t, rotated)), issuer, retiredKey))
	add("live directory: a key it holds but nobody pinned", live(signed, string(mustJSON(t, directory)), retiredKey))
	add("live directory unreadable: the pins alone, service_unavailable", with(live(signed, "", issuer), "issuer", obj{"url": "https://issuer.example",
		"step": "key_directory", "fault": "keys_invalid"}))
	// Beside the operator's own copy of the directory the pins judge no
	// baseline (the hosts had dropped them themselves): a copy without the
	// signing key leaves the baseline untrusted, a pin of it
	// notwithstanding.
	ownCopy := live(signed, "", issuer)
	ownCopy["key_directory"] = obj{"kind": "crawlcheck-key-directory", "v": 1, "issuer": "test-issuer.crawlcheck.invalid", "keys": []any{}}
	add("the operator's directory beside pins: the directory alone vouches", ownCopy)
	legacySigned := signDoc(t, legacy, issuer, true)
	partsAdded := deepCopy(legacySigned)
	partsAdded["parts"] = lock["parts"]
	add("parts added after signing are not used", with(continuityRequest(partsAdded, one(rugPull(base)), "enforce"), "key_directory", directory))
	add("repeated cursor", continuityRequest(lock, []string{page(t, base[:2], "same"), page(t, base[2:], "same")}, "enforce"))
	add("page cap reached", withObserved(continuityRequest(lock, []string{page(t, base[:2], "c2")}, "enforce"), "page_cap_reached", true))
	add("empty-string cursor", continuityRequest(lock, []string{`{"nextCursor":"","tools":` + string(mustJSON(t, base[:2])) + `}`}, "enforce"))
	add("two pages read whole", continuityRequest(lock, []string{page(t, base[:2], "c2"), page(t, base[2:], "")}, "enforce"))
	add("invalid UTF-8 in a page", withObserved(enforce(base), "pages", []any{obj{"base64": "eyJ0b29scyI6W3sibmFtZSI6Iv8ifV19"}}))
	// A frame that is no JSON reaches the core whole (no host can take its
	// result out): the error is located in its result, so two hosts whose
	// request ids differ in length record the same words.
	add("a page whose frame is no JSON: located in its result", withObserved(enforce(base), "pages", []any{`{"jsonrpc":"2.0","id":7,"result":{not json}`}))
	add("a page whose frame is no JSON, a longer id: the same error", withObserved(enforce(base), "pages", []any{`{"jsonrpc":"2.0","id":"gateway-7","result":{not json}`}))
	// The TypeScript SDK writes its id after the result: a frame cut off
	// after it is refused after its result, with no offset that counts it.
	add("a page whose frame is cut off after its result and id", withObserved(enforce(base), "pages", []any{`{"result":{"tools":[]},"jsonrpc":"2.0","id":7`}))
	add("a page whose frame is cut off after its result and a longer id: the same error", withObserved(enforce(base), "pages", []any{`{"result":{"tools":[]},"jsonrpc":"2.0","id":"gateway-7"`}))
	add("duplicate tool names across pages", continuityRequest(lock, []string{page(t, base[:2], "c2"), page(t, base[1:], "")}, "enforce"))
	add("stdio server", withObserved(continuityRequest(lockDocAt(t, base, "stdio:issues-server --stdio"), one(base), "enforce"), "endpoint", "stdio:issues-server  --stdio"))
	add("evidence_expired after a refresh", with(evidence("evidence_expired", obj{})("enforce"), "refreshed", true))
	add("chained to a previous record", with(enforce(base), "prev_record_sha256", rugHash))
	// A re-check list_changed asked for: a storm's is marked, a plain one is not.
	add("a list_changed storm's re-check says so", with(enforce(base), "recheck", obj{"coalesced": 12, "held_back_ms": 4000}))
	add("a storm's first re-check, held back 0 ms", with(enforce(base), "recheck", obj{"coalesced": 3, "held_back_ms": 0}))
	add("a re-check of one list_changed, not held back, is no storm", with(enforce(base), "recheck", obj{"coalesced": 1, "held_back_ms": 0}))
	add("integrity override on the record", with(withObserved(enforce(base), "endpoint", "https://mcp-2.example.com/mcp"), "policy", operatorPolicy(func(p obj) {
		p["max_baseline_age_days"] = 90
		p["allow_integrity_override"] = true
		p["effects"] = obj{"server_identity_mismatch": "pause"}
	})))
	g := newGuardFixture(t)
	var answer obj
	json.Unmarshal(call(t, "guard", g.request(g.receipt(receiptSpec{}))), &answer)
	issuerCheck := continuityRequest(g.lock, one(g.tools), "enforce")
	add("the issuer agreed, and the record names its receipt", with(issuerCheck, "issuer", obj{"url": "https://issuer.example/api/v1/mcp/lock/check", "guard": answer}))
	add("the issuer could not be asked: local fallback", with(with(issuerCheck, "issuer", obj{"url": "https://issuer.example/api/v1/mcp/lock/check", "unavailable": "connect: connection refused"}),
		"evidence", []any{obj{"observation": "service_unavailable", "detail": obj{"fallback": "local_comparison"}}}))
	add("the lockfile is in the issuer's log", lf.check(t, "enforce", obj{"proof": lf.proof(12)}))
	add("the log grew consistently since the kept checkpoint", lf.check(t, "enforce", obj{"proof": lf.proof(12), "checkpoint": lf.checkpoint(10), "consistency": lf.consistency(10, 12)}))
	add("the kept checkpoint is newer than the proof's", lf.check(t, "enforce", obj{"proof": lf.proof(12), "checkpoint": lf.checkpoint(16), "consistency": lf.consistency(12, 16)}))
	add("a log proof for an unsigned lockfile", with(with(continuityRequest(lock, one(base), "enforce"), "key_directory", directory), "log", obj{"proof": lf.proof(12)}))
	add("a log checkpoint signed by the retired key", lf.check(t, "enforce", obj{"proof": lf.log.Proof(lockIndex, 12, lf.retired)}))
	add("the log proof and a rug pull", with(lf.check(t, "enforce", obj{"proof": lf.proof(12)}), "observed", with(continuityRequest(lock, one(rugPull(base)), "enforce")["observed"].(obj), "endpoint", fixtureURL)))
	// Pins only: the log is judged by the baseline's keys, the pins and
	// the directory fetched at this check (docs/log.md).
	pinnedLog := func(fetched string, log obj) obj {
		r := lf.check(t, "enforce", log)
		delete(r, "key_directory")
		r["pinned_keys"] = []any{obj{"kid": issuer.KID, "public_key": issuer.PublicKey}}
		if fetched != "" {
			r["fetched_key_directory"] = fetched
		} else {
			r["issuer"] = obj{"url": "https://issuer.example", "step": "key_directory", "fault": "connect_refused"}
		}
		return r
	}
	add("pinned keys only: the lockfile is in the issuer's log", pinnedLog(string(mustJSON(t, lf.directory)), obj{"proof": lf.proof(12)}))
	add("pinned keys only: a forged log proof", pinnedLog(string(mustJSON(t, lf.directory)), obj{"proof": lf.log.Proof(lockIndex, 12, lf.foreign)}))
	add("pinned keys only, the directory unavailable: no log origin", pinnedLog("", obj{"proof": lf.proof(12)}))
	agentgate := agentgateDoc(t, base)
	add("agentgate baseline cannot see annotations", continuityRequest(agentgate, one(annotationFlip(base)), "enforce"))
	add("agentgate baseline sees a rug pull", continuityRequest(agentgate, one(rugPull(base)), "enforce"))
	return cs
}

func lockDocAt(t testing.TB, ts []obj, url string) obj {
	res := call(t, "make_lock", obj{"tools": ts, "approved_at": approvedAt, "server": obj{"url": url}})
	var doc obj
	json.Unmarshal([]byte(resultField(t, res, "lock")), &doc)
	return doc
}

func agentgateDoc(t testing.TB, ts []obj) obj {
	res := call(t, "make_lock", obj{"tools": ts, "format": "agentgate", "name": "issues", "approved_at": approvedAt, "generated_by": "agentgate@1.2.0"})
	var doc obj
	json.Unmarshal([]byte(resultField(t, res, "lock")), &doc)
	return doc
}

func toolHash(t testing.TB, ts []obj, name string) string {
	var out struct {
		Tools []struct{ Name, SHA256 string }
	}
	json.Unmarshal(call(t, "hash_tools", obj{"tools": ts}), &out)
	for _, x := range out.Tools {
		if x.Name == name {
			return x.SHA256
		}
	}
	t.Fatalf("no tool %q", name)
	return ""
}

// TestContinuityGolden holds testdata/continuity.json: every case's request
// gives exactly its record, and the file holds exactly the cases above.
func TestContinuityGolden(t *testing.T) {
	goldenFile{
		path:   filepath.Join(testdataDir, "continuity.json"),
		kind:   "crawlcheck-continuity-golden",
		about:  "Each case: the continuity_check request and the record it must give, byte for byte once compacted (docs/testdata.md). Written by `go test ./core -update`.",
		op:     "continuity_check",
		result: "record",
	}.hold(t, append(append(append(continuityCases(t), coverageCases(t)...), featuresCases(t)...), append(append(launchedCases(t), launchedKindsCases(t)...), launchedTagCases(t)...)...))
}
