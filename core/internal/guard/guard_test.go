package guard_test

import (
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/guard"
	"github.com/crawlcheck/verifier/core/internal/sig"
)

func parse(t testing.TB, s string) canon.Value {
	t.Helper()
	v, err := canon.ParseString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// edit returns the receipt with one member replaced (null deletes it).
func edit(v canon.Value, key string, to canon.Value) canon.Value {
	out := v.Without(key)
	if to.IsNull() {
		return out
	}
	return canon.Obj(append(out.Members(), canon.M(key, to))...)
}

// TestReadRefuses: a document that is not a receipt is refused with the
// member at fault named, for each kind's own members too.
func TestReadRefuses(t *testing.T) {
	fx := newFixture(t)
	k := loadKey(t, "test-issuer")
	lc := parse(t, fx.sign(t, k, guard.KindLockCheck, "2026-11-30T11:59:00Z", "2026-11-30T12:04:00Z"))
	dr := parse(t, fx.sign(t, k, guard.KindDecision, "2026-11-30T11:59:00Z", "2026-11-30T12:04:00Z"))
	for _, r := range []canon.Value{lc, dr} {
		if _, err := guard.Read(r); err != nil {
			t.Fatalf("a signed receipt does not read: %v", err)
		}
	}
	null, str := canon.NullValue(), canon.Str
	for _, c := range []struct {
		base       canon.Value
		key        string
		to         canon.Value
		wantInText string
	}{
		{lc, "kind", str("crawlcheck-mcp-lock"), "receipt.kind"},
		{lc, "v", canon.Int(2), "receipt.v"},
		{lc, "issuer", null, "receipt.issuer"},
		{lc, "nonce", str(""), "receipt.nonce"},
		{lc, "signature", canon.Int(1), "receipt.signature"},
		{lc, "issued_at", str("yesterday"), "receipt.issued_at"},
		{lc, "expires_at", str("2026-11-30T11:00:00Z"), "receipt.expires_at is before"},
		{lc, "tools_sha256", canon.Int(1), "receipt.tools_sha256"},
		{lc, "engine", canon.Obj(), "receipt.engine.rules_sha256"},
		{lc, "inputs", canon.Arr(), "receipt.inputs"},
		{lc, "inputs", canon.Obj(), "receipt.inputs.lock_sha256"},
		{lc, "decision", str("proceed"), "receipt.decision"},
		{lc, "verdict", str("same"), "receipt.verdict"},
		{dr, "decision", str("connect"), "receipt.decision"},
		{dr, "authority", null, "receipt.authority"},
		{dr, "observations", canon.Arr(canon.Int(1)), "receipt.observations"},
	} {
		_, err := guard.Read(edit(c.base, c.key, c.to))
		if err == nil || !strings.Contains(err.Error(), c.wantInText) {
			t.Errorf("%s := %s: error %v, want one naming %s", c.key, c.to, err, c.wantInText)
		}
	}
	if _, err := guard.Read(canon.Arr()); err == nil {
		t.Error("an array read as a receipt")
	}
}

// TestSealSeparatesDomains: a sealed receipt's signature verifies in the
// domain of its kind and in no other, and sealing sets key_id and sha256
// whatever they were.
func TestSealSeparatesDomains(t *testing.T) {
	fx := newFixture(t)
	k := loadKey(t, "test-issuer")
	r := parse(t, fx.sign(t, k, guard.KindLockCheck, "2026-11-30T11:59:00Z", "2026-11-30T12:04:00Z"))
	priv, err := sig.PrivateKey(k.Seed)
	if err != nil {
		t.Fatal(err)
	}
	stale := edit(edit(r, "key_id", canon.Str("someone-else")), "sha256", canon.Str("0"))
	sealed := guard.Seal(stale, priv, k.KID)
	if !canon.Equal(sealed, r) {
		t.Errorf("sealing again is not the signed receipt:\n%s\n%s", sealed, r)
	}
	get := func(name string) string { v, _ := sealed.Get(name); s, _ := v.Str(); return s }
	pub := priv.Public()
	if !sig.SignedBy(pub, guard.KindLockCheck, get("sha256"), get("signature")) {
		t.Error("the signature does not verify in its own domain")
	}
	for _, other := range []string{guard.KindDecision, "crawlcheck-mcp-lock", "crawlcheck-continuity-record"} {
		if sig.SignedBy(pub, other, get("sha256"), get("signature")) {
			t.Errorf("the signature verifies in the %s domain", other)
		}
	}
}
