package core_test

import (
	"strings"
	"testing"
)

// respell returns another base64 spelling of the same bytes: the last
// character with its unused low bits set (Go's lenient decoders read it as
// the same bytes). unused is how many low bits of the last character the
// encoding leaves unused.
func respell(t testing.TB, s string, unused uint) string {
	alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	if unused == 4 { // the signatures are base64url
		alphabet = alphabet[:62] + "-_"
	}
	body := strings.TrimRight(s, "=")
	pad := s[len(body):]
	last := body[len(body)-1]
	i := strings.IndexByte(alphabet, last)
	if i < 0 {
		t.Fatalf("respell: %q ends in %q", s, last)
	}
	other := alphabet[i|(1<<unused-1)]
	if other == last {
		other = alphabet[i&^(1<<unused-1)|1]
	}
	return body[:len(body)-1] + string(other) + pad
}

// signatureVectors: a signature or key has exactly one spelling; every
// other spelling of the same bytes is refused (issue 10, item 5).
func signatureVectors(t testing.TB) []opVector {
	lock := lockDoc(t, baseTools(), approvedAt)
	directory := keyDirectory(t)
	issuer, operator := loadKey(t, "test-issuer"), loadKey(t, "test-operator")
	signed := signDoc(t, lock, issuer, true)
	opSigned := signDoc(t, lock, operator, false)
	sigOf := func(d obj) string { return d["signature"].(string) }
	withSig := func(d obj, s string) obj { return with(d, "signature", s) }

	var vs []opVector
	add := func(op, name string, request any) { vs = append(vs, opVector{Op: op, Name: name, Request: request}) }
	verify := func(name string, doc any, extra obj) {
		r := obj{"lock": doc, "now": checkNow, "key_directory": directory}
		for k, v := range extra {
			r[k] = v
		}
		add("verify_lock", name, r)
	}
	// An Ed25519 signature is 64 bytes: 86 base64url characters, the last
	// carrying 4 unused bits.
	verify("signature respelt in its unused bits", withSig(signed, respell(t, sigOf(signed), 4)), nil)
	s := sigOf(signed)
	verify("signature with a line break", withSig(signed, s[:40]+"\n"+s[40:]), nil)
	verify("signature padded", withSig(signed, s+"=="), nil)
	opKey := []any{operator.PublicKey}
	verify("operator signature respelt", withSig(opSigned, respell(t, sigOf(opSigned), 4)), obj{"operator_keys": opKey})
	// A public key is 32 bytes: 44 characters with one "=", 2 unused bits.
	verify("operator key respelt", opSigned, obj{"operator_keys": []any{respell(t, operator.PublicKey, 2)}})
	verify("operator key unpadded", opSigned, obj{"operator_keys": []any{strings.TrimRight(operator.PublicKey, "=")}})
	dir := deepCopy(directory)
	k0 := dir["keys"].([]any)[0].(map[string]any)
	k0["public_key"] = respell(t, k0["public_key"].(string), 2)
	verify("directory key respelt", signed, obj{"key_directory": dir})
	// A seed is 32 bytes too.
	add("public_key", "seed respelt", obj{"private_key": respell(t, operator.Seed, 2)})
	add("sign_lock", "seed respelt", obj{"lock": lock, "private_key": respell(t, operator.Seed, 2)})
	return vs
}
