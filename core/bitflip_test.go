package core_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"testing"

	"github.com/crawlcheck/verifier/core"
)

// attackLong runs the attacker's tools at length (make attack); make test
// runs them briefly.
var attackLong = flag.Bool("attack.long", false, "run the bit-flip and ABI attacks at length (make attack)")

// TestLockfileBitFlips flips every bit of signed lockfiles, one at a time,
// and asks verify_lock. A flipped file may be refused, or untrusted, or
// trusted only if it is still the same document (canonical JSON equal: a
// flip of the case of a \u escape's hex digit changes no value). A trusted
// file that is another document is a forgery, or a second spelling of a
// signature; issue 10 found 3 of 12,440 flips trusted: the signature's
// unused base64 bits.
func TestLockfileBitFlips(t *testing.T) {
	directory := keyDirectory(t)
	issuer, operator := loadKey(t, "test-issuer"), loadKey(t, "test-operator")
	base := lockDoc(t, baseTools(), approvedAt)
	type target struct {
		name string
		doc  obj
		keys obj
	}
	targets := []target{
		{"issuer-signed", signDoc(t, base, issuer, true), obj{"key_directory": directory}},
		{"operator-signed", signDoc(t, base, operator, false), obj{"operator_keys": []any{operator.PublicKey}}},
	}
	if *attackLong {
		edited := withTool(baseTools(), "get_issue", func(o obj) { o["description"] = "Get one issue \u00e9\u202e by number." })
		targets = append(targets, target{"issuer-signed unicode", signDoc(t, lockDoc(t, edited, approvedAt), issuer, true), obj{"key_directory": directory}})
	}
	for _, tg := range targets {
		file := mustJSON(t, tg.doc)
		want := verifyAnswer(t, file, tg.keys)
		if want.Trust != "verified" && want.Trust != "operator_signed" {
			t.Fatalf("%s: the unflipped file is %s (%s)", tg.name, want.Trust, want.Reason)
		}
		// Briefly: every bit of the signature and of every fourth byte.
		sigAt := bytes.Index(file, []byte(`"signature"`))
		var flips, refused, untrusted, same int
		for i := range file {
			if !*attackLong && i%4 != 0 && (i < sigAt || i > sigAt+120) {
				continue
			}
			for bit := 0; bit < 8; bit++ {
				flipped := append([]byte(nil), file...)
				flipped[i] ^= 1 << bit
				flips++
				got := verifyAnswer(t, flipped, tg.keys)
				switch {
				case got.err:
					refused++
				case got.Trust != want.Trust:
					untrusted++
				case canonicalOf(t, flipped) == canonicalOf(t, file):
					same++
				default:
					t.Errorf("%s: flipping bit %d of byte %d (%q) still verifies with other content", tg.name, bit, i, file[i])
				}
			}
		}
		t.Logf("%s: %d flips: %d refused, %d untrusted, %d trusted as the same document, 0 other documents trusted", tg.name, flips, refused, untrusted, same)
	}
}

func canonicalOf(t *testing.T, file []byte) string {
	return resultField(t, call(t, "canonicalize", obj{"json": string(file)}), "canonical")
}

type verifyResult struct {
	err    bool
	Trust  string `json:"trust"`
	Reason string `json:"reason"`
}

func verifyAnswer(t *testing.T, file []byte, keys obj) verifyResult {
	req := obj{"lock": string(file), "now": checkNow}
	for k, v := range keys {
		req[k] = v
	}
	if !json.Valid(mustJSON(t, req)) {
		return verifyResult{err: true}
	}
	var env struct {
		OK     bool         `json:"ok"`
		Result verifyResult `json:"result"`
	}
	if err := json.Unmarshal(core.Call("verify_lock", mustJSON(t, req)), &env); err != nil {
		t.Fatal(err)
	}
	if !env.OK {
		return verifyResult{err: true}
	}
	return env.Result
}
