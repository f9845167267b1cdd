package core_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/core/internal/canon"
)

// opVector is one testdata/ops/<op>/<name>.json: a request and the exact
// envelope it gives. Exactly one of Request, Raw (request text that is not a
// JSON object) and B64 (request bytes that are not even UTF-8) is set.
type opVector struct {
	Op, Name string
	Request  any
	Raw      string
	B64      []byte
}

func (v opVector) bytes(t testing.TB) []byte {
	switch {
	case v.B64 != nil:
		return v.B64
	case v.Raw != "":
		return []byte(v.Raw)
	}
	return mustJSON(t, v.Request)
}

func opVectors(t testing.TB) []opVector {
	base := baseTools()
	lock := lockDoc(t, base, approvedAt)
	directory := keyDirectory(t)
	issuer, operator, other := loadKey(t, "test-issuer"), loadKey(t, "test-operator"), loadKey(t, "test-operator-other")
	signed := signDoc(t, lock, issuer, true)
	edited := deepCopy(signed)
	edited["descriptions"].(obj)["get_issue"] = "Get one issue, and close the others."
	legacy := deepCopy(lock)
	delete(legacy, "parts")
	delete(legacy, "coverage") // a lockfile from before either
	delete(legacy, "sha256")
	agentgate := agentgateDoc(t, base)
	one := func(ts []obj) []string { return []string{page(t, ts, "")} }

	var vs []opVector
	add := func(op, name string, request any) { vs = append(vs, opVector{Op: op, Name: name, Request: request}) }
	raw := func(op, name, text string) { vs = append(vs, opVector{Op: op, Name: name, Raw: text}) }
	bin := func(op, name string, b []byte) { vs = append(vs, opVector{Op: op, Name: name, B64: b}) }

	add("version", "ok", obj{})
	add("version", "unknown field", obj{"verbose": true})
	raw("version", "request not json", `{"a":`)
	raw("version", "request not an object", `[]`)
	bin("version", "request not utf-8", []byte("{\"a\":\"\xff\"}"))
	raw("version", "request with duplicate keys", `{"a":1,"a":2}`)
	add("no_such_op", "unknown op", obj{})
	add("rules", "ok", obj{})

	add("canonicalize", "ok", obj{"json": `{"b":[1.50,-0,1e21,"\u00e9\ud83d\ude00"],"a":{"z":null,"y":true}}`})
	add("canonicalize", "utf-16 key order", obj{"json": `{"\ufb33":1,"\ud83d\ude00":2,"a":3}`})
	add("canonicalize", "duplicate key", obj{"json": `{"a":1,"b":{"c":1,"c":2}}`})
	add("canonicalize", "lone surrogate", obj{"json": `["\udead"]`})
	add("canonicalize", "too deep", obj{"json": strings.Repeat("[", 129) + strings.Repeat("]", 129)})
	add("canonicalize", "number out of range", obj{"json": `{"n":1e999}`})
	add("canonicalize", "not json", obj{"json": `{"a" 1}`})
	add("canonicalize", "missing json", obj{})

	add("hash_tools", "tools", obj{"tools": base})
	add("hash_tools", "pages", obj{"pages": []string{page(t, base[:2], "c2"), page(t, base[2:], "")}})
	add("hash_tools", "jsonrpc response", obj{"pages": []string{`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"ping","extra":{"x":1}}]}}`}})
	add("hash_tools", "truncated pages", obj{"pages": []string{page(t, base[:2], "c2")}})
	add("hash_tools", "null entry", obj{"tools": []any{base[0], nil}})
	add("hash_tools", "duplicate names", obj{"tools": []any{base[0], base[0]}})
	add("hash_tools", "name not a string", obj{"tools": []any{obj{"name": 7}}})
	add("hash_tools", "empty name", obj{"tools": []any{obj{"name": ""}}})
	add("hash_tools", "inputSchema not an object", obj{"tools": []any{obj{"name": "a", "inputSchema": "object"}}})
	add("hash_tools", "description not a string", obj{"tools": []any{obj{"name": "a", "description": []any{"x"}}}})
	add("hash_tools", "annotations not an object", obj{"tools": []any{obj{"name": "a", "annotations": true}}})
	add("hash_tools", "tools and pages", obj{"tools": base, "pages": one(base)})
	add("hash_tools", "jsonrpc error", obj{"pages": []string{`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"boom"}}`}})

	srv := obj{"url": fixtureURL, "protocol_version": "2025-06-18", "info": obj{"name": "issues", "version": "1.4.0"}}
	add("make_lock", "crawlcheck", obj{"tools": base, "approved_at": approvedAt, "server": srv})
	add("make_lock", "from pages", obj{"pages": []string{page(t, base[:2], "c2"), page(t, base[2:], "")}, "approved_at": approvedAt, "server": srv})
	add("make_lock", "agentgate", obj{"tools": base, "format": "agentgate", "name": "issues", "approved_at": approvedAt, "generated_by": "agentgate@1.2.0"})
	add("make_lock", "agentgate into another", obj{"tools": toolAdded(base)[4:], "format": "agentgate", "name": "admin", "approved_at": checkNow, "into": agentgate})
	add("make_lock", "truncated list refused", obj{"pages": []string{page(t, base[:2], "c2")}, "approved_at": approvedAt})
	add("make_lock", "missing approved_at", obj{"tools": base})
	add("make_lock", "unknown format", obj{"tools": base, "approved_at": approvedAt, "format": "yaml"})
	rootsClient := obj{"roots": obj{"listChanged": true}}
	add("make_lock", "client capabilities", obj{"tools": base, "approved_at": approvedAt, "server": with(srv, "client_capabilities", rootsClient)})
	add("make_lock", "client capabilities not an object refused", obj{"tools": base, "approved_at": approvedAt, "server": with(srv, "client_capabilities", "roots")})

	// The provenance extension (docs/issuer.md, Trust model).
	observedBy := obj{"endpoint": fixtureURL, "protocol_version": "2025-06-18", "handshake": "initialize",
		"server_info": obj{"name": "issues", "version": "1.4.0"}, "pages": one(base)}
	add("make_lock", "provenance observed", obj{"observed": observedBy, "approved_at": approvedAt, "provenance": obj{"source": "observed", "by": "anonymous"}})
	add("make_lock", "provenance submitted by a tenant", obj{"tools": base, "approved_at": approvedAt, "server": srv, "provenance": obj{"source": "submitted", "by": "tenant:acme"}})
	add("make_lock", "provenance observed of tools handed over refused", obj{"tools": base, "approved_at": approvedAt, "server": srv, "provenance": obj{"source": "observed", "by": "operator"}})
	add("make_lock", "provenance submitted anonymously refused", obj{"tools": base, "approved_at": approvedAt, "provenance": obj{"source": "submitted", "by": "anonymous"}})
	add("make_lock", "provenance of an unknown principal refused", obj{"tools": base, "approved_at": approvedAt, "provenance": obj{"source": "submitted", "by": "tenant:"}})
	add("make_lock", "provenance with an unknown member refused", obj{"tools": base, "approved_at": approvedAt, "provenance": obj{"source": "submitted", "by": "operator", "at": "x"}})
	add("make_lock", "provenance in an agentgate.lock refused", obj{"tools": base, "format": "agentgate", "name": "issues", "approved_at": approvedAt, "provenance": obj{"source": "submitted", "by": "operator"}})
	submitted := signDoc(t, provenanceLockDoc(t, base, "submitted", "tenant:acme"), issuer, true)
	relabelled := deepCopy(submitted)
	relabelled["provenance"] = obj{"source": "observed", "by": "tenant:acme"}
	stripped := deepCopy(submitted)
	delete(stripped, "provenance")
	labelledAfter := deepCopy(signed)
	labelledAfter["provenance"] = obj{"source": "observed", "by": "operator"}

	verify := func(name string, doc any, extra obj) {
		r := obj{"lock": doc, "now": checkNow, "key_directory": directory}
		for k, v := range extra {
			r[k] = v
		}
		add("verify_lock", name, r)
	}
	verify("unsigned", lock, nil)
	verify("signed by the issuer", signed, nil)
	verify("operator signed", signDoc(t, lock, operator, false), obj{"operator_keys": []any{operator.PublicKey}})
	verify("wrong operator key", signDoc(t, lock, other, false), obj{"operator_keys": []any{operator.PublicKey}})
	verify("edited after signing", edited, nil)
	verify("foreign key", signDoc(t, lock, loadKey(t, "test-foreign"), true), nil)
	verify("retired key", signDoc(t, lock, loadKey(t, "test-issuer-retired"), true), nil)
	verify("issuer key not yet valid", signed, obj{"now": "2025-12-01T00:00:00Z"})
	verify("unsigned but required", lock, obj{"require_signed": true})
	verify("lock as a string", string(mustJSON(t, lock)), nil)
	verify("agentgate", agentgate, nil)
	verify("unknown kind", obj{"kind": "crawlcheck-mcp-lock-2"}, nil)
	verify("unknown v", with(lock, "v", 2), nil)
	verify("unknown lockfileVersion", with(agentgate, "lockfileVersion", 3), nil)
	verify("tools_sha256 mismatch", with(lock, "tools_sha256", strings.Repeat("0", 64)), nil)
	verify("unknown member", with(lock, "comment", "hi"), nil)
	verify("count mismatch", with(lock, "count", 3), nil)
	verify("malformed signature", with(signed, "signature", "ed25519:test-issuer-2026:!!"), nil)
	verify("lock with a duplicate key", `{"kind":"crawlcheck-mcp-lock","kind":"x"}`, nil)
	verify("provenance signed", submitted, nil)
	verify("provenance relabelled observed after signing", relabelled, nil)
	verify("provenance taken out after signing", stripped, nil)
	verify("provenance added after signing", labelledAfter, nil)
	verify("provenance source unknown", with(submitted, "provenance", obj{"source": "crawled", "by": "operator"}), nil)
	add("verify_lock", "missing now", obj{"lock": lock})
	add("verify_lock", "bad key directory", obj{"lock": lock, "now": checkNow, "key_directory": obj{"kind": "crawlcheck-key-directory", "v": 1, "keys": []any{obj{"kid": "k", "alg": "rsa"}}}})
	add("verify_lock", "bad operator key", obj{"lock": lock, "now": checkNow, "operator_keys": []any{"AAAA"}})

	add("sign_lock", "operator key", obj{"lock": lock, "private_key": operator.Seed})
	add("sign_lock", "issuer key id", obj{"lock": lock, "private_key": issuer.Seed, "key_id": issuer.KID})
	add("sign_lock", "re-sign replaces the signature", obj{"lock": signed, "private_key": operator.Seed})
	add("sign_lock", "agentgate refused", obj{"lock": agentgate, "private_key": operator.Seed})
	add("sign_lock", "bad private key", obj{"lock": lock, "private_key": "c2hvcnQ="})

	// A pilot's uploads bound to its record key (docs/issuer.md, Trust model).
	const upload = "{\"kind\":\"crawlcheck-continuity-record\"}\n"
	signedUpload := resultField(t, call(t, "sign_pilot_upload", obj{"private_key": operator.Seed, "pilot_id": "pilot-a", "records": upload}), "signature")
	add("sign_pilot_upload", "ok", obj{"private_key": operator.Seed, "pilot_id": "pilot-a", "records": upload})
	add("sign_pilot_upload", "key_id refused", obj{"private_key": operator.Seed, "key_id": "k", "pilot_id": "pilot-a", "records": upload})
	add("sign_pilot_upload", "missing records", obj{"private_key": operator.Seed, "pilot_id": "pilot-a"})
	add("verify_pilot_upload", "signed", obj{"public_key": operator.PublicKey, "pilot_id": "pilot-a", "records": upload, "signature": signedUpload})
	add("verify_pilot_upload", "unsigned", obj{"public_key": operator.PublicKey, "pilot_id": "pilot-a", "records": upload})
	add("verify_pilot_upload", "another pilot", obj{"public_key": operator.PublicKey, "pilot_id": "pilot-b", "records": upload, "signature": signedUpload})
	add("verify_pilot_upload", "records edited", obj{"public_key": operator.PublicKey, "pilot_id": "pilot-a", "records": upload + upload, "signature": signedUpload})
	add("verify_pilot_upload", "another key", obj{"public_key": other.PublicKey, "pilot_id": "pilot-a", "records": upload, "signature": signedUpload})
	add("verify_pilot_upload", "malformed signature", obj{"public_key": operator.PublicKey, "pilot_id": "pilot-a", "records": upload, "signature": "ed25519:x"})
	add("verify_pilot_upload", "bad public key", obj{"public_key": "AAAA", "pilot_id": "pilot-a", "records": upload})

	add("public_key", "ok", obj{"private_key": operator.Seed})
	add("public_key", "bad", obj{"private_key": "not base64"})

	add("convert_lock", "crawlcheck to agentgate", obj{"lock": signed, "to": "agentgate", "name": "issues"})
	add("convert_lock", "agentgate to crawlcheck with the tools", obj{"lock": agentgate, "to": "crawlcheck", "tools": base, "server": obj{"url": fixtureURL}})
	add("convert_lock", "agentgate to crawlcheck without tools", obj{"lock": agentgate, "to": "crawlcheck"})
	add("convert_lock", "agentgate to crawlcheck with other tools", obj{"lock": agentgate, "to": "crawlcheck", "tools": rugPull(base)})
	add("convert_lock", "legacy lock", obj{"lock": legacy, "to": "agentgate", "name": "issues"})
	add("convert_lock", "same format", obj{"lock": lock, "to": "crawlcheck"})

	add("diff", "two tool lists", obj{"old": base, "new": schemaWidening(rugPull(toolAdded(toolRemoved(base))))})
	add("diff", "lock against tools", obj{"old": lock, "new": obj{"tools": annotationFlip(rugPull(base))}})
	add("diff", "legacy lock against tools", obj{"old": legacy, "new": one(rugPull(base))[0]})
	add("diff", "agentgate against tools", obj{"old": agentgate, "new": annotationFlip(schemaWidening(base))})
	add("diff", "new is a lock", obj{"old": base, "new": lock})
	add("diff", "schema paths escaped", obj{"old": []any{obj{"name": "a", "inputSchema": obj{"properties": obj{"a/b": obj{"type": "string"}, "c~d": 1}}}},
		"new": []any{obj{"name": "a", "inputSchema": obj{"properties": obj{"a/b": obj{"type": "number"}, "e": []any{1}}}}}})

	add("lock_check", "unchanged", obj{"lock": lock, "tools": base})
	add("lock_check", "changed", obj{"lock": lock, "pages": one(toolAdded(rugPull(base)))})
	add("lock_check", "unreachable", obj{"lock": lock, "failure": "server_unavailable", "failure_detail": "connection refused"})
	add("lock_check", "connect_refused", obj{"lock": lock, "failure": "connect_refused", "failure_at": "handshake"})
	add("lock_check", "timeout at a page", obj{"lock": lock, "failure": "timeout", "failure_at": "tools/list", "failure_page": 2, "timeout_ms": 10000})
	add("lock_check", "a host fault with a text of the host", obj{"lock": lock, "failure": "process_exited", "failure_at": "handshake", "failure_detail": "EOF"})
	add("lock_check", "a host fault without where", obj{"lock": lock, "failure": "session_ended"})
	add("lock_check", "timeout_ms without timeout", obj{"lock": lock, "failure": "session_failed", "failure_at": "handshake", "timeout_ms": 5})
	add("lock_check", "malformed page", obj{"lock": lock, "pages": []string{"<html>"}})
	add("lock_check", "truncated", obj{"lock": lock, "pages": []string{page(t, base[:2], "c2")}})
	add("lock_check", "agentgate", obj{"lock": agentgate, "tools": rugPull(base), "server_name": "issues"})
	add("lock_check", "agentgate unknown server", obj{"lock": agentgate, "tools": base, "server_name": "github"})

	good := continuityRequest(lock, one(base), "enforce")
	add("continuity_check", "missing now", with(good, "now", nil))
	pinIssuer := []any{obj{"kid": "test-issuer-2026", "public_key": "R2+nOTqJ24B+Bub9jH6p+WWS7P39GRzcQVzBDMKGvUQ="}}
	add("continuity_check", "live directory unreadable", with(with(good, "pinned_keys", pinIssuer), "fetched_key_directory", `{"kind":"crawlcheck-key-directory","v":1,"keys":{}}`))
	add("continuity_check", "live directory not JSON", with(with(good, "pinned_keys", pinIssuer), "fetched_key_directory", `<html>`))
	add("continuity_check", "live directory without pins", with(good, "fetched_key_directory", `{"kind":"crawlcheck-key-directory","v":1,"keys":[]}`))
	add("continuity_check", "unknown mode", with(good, "mode", "audit"))
	add("continuity_check", "unknown field", with(good, "operator_key", operator.PublicKey))
	add("continuity_check", "integrity lowered without override", with(good, "policy", operatorPolicy(func(p obj) {
		p["effects"] = obj{"baseline_untrusted": "proceed"}
	})))
	add("continuity_check", "policy unknown observation", with(good, "policy", operatorPolicy(func(p obj) { p["effects"] = obj{"tool_renamed": "deny"} })))
	add("continuity_check", "evidence a host may not report", with(good, "evidence", []any{obj{"observation": "unchanged"}}))
	add("continuity_check", "observed without pages or failure", withObserved(with(good, "observed", obj{"endpoint": fixtureURL}), "endpoint", fixtureURL))
	add("continuity_check", "lock invalid", with(good, "lock", with(lock, "count", 9)))
	// A lockfile made by a client declaring roots, checked by one declaring
	// none: the tool the server offers only to the first is named with why.
	var rootsLock obj
	mustUnmarshal(t, resultField(t, call(t, "make_lock", obj{"tools": base, "approved_at": approvedAt, "server": with(srv, "client_capabilities", rootsClient)}), "lock"), &rootsLock)
	add("continuity_check", "tool removed while the client declares other capabilities",
		withObserved(continuityRequest(rootsLock, one(toolRemoved(base)), "enforce"), "client_capabilities", obj{}))
	add("continuity_check", "tool removed while the client declares the same capabilities",
		withObserved(continuityRequest(rootsLock, one(toolRemoved(base)), "enforce"), "client_capabilities", rootsClient))
	add("continuity_check", "client capabilities not an object refused", withObserved(good, "client_capabilities", []any{}))
	add("continuity_check", "bad prev_record_sha256", with(good, "prev_record_sha256", "abc"))
	add("continuity_check", "recheck coalescing no notification refused", with(good, "recheck", obj{"coalesced": 0, "held_back_ms": 0}))
	add("continuity_check", "recheck held back a negative time refused", with(good, "recheck", obj{"coalesced": 2, "held_back_ms": -1}))
	add("continuity_check", "recheck without held_back_ms refused", with(good, "recheck", obj{"coalesced": 2}))
	add("continuity_check", "recheck with an unknown member refused", with(good, "recheck", obj{"coalesced": 2, "held_back_ms": 5, "storm": true}))
	add("continuity_check", "page neither string nor base64", withObserved(good, "pages", []any{obj{"text": "{}"}}))
	add("continuity_check", "issuer with neither guard nor unavailable", with(good, "issuer", obj{"url": "https://issuer.example"}))
	add("continuity_check", "issuer guard that is not a guard answer", with(good, "issuer", obj{"url": "https://issuer.example", "guard": obj{"ok": true}}))
	add("continuity_check", "server_info beside handshake_result refused", withObserved(richRequest(richLock(t), handshakeApproved, one(richTools()), "enforce"), "server_info", obj{"name": "issues"}))
	add("continuity_check", "handshake_result neither string nor base64", withObserved(good, "handshake_result", obj{"text": "{}"}))
	for _, c := range handoffCases(t) {
		add("continuity_handoff", c.Name, c.Request)
	}
	add("continuity_handoff", "tool_texts not a bool refused", with(good, "tool_texts", "no"))
	add("continuity_check", "tool_texts refused", with(good, "tool_texts", false))

	first := call(t, "continuity_check", good)
	var firstRec obj
	json.Unmarshal(first, &firstRec)
	second := call(t, "continuity_check", with(continuityRequest(lock, one(rugPull(base)), "enforce"), "prev_record_sha256", firstRec["record_sha256"]))
	recordOf := func(r obj) obj {
		var rec obj
		json.Unmarshal(call(t, "continuity_check", r), &rec)
		return rec
	}
	pulled := recordOf(continuityRequest(lock, one(rugPull(base)), "enforce"))
	add("refusal", "tool withheld", obj{"record": pulled, "tool": "get_issue"})
	add("refusal", "tool not in the checked list", obj{"record": pulled, "tool": "delete_repository\u202e"})
	add("refusal", "session paused in review", obj{"record": recordOf(continuityRequest(lock, one(rugPull(base)), "review"))})
	add("refusal", "session denied for another endpoint", obj{"record": recordOf(withObserved(good, "endpoint", "https://mcp.example.net/mcp\u001b[2J"))})
	add("refusal", "observe: enforce would have withheld a tool", obj{"record": recordOf(continuityRequest(lock, one(rugPull(base)), "observe")), "would": true})
	add("refusal", "observe: enforce would have denied the session", obj{"record": recordOf(with(withObserved(good, "endpoint", "https://mcp.example.net/mcp"), "mode", "observe")), "would": true})
	var seven, sevenPulled []obj
	for i := range 7 {
		name := "tool_" + string(rune('a'+i))
		seven = append(seven, obj{"name": name, "description": "Reads " + name + ".", "inputSchema": obj{"type": "object"}})
		sevenPulled = append(sevenPulled, obj{"name": name, "description": "Reads " + name + " and mails it out.", "inputSchema": obj{"type": "object"}})
	}
	add("refusal", "observe: seven tools enforce would withhold, five named", obj{"record": recordOf(continuityRequest(lockDoc(t, seven, approvedAt), one(sevenPulled), "observe")), "would": true})
	add("refusal", "observe: nothing enforce would refuse", obj{"record": recordOf(with(good, "mode", "observe")), "would": true})
	add("refusal", "would of an enforce record", obj{"record": pulled, "would": true})
	add("refusal", "would with a tool refused", obj{"record": pulled, "would": true, "tool": "get_issue"})
	add("refusal", "record not an object", obj{"record": "[1]"})
	add("refusal", "missing record", obj{})
	editedRec := deepCopy(firstRec)
	editedRec["effect"] = "proceed_recorded"
	add("verify_record", "valid", obj{"record": firstRec})
	add("verify_record", "edited", obj{"record": editedRec})
	add("verify_record", "as a string", obj{"record": string(first)})
	add("verify_record", "not a record", obj{"record": obj{"kind": "crawlcheck-mcp-lock"}})
	chain := string(first) + "\n" + string(second) + "\n"
	add("verify_chain", "valid", obj{"records": chain})
	add("verify_chain", "torn tail", obj{"records": chain + string(first)[:40]})
	// What a log appended to keeps and adds (keep_bytes, add_newline): a
	// whole last record without its newline gets one; a torn line alone is
	// cut to nothing.
	add("verify_chain", "last record without its newline", obj{"records": string(first) + "\n" + string(second)})
	add("verify_chain", "a torn line alone", obj{"records": string(first)[:40]})
	// A crash can cut the last line inside a multi-byte character (records
	// hold servers' texts as UTF-8): still a torn tail, cut at the newline.
	add("verify_chain", "torn tail cut inside a character", obj{"records": obj{"base64": base64.StdEncoding.EncodeToString([]byte(chain + "{\"a\":\"\u00e9\u00e9"[:9]))}})
	add("verify_chain", "broken link", obj{"records": string(second) + "\n" + string(first) + "\n"})
	add("verify_chain", "edited record", obj{"records": string(mustJSON(t, editedRec)) + "\n"})
	add("verify_chain", "empty", obj{"records": ""})
	vs = append(vs, approveVectors(t, lock, agentgate)...)
	nonces := []obj{{"nonce": "n-1", "expires_at": "2026-12-01T10:05:00Z"}, {"nonce": "n-2", "expires_at": "2026-12-01T10:06:00.5Z"}}
	add("replay_state", "write the nonces guard answered", obj{"seen_nonces": nonces})
	add("replay_state", "write none", obj{"seen_nonces": []obj{}})
	add("replay_state", "read a file", obj{"file": `{"kind":"crawlcheck-issuer-nonces","v":1,"seen_nonces":[{"nonce":"n-1","expires_at":"2026-12-01T10:05:00Z"}]}` + "\n"})
	add("replay_state", "read a file as a JSON value", obj{"file": obj{"kind": "crawlcheck-issuer-nonces", "v": 1, "seen_nonces": nonces}})
	add("replay_state", "file of another kind", obj{"file": `{"kind":"crawlcheck-issuer-state","v":1,"seen_nonces":[]}`})
	add("replay_state", "file of another version", obj{"file": `{"kind":"crawlcheck-issuer-nonces","v":2,"seen_nonces":[]}`})
	add("replay_state", "file with an unknown member", obj{"file": `{"kind":"crawlcheck-issuer-nonces","v":1,"seen_nonces":[],"extra":1}`})
	add("replay_state", "file without seen_nonces", obj{"file": `{"kind":"crawlcheck-issuer-nonces","v":1}`})
	add("replay_state", "file with a bad nonce", obj{"file": `{"kind":"crawlcheck-issuer-nonces","v":1,"seen_nonces":[{"nonce":"n-1"}]}`})
	add("replay_state", "file not json", obj{"file": `{"kind":`})
	add("replay_state", "file an array", obj{"file": `[]`})
	add("replay_state", "file with a duplicate key", obj{"file": `{"kind":"crawlcheck-issuer-nonces","v":1,"seen_nonces":[],"seen_nonces":[]}`})
	add("replay_state", "both", obj{"file": `{}`, "seen_nonces": []obj{}})
	add("replay_state", "neither", obj{})
	add("next_page", "first page, list goes on", obj{"page": page(t, base, "c1")})
	add("next_page", "last page", obj{"page": page(t, base, ""), "followed": []string{"c1"}})
	add("next_page", "null cursor ends the list", obj{"page": `{"tools":[],"nextCursor":null}`})
	add("next_page", "cursor repeated", obj{"page": page(t, base, "c1"), "followed": []string{"c1", "c2"}})
	add("next_page", "page cap reached", obj{"page": page(t, base, "c3"), "followed": []string{"c1", "c2"}, "page_cap": 3})
	add("next_page", "page cap not yet reached", obj{"page": page(t, base, "c3"), "followed": []string{"c1"}, "page_cap": 3})
	add("next_page", "page cap of one", obj{"page": page(t, base, "c1"), "page_cap": 1})
	add("next_page", "default page cap", obj{"page": page(t, base, "c100"), "followed": seq("c", 99)})
	add("next_page", "page cap above the most pages", obj{"page": page(t, base, "c1000"), "followed": seq("c", 999), "page_cap": 5000})
	add("next_page", "empty cursor", obj{"page": `{"tools":[],"nextCursor":""}`})
	add("next_page", "cursor not a string", obj{"page": `{"tools":[],"nextCursor":7}`})
	add("next_page", "page not json", obj{"page": `{"tools":[`})
	add("next_page", "page with a duplicate key", obj{"page": `{"tools":[],"nextCursor":"a","nextCursor":"b"}`})
	add("next_page", "json-rpc error", obj{"page": `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"down"}}`})
	add("next_page", "json-rpc response", obj{"page": `{"jsonrpc":"2.0","id":2,"result":{"tools":[],"nextCursor":"c1"}}`})
	add("next_page", "page as base64", obj{"page": obj{"base64": base64.StdEncoding.EncodeToString([]byte(page(t, base, "c1")))}})
	add("next_page", "page invalid base64", obj{"page": obj{"base64": "!"}})
	add("next_page", "page not utf-8", obj{"page": obj{"base64": base64.StdEncoding.EncodeToString([]byte("{\"tools\":[],\"nextCursor\":\"\xff\"}"))}})
	add("next_page", "page missing", obj{"followed": []string{}})
	add("next_page", "page cap zero", obj{"page": page(t, base, "c1"), "page_cap": 0})
	add("next_page", "page cap not whole", obj{"page": page(t, base, "c1"), "page_cap": 2.5})
	add("next_page", "followed not strings", obj{"page": page(t, base, "c1"), "followed": []any{1}})
	add("next_page", "followed too long", obj{"page": page(t, base, "c1"), "followed": seq("c", 1000)})
	add("ci_plan", "agentgate servers from mcpServers", obj{"lock": agentgate, "config": obj{"mcpServers": obj{
		"issues": obj{"command": "npx", "args": []any{"-y", "@acme/issues-mcp@1.4.0"}, "env": obj{"TOKEN": "x", "REGION": "eu"}},
		"extra":  obj{"url": "https://mcp.example.net/mcp"},
	}}})
	add("ci_plan", "agentgate servers from the servers of VS Code", obj{"lock": agentgate, "config": obj{"servers": obj{"issues": obj{"type": "http", "url": fixtureURL}}}})
	add("ci_plan", "crawlcheck lockfile", obj{"lock": lock})
	add("ci_plan", "agentgate without a config", obj{"lock": agentgate})
	add("ci_plan", "a pinned server not in the config", obj{"lock": agentgate, "config": obj{"mcpServers": obj{"other": obj{"url": fixtureURL}}}})
	add("ci_plan", "a member name in another case", obj{"lock": agentgate, "config": obj{"MCPServers": obj{"issues": obj{"url": fixtureURL}}}})
	add("ci_plan", "legacy sse", obj{"lock": agentgate, "config": obj{"mcpServers": obj{"issues": obj{"type": "sse", "url": fixtureURL}}}})
	add("ci_plan", "legacy sse without a url", obj{"lock": agentgate, "config": obj{"mcpServers": obj{"issues": obj{"type": "sse", "command": "issues-server"}}}})
	add("ci_plan", "neither command nor url", obj{"lock": agentgate, "config": obj{"mcpServers": obj{"issues": obj{"Command": "npx"}}}})
	stdioLock := lockDocAt(t, base, `stdio:npx -y '@acme/issues mcp' "it's"`)
	add("ci_plan", "crawlcheck lockfile of a stdio server", obj{"lock": stdioLock})
	add("ci_plan", "crawlcheck lockfile with an endpoint that is not a command line", obj{"lock": lockDocAt(t, base, `stdio:npx 'open`)})
	add("ci_verdict", "crawlcheck lockfile unchanged", obj{"lock": lock, "checks": []obj{{"tools": base}}})
	add("ci_verdict", "crawlcheck lockfile changed", obj{"lock": lock, "checks": []obj{{"pages": one(toolAdded(rugPull(base)))}}})
	add("ci_verdict", "a server down", obj{"lock": stdioLock, "checks": []obj{{"failure": "process_exited", "failure_at": "handshake"}}})
	add("ci_verdict", "a list not read whole", obj{"lock": lock, "checks": []obj{{"pages": []string{page(t, base[:2], "c2")}}}})
	add("ci_verdict", "agentgate with a server the lockfile does not pin", obj{"lock": agentgate, "config": obj{"mcpServers": obj{
		"issues": obj{"command": "npx", "args": []any{"-y", "@acme/issues-mcp@1.4.0"}},
		"extra":  obj{"url": "https://mcp.example.net/mcp"},
	}}, "checks": []obj{{"tools": base}}})
	add("ci_verdict", "agentgate rug pull", obj{"lock": agentgate, "config": obj{"servers": obj{"issues": obj{"type": "http", "url": fixtureURL}}}, "checks": []obj{{"tools": rugPull(base)}}})
	add("ci_verdict", "a check too many", obj{"lock": lock, "checks": []obj{{"tools": base}, {"tools": base}}})
	add("ci_verdict", "no checks", obj{"lock": lock, "checks": []obj{}})
	add("ci_verdict", "checks missing", obj{"lock": lock})
	add("ci_verdict", "a check with a member of its own", obj{"lock": lock, "checks": []obj{{"tools": base, "verdict": "unchanged"}}})
	add("ci_verdict", "an edited lockfile", obj{"lock": edited, "checks": []obj{{"tools": base}}})
	// Issue 31: every configured server is checked, skipped (disabled) or
	// refused by name, never left out; an unreachable server is not drift.
	fourServers := obj{"mcpServers": obj{
		"issues":  obj{"command": "npx", "args": []any{"-y", "@acme/issues mcp", "it's"}, "env": obj{"TOKEN": "x"}, "cwd": "/srv"},
		"other":   obj{"command": "other-mcp"},
		"keyed":   obj{"url": fixtureURL, "headers": obj{"Authorization": "Bearer ${input:key}"}, "refused": []any{"${input:key} (VS Code prompts for it)"}},
		"retired": obj{"command": "retired-mcp", "disabled": true},
	}}
	add("ci_plan", "crawlcheck lockfile with a config of four servers", obj{"lock": stdioLock, "config": fourServers})
	add("ci_plan", "crawlcheck lockfile whose server is not in the config", obj{"lock": stdioLock, "config": obj{"mcpServers": obj{"other": obj{"command": "other-mcp"}}}})
	add("ci_plan", "crawlcheck lockfile whose server is disabled", obj{"lock": stdioLock, "config": obj{"mcpServers": obj{"issues": obj{"command": "npx", "args": []any{"-y", "@acme/issues mcp", "it's"}, "disabled": true}}}})
	add("ci_plan", "agentgate with headers, a disabled and a refused server", obj{"lock": agentgate, "config": obj{"mcpServers": obj{
		"issues": obj{"type": "http", "url": fixtureURL, "headers": obj{"X-Key": "k", "Authorization": "Bearer t"}},
		"old":    obj{"command": "old-mcp", "disabled": true},
		"keyed":  obj{"command": "keyed-mcp", "refused": []any{"${env:KEY} (the variable is not set)"}},
	}}})
	add("ci_plan", "a refused entry that names no command", obj{"lock": stdioLock, "config": obj{"mcpServers": obj{
		"issues": obj{"command": "npx", "args": []any{"-y", "@acme/issues mcp", "it's"}},
		"ext":    obj{"refused": []any{`source: "extension" (a Zed extension starts it)`}},
	}}})
	add("ci_plan", "a pinned server refused", obj{"lock": agentgate, "config": obj{"mcpServers": obj{"issues": obj{"command": "npx", "refused": []any{"${{ secrets.T }} (Continue fills it from its secrets)"}}}}})
	add("ci_plan", "disabled not a boolean", obj{"lock": agentgate, "config": obj{"mcpServers": obj{"issues": obj{"command": "npx", "disabled": "yes"}}}})
	add("ci_plan", "refused not strings", obj{"lock": agentgate, "config": obj{"mcpServers": obj{"issues": obj{"command": "npx", "refused": []any{1}}}}})
	add("ci_plan", "headers not strings", obj{"lock": agentgate, "config": obj{"mcpServers": obj{"issues": obj{"url": fixtureURL, "headers": obj{"X": 1}}}}})
	perServer := obj{"mcpServers": obj{
		"issues":  obj{"command": "npx", "args": []any{"-y", "@acme/issues mcp", "it's"}},
		"edited":  obj{"command": "npx", "args": []any{"-y", "@acme/issues mcp@2"}},
		"new":     obj{"command": "new-mcp"},
		"retired": obj{"command": "retired-mcp", "disabled": true},
	}}
	perLocks := []obj{{"server": "issues", "lock": stdioLock}, {"server": "edited", "lock": stdioLock}}
	add("ci_plan", "a lockfile per server", obj{"config": perServer, "locks": perLocks})
	add("ci_plan", "a lockfile per server naming a server not in the config", obj{"config": perServer, "locks": []obj{{"server": "gone", "lock": stdioLock}}})
	add("ci_plan", "a lockfile per server and a lockfile for all", obj{"lock": stdioLock, "config": perServer, "locks": perLocks})
	add("ci_plan", "a lockfile per server that is an agentgate.lock", obj{"config": perServer, "locks": []obj{{"server": "issues", "lock": agentgate}}})
	add("ci_plan", "a lockfile per server without a config", obj{"locks": perLocks})
	add("ci_verdict", "a lockfile per server", obj{"config": perServer, "locks": perLocks, "checks": []obj{{"tools": rugPull(base)}}})
	add("ci_verdict", "crawlcheck lockfile with a config of four servers", obj{"lock": stdioLock, "config": fourServers, "checks": []obj{{"tools": base}}})
	add("ci_verdict", "a configured server unreachable", obj{"lock": stdioLock, "config": obj{"mcpServers": obj{"issues": obj{"command": "npx", "args": []any{"-y", "@acme/issues mcp", "it's"}}}}, "checks": []obj{{"failure": "connect_refused", "failure_at": "handshake"}}})
	add("ci_verdict", "agentgate with a disabled server passes", obj{"lock": agentgate, "config": obj{"mcpServers": obj{
		"issues": obj{"url": fixtureURL},
		"old":    obj{"command": "old-mcp", "disabled": true},
	}}, "checks": []obj{{"tools": base}}})
	add("endpoint", "a stdio endpoint read back", obj{"endpoint": `stdio:npx -y "@scope/server@1.2" 'a b' '' 'it'"'"'s'`})
	add("endpoint", "a url read back", obj{"endpoint": fixtureURL})
	add("endpoint", "an endpoint with an unterminated quote", obj{"endpoint": `stdio:npx 'open`})
	add("endpoint", "an endpoint naming no command", obj{"endpoint": "stdio:  "})
	add("endpoint", "an endpoint neither stdio nor http", obj{"endpoint": "npx server"})
	add("endpoint", "endpoint and url", obj{"endpoint": fixtureURL, "url": fixtureURL})
	add("endpoint", "url", obj{"url": fixtureURL})
	add("endpoint", "stdio command quoted", obj{"command": []any{"npx", "-y", "@scope/server@1.2", "--port=8080", "a b", "", "it's", "$HOME", "é"}})
	add("endpoint", "url not http", obj{"url": "ftp://mcp.example.com/"})
	add("endpoint", "url without a host", obj{"url": "https:///mcp"})
	add("endpoint", "empty command", obj{"command": []any{}})
	add("endpoint", "url and command", obj{"url": fixtureURL, "command": []any{"srv"}})
	add("endpoint", "neither", obj{})
	twoServers := resultField(t, call(t, "make_lock", obj{"tools": toolAdded(base)[4:], "format": "agentgate", "name": "admin", "approved_at": checkNow, "into": agentgate}), "lock")
	verify("agentgate with two servers", twoServers, nil)
	verify("agentgate server chosen", twoServers, obj{"server_name": "admin"})
	verify("agentgate unknown server", twoServers, obj{"server_name": "github"})
	verify("agentgate only server", agentgate, obj{"server_name": "issues"})
	vs = append(vs, receiptVectors(t)...)
	vs = append(vs, scanVectors(t)...)
	vs = append(vs, escapeVectors()...)
	vs = append(vs, resourceMetadataVectors(t)...)
	vs = append(vs, signatureVectors(t)...)
	vs = append(vs, chainVectors(t)...)
	vs = append(vs, launchedOpVectors(t)...)
	vs = append(vs, nullDescriptionVectors()...)
	vs = append(vs, tooManyPagesVectors(t)...)
	vs = append(vs, hostFactVectors(t)...)
	vs = append(vs, approveCoverageVectors(t)...)
	vs = append(vs, logVectors(t)...)
	vs = append(vs, pilotVectors(t)...)
	vs = append(vs, correctionVectors(t)...)
	vs = append(vs, instructionsVectors(t)...)
	vs = append(vs, newUserVectors(t)...)
	vs = append(vs, endpointVectors(t)...)
	vs = append(vs, sessionVectors(t)...)
	vs = append(vs, documentKindVectors(t)...)
	return append(vs, exampleVectors(t)...)
}

type opFile struct {
	Op         string          `json:"op"`
	Request    json.RawMessage `json:"request"`
	RequestRaw *string         `json:"request_raw"`
	RequestB64 *string         `json:"request_b64"`
	Response   json.RawMessage `json:"response"`
}

// opCall is one vector of testdata/ops as a call: its name (op/file), op,
// request bytes and the compacted envelope it must answer.
type opCall struct {
	name, op  string
	req, want []byte
}

// opCalls are every vector of testdata/ops (at least 100 of them, or t
// fails: a glob that found too few would make a test of them prove little).
func opCalls(t testing.TB) []opCall {
	files, _ := filepath.Glob(filepath.Join(testdataDir, "ops", "*", "*.json"))
	if len(files) < 100 {
		t.Fatalf("only %d op vectors found", len(files))
	}
	var vs []opCall
	for _, f := range files {
		vf := readOpFile(t, f)
		vs = append(vs, opCall{name: filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f), op: vf.Op, req: vf.requestBytes(t), want: compact(t, vf.Response)})
	}
	return vs
}

// readOpFile reads one vector file of testdata/ops.
func readOpFile(t testing.TB, path string) opFile {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var vf opFile
	if err := json.Unmarshal(raw, &vf); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return vf
}

// requestBytes is the request the file sends, as the core is handed it:
// base64's bytes, the raw text, or the JSON request compacted.
func (vf opFile) requestBytes(t testing.TB) []byte {
	t.Helper()
	switch {
	case vf.RequestB64 != nil:
		req, _ := base64.StdEncoding.DecodeString(*vf.RequestB64)
		return req
	case vf.RequestRaw != nil:
		return []byte(*vf.RequestRaw)
	}
	return compact(t, vf.Request)
}

// portableName is what fileSafe leaves of a case name.
var portableName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// TestOpsGolden holds testdata/ops: every vector's request gives exactly its
// envelope, every op has vectors, and the directory holds exactly the
// vectors above.
func TestOpsGolden(t *testing.T) {
	dir := filepath.Join(testdataDir, "ops")
	vs := opVectors(t)
	want := map[string]opVector{}
	for _, v := range vs {
		want[filepath.Join(v.Op, fileSafe(v.Name)+".json")] = v
	}
	if *update {
		os.RemoveAll(dir)
		for rel, v := range want {
			req := v.bytes(t)
			resp, err := canon.Parse(core.Call(v.Op, req))
			if err != nil {
				t.Fatal(err)
			}
			ms := []canon.Member{canon.M("op", canon.Str(v.Op))}
			switch {
			case v.B64 != nil:
				ms = append(ms, canon.M("request_b64", canon.Str(base64.StdEncoding.EncodeToString(req))))
			case v.Raw != "":
				ms = append(ms, canon.M("request_raw", canon.Str(v.Raw)))
			default:
				rv, err := canon.Parse(req)
				if err != nil {
					t.Fatal(err)
				}
				ms = append(ms, canon.M("request", rv))
			}
			ms = append(ms, canon.M("response", resp))
			os.MkdirAll(filepath.Join(dir, v.Op), 0o755)
			if err := os.WriteFile(filepath.Join(dir, rel), canon.Indent(canon.Obj(ms...)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	seenOps := map[string]bool{}
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		if !portableName.MatchString(filepath.Base(rel)) {
			t.Errorf("%s: a vector's file name is letters, digits, '.', '_' and '-' only (fileSafe), so every checkout and host can open it", rel)
		}
		v, ok := want[rel]
		if !ok {
			t.Errorf("%s is in testdata but not in the code (run go test ./core -update)", rel)
			continue
		}
		delete(want, rel)
		vf := readOpFile(t, f)
		req := vf.requestBytes(t)
		if vf.RequestB64 == nil && vf.RequestRaw == nil {
			c, _ := canon.Parse(v.bytes(t))
			if !bytes.Equal(req, canon.Canonical(c)) {
				t.Errorf("%s: the file's request differs from the code's (run -update and read the diff)", rel)
			}
		}
		seenOps[vf.Op] = true
		if got, exp := core.Call(vf.Op, req), compact(t, vf.Response); !bytes.Equal(got, exp) {
			t.Errorf("%s:\n got  %s\n want %s", rel, got, exp)
		}
	}
	for rel := range want {
		t.Errorf("%s is missing from testdata (run go test ./core -update)", rel)
	}
	for _, op := range core.Ops() {
		if !seenOps[op] {
			t.Errorf("op %s has no vector in testdata/ops", op)
		}
	}
	if !slices.Contains(core.Ops(), "continuity_check") {
		t.Error("the op table lost continuity_check")
	}
}

// approveVectors exercise approve: records of both kinds, approvals,
// refusals, and records that were not made from the request's lock and tools.
func approveVectors(t testing.TB, lock, agentgate obj) []opVector {
	base := baseTools()
	one := func(ts []obj) []string { return []string{page(t, ts, "")} }
	record := func(l obj, pages []string, edit func(obj)) obj {
		r := continuityRequest(l, pages, "enforce")
		if edit != nil {
			edit(r)
		}
		var rec obj
		json.Unmarshal(call(t, "continuity_check", r), &rec)
		return rec
	}
	var vs []opVector
	add := func(name string, request obj) {
		request["approved_at"] = checkNow
		vs = append(vs, opVector{Op: "approve", Name: name, Request: request})
	}
	rugged := one(rugPull(base))
	rugRec := record(lock, rugged, nil)
	add("named change approved", obj{"record": rugRec, "lock": lock, "pages": rugged, "names": []any{"get_issue"}})
	add("record as a string", obj{"record": string(mustJSON(t, rugRec)), "lock": lock, "pages": rugged, "names": []any{"get_issue"}})
	added := one(toolAdded(rugPull(base)))
	add("side approval refused", obj{"record": record(lock, added, nil), "lock": lock, "pages": added, "names": []any{"get_issue"}})
	add("name without a change refused", obj{"record": rugRec, "lock": lock, "pages": rugged, "names": []any{"get_issue", "list_issues"}})
	moved := record(lock, rugged, func(r obj) { r["observed"].(obj)["endpoint"] = "https://elsewhere.example/mcp" })
	add("session observation refused", obj{"record": moved, "lock": lock, "pages": rugged, "names": []any{"get_issue"}})
	removed := one(toolRemoved(base))
	add("removal needs no name", obj{"record": record(lock, removed, nil), "lock": lock, "pages": removed})
	add("record of other tools", obj{"record": rugRec, "lock": lock, "pages": one(descriptionUpdate(rugPull(base))), "names": []any{"get_issue"}})
	add("record against another lock", obj{"record": rugRec, "lock": lockDoc(t, base, oldApproval), "pages": rugged, "names": []any{"get_issue"}})
	edited := deepCopy(rugRec)
	edited["effect"] = "proceed"
	add("edited record", obj{"record": edited, "lock": lock, "pages": rugged, "names": []any{"get_issue"}})
	add("not a record", obj{"record": lock, "lock": lock, "pages": rugged})
	check := call(t, "lock_check", obj{"lock": lock, "pages": added})
	add("lock_check answer", obj{"record": string(check), "lock": lock, "pages": added, "names": []any{"delete_repository", "get_issue"},
		"server": obj{"url": "https://mcp.example.com/v2/mcp"}})
	add("lock_check answer of other tools", obj{"record": string(check), "lock": lock, "pages": rugged, "names": []any{"delete_repository", "get_issue"}})
	down := call(t, "lock_check", obj{"lock": lock, "failure": "server_unavailable", "failure_detail": "connection refused"})
	add("unreachable refused", obj{"record": string(down), "lock": lock, "pages": []string{}})
	agRec := record(agentgate, rugged, nil)
	add("agentgate", obj{"record": agRec, "lock": agentgate, "pages": rugged, "names": []any{"get_issue"}})
	add("agentgate other server", obj{"record": agRec, "lock": agentgate, "pages": rugged, "names": []any{"get_issue"}, "server_name": "admin"})
	add("missing approved_at", obj{"record": rugRec, "lock": lock, "pages": rugged})
	delete(vs[len(vs)-1].Request.(obj), "approved_at")
	vs = append(vs, itemRefusalVectors(t)...)
	vs = append(vs, itemScanVectors(t)...)
	return append(vs, featuresOpVectors(t)...)
}

// seq is n strings prefix1 … prefixN.
func seq(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i+1)
	}
	return out
}
