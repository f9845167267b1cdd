package core_test

import (
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core/internal/guard"
)

// receiptVectors are the op vectors of guard, replay_decision and
// sign_receipt (testdata/ops), malformed requests included; the
// acceptance suite of guard is testdata/guard.json.
func receiptVectors(t testing.TB) []opVector {
	g := newGuardFixture(t)
	var vs []opVector
	add := func(op, name string, request any) { vs = append(vs, opVector{Op: op, Name: name, Request: request}) }

	clean := g.receipt(receiptSpec{})
	good := g.request(clean)
	add("guard", "example", good)
	add("guard", "missing receipt", with(good, "receipt", nil))
	add("guard", "missing now", with(good, "now", nil))
	add("guard", "missing expected_subject", with(good, "expected_subject", nil))
	add("guard", "expected_operation defaults to mcp.lock.check", with(good, "expected_operation", nil))
	add("guard", "missing lock", with(good, "lock", nil))
	add("guard", "no keys", with(good, "key_directory", nil))
	add("guard", "unknown field", with(good, "operator_keys", []any{g.active.PublicKey}))
	add("guard", "lock invalid", with(good, "lock", with(g.lock, "count", 9)))
	add("guard", "policy invalid", with(good, "policy", obj{"kind": "crawlcheck-policy", "v": 1}))
	add("guard", "key directory invalid", with(good, "key_directory", obj{"kind": "crawlcheck-key-directory", "v": 2, "keys": []any{}}))
	add("guard", "pinned key not an object", with(good, "pinned_keys", []any{g.active.PublicKey}))
	add("guard", "pinned key undecodable", with(good, "pinned_keys", []any{obj{"kid": g.active.KID, "public_key": "AAAA"}}))
	add("guard", "seen_nonces not an array", with(good, "seen_nonces", "nonce-7c1f2a9e"))
	add("guard", "seen nonce without expires_at", with(good, "seen_nonces", []any{obj{"nonce": guardNonce}}))
	add("guard", "observed_tools_sha256 not a hash", with(good, "observed_tools_sha256", "abc"))
	add("guard", "receipt with a duplicate key is not a receipt", with(good, "receipt", `{"kind":"crawlcheck-mcp-lock-check","kind":"x"}`))
	// An issuer's answer that is not a UTF-8 JSON object is no answer to
	// judge: the host's issuer member names the step and fault guard says.
	add("guard", "receipt not json is an issuer fault", with(good, "receipt", `<html>busy</html>`))
	add("guard", "receipt not an object is an issuer fault", with(good, "receipt", `["kind"]`))
	// Decided once where the hosts' readers differed (docs/decisions.md):
	// Python took NaN, JS dropped a byte order mark.
	add("guard", "receipt with NaN is an issuer fault", with(good, "receipt", `{"kind":NaN}`))
	add("guard", "receipt led by a byte order mark is an issuer fault", with(good, "receipt", "\ufeff"+string(mustJSON(t, good["receipt"]))))
	add("guard", "receipt of padded json is judged", with(good, "receipt", " \n"+string(mustJSON(t, good["receipt"]))+"\n"))

	decision := g.receipt(receiptSpec{kind: guard.KindDecision})
	liar := g.receipt(receiptSpec{inputs: obj{"lock": g.lock, "pages": g.pages(rugPull(g.tools))}, resealWith: &g.active,
		edit: func(r obj) {
			r["verdict"], r["decision"], r["modified"], r["modified_detail"] = "unchanged", "connect", []any{}, []any{}
		}})
	broken := g.receipt(receiptSpec{resealWith: &g.active, edit: func(r obj) { r["inputs"].(obj)["tools"] = g.tools }})
	add("replay_decision", "example", obj{"receipt": clean, "lock": g.lock})
	add("replay_decision", "decision receipt", obj{"receipt": decision, "lock": g.lock})
	add("replay_decision", "lockfile carried in the inputs", obj{"receipt": g.receipt(receiptSpec{carryLock: true})})
	add("replay_decision", "lying issuer", obj{"receipt": liar, "lock": g.lock})
	add("replay_decision", "inputs that do not run", obj{"receipt": broken, "lock": g.lock})
	add("replay_decision", "other rules", obj{"receipt": g.receipt(receiptSpec{resealWith: &g.active,
		edit: func(r obj) { r["engine"].(obj)["rules_sha256"] = strings.Repeat("0", 64) }}), "lock": g.lock})
	add("replay_decision", "lock required", obj{"receipt": clean})
	add("replay_decision", "lock of another digest", obj{"receipt": clean, "lock": lockDoc(t, g.tools, oldApproval)})
	add("replay_decision", "not a receipt", obj{"receipt": g.lock, "lock": g.lock})
	add("replay_decision", "receipt not JSON", obj{"receipt": "<html>", "lock": g.lock})
	add("replay_decision", "unknown field", obj{"receipt": clean, "lock": g.lock, "now": checkNow})

	sign := obj{"private_key": g.active.Seed, "key_id": g.active.KID, "issuer": guardIssuer, "issued_at": "2026-11-30T11:59:00Z",
		"expires_at": "2026-11-30T12:04:00Z", "nonce": guardNonce, "subject": fixtureURL,
		"inputs": obj{"lock": g.lock, "pages": g.pages(rugPull(g.tools))}}
	add("sign_receipt", "example", sign)
	add("sign_receipt", "decision receipt", with(with(sign, "kind", guard.KindDecision), "inputs",
		obj{"now": "2026-11-30T11:59:00Z", "mode": "observe", "lock": g.lock, "observed": obj{"endpoint": fixtureURL, "pages": g.pages(rugPull(g.tools))}}))
	add("sign_receipt", "carry the lockfile", with(sign, "carry_lock", true))
	add("sign_receipt", "with its log entry", with(sign, "log_entry", true))
	add("sign_receipt", "operator key id by default", with(sign, "key_id", nil))
	add("sign_receipt", "unknown kind", with(sign, "kind", "crawlcheck-mcp-lock"))
	add("sign_receipt", "missing inputs", with(sign, "inputs", nil))
	add("sign_receipt", "inputs without a lockfile", with(sign, "inputs", obj{"pages": g.pages(g.tools)}))
	add("sign_receipt", "inputs the op refuses", with(sign, "inputs", obj{"lock": g.lock, "tools": g.tools, "pages": g.pages(g.tools)}))
	add("sign_receipt", "inputs carry a digest already", with(sign, "inputs", obj{"lock": g.lock, "pages": g.pages(g.tools), "lock_sha256": "x"}))
	add("sign_receipt", "expires before issued", with(sign, "expires_at", "2026-11-30T11:58:00Z"))
	add("sign_receipt", "missing nonce", with(sign, "nonce", ""))
	add("sign_receipt", "bad private key", with(sign, "private_key", "c2hvcnQ="))
	return vs
}
