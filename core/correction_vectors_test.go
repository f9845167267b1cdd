package core_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// correctionVectors: a correction is a signed, versioned document naming a
// record or receipt by digest (issue 20, item 6); corrections_apply names
// the digests a record log can be corrected by and pairs each record with
// the corrections of its digests, each signature judged.
func correctionVectors(t testing.TB) []opVector {
	issuer, retired := loadKey(t, "test-issuer"), loadKey(t, "test-issuer-retired")
	base := baseTools()
	lock := lockDoc(t, base, approvedAt)
	one := func(ts []obj) []string { return []string{page(t, ts, "")} }
	var recs, sums []string
	for i := 0; i < 2; i++ {
		r := continuityRequest(lock, one(base), "enforce")
		if i > 0 {
			r["prev_record_sha256"] = sums[0]
		}
		raw := call(t, "continuity_check", r)
		var rec struct {
			SHA string `json:"record_sha256"`
		}
		json.Unmarshal(raw, &rec)
		recs, sums = append(recs, string(raw)), append(sums, rec.SHA)
	}
	sign := func(k testKey, extra obj) obj {
		r := obj{"private_key": k.Seed, "key_id": k.KID, "issuer": "test-issuer.crawlcheck.invalid", "issued_at": checkNow,
			"target": sums[1], "version": 1, "reason": "The check ran against a mirror of the server, not the server.", "reporter": "ops@example.com"}
		for k, v := range extra {
			r[k] = v
		}
		return r
	}
	correctionOf := func(r obj) obj {
		var out struct{ Correction obj }
		json.Unmarshal(call(t, "sign_correction", r), &out)
		return out.Correction
	}
	first := correctionOf(sign(issuer, nil))
	second := correctionOf(sign(issuer, obj{"version": 2, "supersedes": first["sha256"], "reason": "Rule reference.every_other_item was too broad; its new table applies.",
		"rules_sha256": strings.Repeat("ab", 32), "policy_version": "crawlcheck-default-3"}))
	edited := deepCopy(first)
	edited["reason"] = "Nothing was wrong."

	var vs []opVector
	add := func(op, name string, request obj) { vs = append(vs, opVector{Op: op, Name: name, Request: request}) }
	add("sign_correction", "first", sign(issuer, nil))
	add("sign_correction", "changes a rule and a default", sign(issuer, obj{"version": 2, "supersedes": first["sha256"], "rules_sha256": strings.Repeat("ab", 32), "policy_version": "crawlcheck-default-3"}))
	add("sign_correction", "second without supersedes", sign(issuer, obj{"version": 2}))
	add("sign_correction", "first with supersedes", sign(issuer, obj{"supersedes": first["sha256"]}))
	add("sign_correction", "version zero", sign(issuer, obj{"version": 0}))
	add("sign_correction", "version not whole", sign(issuer, obj{"version": 1.5}))
	add("sign_correction", "target not a digest", sign(issuer, obj{"target": "record-1"}))
	add("sign_correction", "reason too long", sign(issuer, obj{"reason": strings.Repeat("x", 4097)}))
	add("sign_correction", "missing reporter", sign(issuer, obj{"reporter": nil}))
	log := strings.Join(recs, "\n") + "\n"
	dir := keyDirectory(t)
	add("corrections_apply", "targets of a log", obj{"records": log})
	add("corrections_apply", "two versions apply to one record", obj{"records": log, "corrections": []any{first, second}, "key_directory": dir, "now": checkNow})
	add("corrections_apply", "as strings", obj{"records": log, "corrections": []any{string(mustJSON(t, first))}, "key_directory": dir, "now": checkNow})
	add("corrections_apply", "edited after signing", obj{"records": log, "corrections": []any{edited}, "key_directory": dir, "now": checkNow})
	add("corrections_apply", "signed by a retired key", obj{"records": log, "corrections": []any{correctionOf(sign(retired, nil))}, "key_directory": dir, "now": checkNow})
	add("corrections_apply", "of another record", obj{"records": recs[0] + "\n", "corrections": []any{first}, "key_directory": dir, "now": checkNow})
	receiptSum := strings.Repeat("cd", 32)
	relied := `{"issuer":{"receipt":{"kind":"crawlcheck-mcp-lock-check","sha256":"` + receiptSum + `"}},"record_sha256":"` + strings.Repeat("ef", 32) + `"}` + "\n"
	add("corrections_apply", "targets of a record that relied on a receipt", obj{"records": relied})
	add("corrections_apply", "a correction of the receipt a record relied on", obj{"records": relied,
		"corrections": []any{correctionOf(sign(issuer, obj{"target": receiptSum, "reason": "The receipt was signed with a clock an hour fast."}))}, "key_directory": dir, "now": checkNow})
	add("corrections_apply", "a line that is not a record", obj{"records": "{\"kind\":\n" + log})
	add("corrections_apply", "not a correction", obj{"records": log, "corrections": []any{lock}, "key_directory": dir, "now": checkNow})
	add("corrections_apply", "corrections without a key directory", obj{"records": log, "corrections": []any{first}, "now": checkNow})

	// Through a rotation: the issuer's history (every key it signed with,
	// as active) is what a re-signing verifies the old signature against;
	// the directory it serves retires the old key.
	history := keyHistory(t)
	resign := func(k testKey, c obj, d obj) obj {
		return obj{"private_key": k.Seed, "key_id": k.KID, "resigned_at": checkNow, "correction": c, "key_directory": d}
	}
	resigned := func(r obj) obj {
		var out struct{ Correction obj }
		json.Unmarshal(call(t, "resign_correction", r), &out)
		return out.Correction
	}
	old := correctionOf(sign(retired, nil))
	again := resigned(resign(issuer, old, history))
	add("resign_correction", "a correction signed by a key since retired", resign(issuer, old, history))
	add("resign_correction", "a re-signing re-signed names the first signing", resign(issuer, again, history))
	add("resign_correction", "under the served directory the retired key verifies nothing", resign(issuer, old, dir))
	oldEdited := deepCopy(old)
	oldEdited["reason"] = "Nothing was wrong."
	add("resign_correction", "edited after signing", resign(issuer, oldEdited, history))
	add("resign_correction", "not a correction", resign(issuer, lock, history))
	add("corrections_apply", "the first signing retired, its re-signing applies", obj{"records": log, "corrections": []any{old, again}, "key_directory": dir, "now": checkNow})
	add("corrections_apply", "the first signing retired, not yet re-signed", obj{"records": log, "corrections": []any{old}, "key_directory": dir, "now": checkNow})
	both := resigned(resign(issuer, first, history))
	add("corrections_apply", "both signings verify, the re-signing is answered", obj{"records": log, "corrections": []any{first, both}, "key_directory": dir, "now": checkNow})
	liar := deepCopy(again)
	liar["reason"] = "Nothing was wrong."
	liar = reseal(t, liar, issuer)
	add("corrections_apply", "a re-signing that is not its first signing", obj{"records": log, "corrections": []any{old, liar}, "key_directory": dir, "now": checkNow})
	next := correctionOf(sign(issuer, obj{"version": 2, "supersedes": old["sha256"], "reason": "The mirror was the server after all."}))
	add("corrections_apply", "a later version supersedes the first signing", obj{"records": log, "corrections": []any{old, again, next}, "key_directory": dir, "now": checkNow})
	return vs
}

// keyHistory is the test directory as the issuer's history lists it (State.
// History): every key it signed with, active and unbounded.
func keyHistory(t testing.TB) obj {
	history := keyDirectory(t)
	for _, k := range history["keys"].([]any) {
		k := k.(map[string]any)
		k["status"] = "active"
		delete(k, "not_before")
		delete(k, "not_after")
	}
	return history
}
