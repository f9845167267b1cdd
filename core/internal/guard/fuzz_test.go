package guard_test

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/coretest"
	"github.com/crawlcheck/verifier/core/internal/endpoint"
	"github.com/crawlcheck/verifier/core/internal/guard"
	"github.com/crawlcheck/verifier/core/internal/sig"
	"github.com/crawlcheck/verifier/core/timefmt"
)

const (
	subject = "https://mcp.example.com/mcp"
	nowText = "2026-11-30T12:00:00.000Z"
)

type testKey struct{ KID, Seed, PublicKey string }

func loadKey(t testing.TB, name string) testKey {
	t.Helper()
	b, err := os.ReadFile(coretest.RepoPath(t, "testdata", "keys", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		KID       string `json:"kid"`
		Seed      string `json:"seed"`
		PublicKey string `json:"public_key"`
	}
	if err := json.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	return testKey{k.KID, k.Seed, k.PublicKey}
}

func directory(t testing.TB) json.RawMessage {
	b, err := os.ReadFile(coretest.RepoPath(t, "testdata", "keys", "test-directory.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func call(t testing.TB, op string, req any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
	}
	resp := core.Call(op, b)
	if err := json.Unmarshal(resp, &env); err != nil || !env.OK {
		t.Fatalf("%s: %s", op, resp)
	}
	return env.Result
}

type obj = map[string]any

// fixture is a one-tool server, its lockfile, and signed receipts about it.
type fixture struct {
	lock  json.RawMessage
	pages []string
}

func newFixture(t testing.TB) fixture {
	page := `{"tools":[{"name":"echo","description":"Echo the text back.","inputSchema":{"type":"object"}}]}`
	var made struct{ Lock string }
	json.Unmarshal(call(t, "make_lock", obj{"pages": []string{page}, "approved_at": "2026-10-07T10:45:00Z",
		"server": obj{"url": subject}}), &made)
	return fixture{lock: json.RawMessage(made.Lock), pages: []string{page}}
}

func (f fixture) sign(t testing.TB, k testKey, kind, issued, expires string) string {
	inputs := obj{"lock": f.lock, "pages": f.pages}
	if kind == guard.KindDecision {
		inputs = obj{"now": issued, "lock": f.lock, "observed": obj{"endpoint": subject, "pages": f.pages}}
	}
	var out struct{ Receipt json.RawMessage }
	json.Unmarshal(call(t, "sign_receipt", obj{"kind": kind, "private_key": k.Seed, "key_id": k.KID,
		"issuer": "test-issuer.crawlcheck.invalid", "issued_at": issued, "expires_at": expires,
		"nonce": "nonce-1", "subject": subject, "inputs": inputs}), &out)
	return string(out.Receipt)
}

func (f fixture) guardRequest(t testing.TB, receipt, now, expectedOp string, seen []any) []byte {
	b, err := json.Marshal(obj{"receipt": receipt, "expected_subject": subject, "expected_operation": expectedOp,
		"now": now, "key_directory": directory(t), "lock": f.lock, "seen_nonces": seen})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type answer struct {
	PolicyResult string                     `json:"policy_result"`
	Observations []json.RawMessage          `json:"observations"`
	Reasons      map[string]*string         `json:"reasons"`
	Assurance    map[string]json.RawMessage `json:"evidence_assurance"`
}

// FuzzGuard: whatever the receipt's bytes, the clock and the replay state,
// the guard never fails the request, and it answers proceed only when an
// independent reading of the receipt finds every check passed: a receipt
// of a known kind, signed in its own domain by the active issuer key over
// its own digest, about the expected endpoint and operation, fresh, not
// replayed, for the approved lockfile, complete and allowing. Its
// observations are always accepted by continuity_check.
func FuzzGuard(f *testing.F) {
	fx := newFixture(f)
	active, retired := loadKey(f, "test-issuer"), loadKey(f, "test-issuer-retired")
	f.Add(fx.sign(f, active, guard.KindLockCheck, "2026-11-30T11:59:00Z", "2026-11-30T12:04:00Z"), int64(0), "", false)
	f.Add(fx.sign(f, active, guard.KindDecision, "2026-11-30T11:59:00Z", "2026-11-30T12:04:00Z"), int64(0), "", true)
	f.Add(fx.sign(f, active, guard.KindLockCheck, "2026-11-30T11:59:00Z", "2026-11-30T12:04:00Z"), int64(600), "nonce-1", false)
	f.Add(fx.sign(f, retired, guard.KindLockCheck, "2026-11-30T11:59:00Z", "2026-11-30T12:04:00Z"), int64(-400), "", false)
	f.Add(`{"kind":"crawlcheck-mcp-lock-check","v":1}`, int64(0), "x", false)
	f.Add("<html>", int64(0), "", false)
	base, _ := timefmt.Parse(nowText)
	pub, err := sig.PublicKey(active.PublicKey)
	if err != nil {
		f.Fatal(err)
	}
	lockV, _ := canon.Parse(fx.lock)
	lockDigest, _ := guard.LockDigest(lockV)
	f.Fuzz(func(t *testing.T, receipt string, offset int64, seen string, decide bool) {
		now := base.Add(time.Duration(offset%(1<<31)) * time.Second)
		var seenList []any
		if seen != "" {
			seenList = []any{obj{"nonce": seen, "expires_at": "2026-11-30T13:00:00Z"}}
		}
		op := guard.OpLockCheck
		if decide {
			op = guard.OpDecide
		}
		resp := core.Call("guard", fx.guardRequest(t, receipt, timefmt.Format(now), op, seenList))
		var env struct {
			OK     bool   `json:"ok"`
			Result answer `json:"result"`
		}
		if err := json.Unmarshal(resp, &env); err != nil || !env.OK {
			t.Fatalf("guard failed the request: %s", resp)
		}
		a := env.Result
		failing := 0
		for _, r := range a.Reasons {
			if r != nil {
				failing++
			}
		}
		if failing > 0 && (a.PolicyResult == "proceed" || len(a.Observations) == 0) {
			t.Fatalf("%d answers fail, yet policy_result %s with observations %s", failing, a.PolicyResult, a.Observations)
		}
		evidence, _ := json.Marshal(a.Observations)
		check := `{"now":"` + nowText + `","lock":` + string(fx.lock) + `,"observed":{"endpoint":"` + subject +
			`","pages":` + string(mustJSON(t, fx.pages)) + `},"evidence":` + string(evidence) + `}`
		if out := core.Call("continuity_check", []byte(check)); string(out[:10]) != `{"ok":true` {
			t.Fatalf("continuity_check refused the guard's observations: %s", out)
		}
		if a.PolicyResult != "proceed" {
			return
		}
		// An independent reading of a receipt the guard let through.
		doc, err := canon.ParseString(receipt)
		if err != nil {
			t.Fatalf("proceed on a receipt that is not JSON: %v", err)
		}
		str := func(name string) string { v, _ := doc.Get(name); s, _ := v.Str(); return s }
		inputs, _ := doc.Get("inputs")
		digestV, _ := inputs.Get("lock_sha256")
		digest, _ := digestV.Str()
		kind := str("kind")
		issued, err1 := timefmt.Parse(str("issued_at"))
		expires, err2 := timefmt.Parse(str("expires_at"))
		switch {
		case kind != guard.KindLockCheck && kind != guard.KindDecision:
			t.Fatalf("proceed on kind %q", kind)
		case str("key_id") != active.KID || !sig.SignedBy(pub, kind, str("sha256"), str("signature")):
			t.Fatalf("proceed without the active key's signature in the %s domain", kind)
		case sig.Digest(doc) != str("sha256"):
			t.Fatal("proceed on a receipt edited after signing")
		case err1 != nil || err2 != nil || !now.Before(expires.Add(5*time.Minute)) || issued.After(now.Add(5*time.Minute)):
			t.Fatalf("proceed on a stale receipt: issued %s expires %s now %s", str("issued_at"), str("expires_at"), now)
		case !endpoint.Same(str("subject"), subject) || str("operation") != op:
			t.Fatalf("proceed on a receipt about %s / %s", str("subject"), str("operation"))
		case seen != "" && str("nonce") == seen:
			t.Fatal("proceed on a replayed nonce")
		case digest != lockDigest:
			t.Fatal("proceed on a receipt about another lockfile")
		case str("decision") != "connect" && str("decision") != "proceed":
			t.Fatalf("proceed on decision %q", str("decision"))
		case kind == guard.KindLockCheck && str("verdict") != "unchanged":
			t.Fatalf("proceed on verdict %q", str("verdict"))
		}
	})
}

func mustJSON(t testing.TB, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
