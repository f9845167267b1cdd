package core_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/guard"
	"github.com/crawlcheck/verifier/core/internal/policy"
	"github.com/crawlcheck/verifier/core/internal/sig"
)

// The guard acceptance suite (spec §6 "Receipts", §7): every combination of
// the six faults a receipt can carry, each alone among them, and the
// decisions docs/receipts.md makes where the spec is silent.

const (
	guardIssuer   = "test-issuer.crawlcheck.invalid"
	guardNonce    = "nonce-7c1f2a9e"
	redirectedURL = "https://mcp.example.com/v2/mcp"
)

// guardFaults are the six faults of the suite. The key fault comes in two
// variants, so the combinations number 2^5 × 3 = 96.
type guardFaults struct {
	expired   bool
	key       string // "", "unknown" or "retired"
	foreign   bool   // signed in another kind's domain (a lockfile's)
	replayed  bool
	operation bool // a decision receipt where a lock check was asked
	redirect  bool
}

func (f guardFaults) name() string {
	var parts []string
	add := func(on bool, s string) {
		if on {
			parts = append(parts, s)
		}
	}
	add(f.expired, "expired")
	add(f.key == "unknown", "unknown key")
	add(f.key == "retired", "retired key")
	add(f.foreign, "foreign domain")
	add(f.replayed, "replayed nonce")
	add(f.operation, "other operation")
	add(f.redirect, "redirect")
	if parts == nil {
		return "no fault"
	}
	return strings.Join(parts, " + ")
}

func allGuardFaults() []guardFaults {
	var out []guardFaults
	for bits := 0; bits < 32; bits++ {
		for _, key := range []string{"", "unknown", "retired"} {
			out = append(out, guardFaults{
				expired: bits&1 != 0, foreign: bits&2 != 0, replayed: bits&4 != 0,
				operation: bits&8 != 0, redirect: bits&16 != 0, key: key,
			})
		}
	}
	return out
}

// guardFixture is what every guard case starts from: a one-tool server, its
// approved lockfile and the test keys.
type guardFixture struct {
	t                        testing.TB
	tools                    []obj
	lock                     obj
	directory                obj
	active, retired, foreign testKey
}

func newGuardFixture(t testing.TB) *guardFixture {
	ts := baseTools()[1:2]
	return &guardFixture{t: t, tools: ts, lock: lockDoc(t, ts, approvedAt), directory: keyDirectory(t),
		active: loadKey(t, "test-issuer"), retired: loadKey(t, "test-issuer-retired"), foreign: loadKey(t, "test-foreign")}
}

// receiptSpec says how to make one receipt; zero values are the honest
// issuer's answer to the lock check of the approved list.
type receiptSpec struct {
	kind                string
	key                 testKey
	issuedAt, expiresAt string
	subject, issuer     string
	inputs              obj
	carryLock           bool
	foreignDomain       bool
	edit                func(obj) // applied after signing
	resealWith          *testKey  // re-sign after edit, as a lying issuer would
}

func (g *guardFixture) pages(ts []obj) []string { return []string{page(g.t, ts, "")} }

func (g *guardFixture) receipt(s receiptSpec) obj {
	t := g.t
	if s.kind == "" {
		s.kind = guard.KindLockCheck
	}
	if s.key.KID == "" {
		s.key = g.active
	}
	if s.issuedAt == "" {
		s.issuedAt, s.expiresAt = "2026-11-30T11:59:00.000Z", "2026-11-30T12:04:00.000Z"
	}
	if s.subject == "" {
		s.subject = fixtureURL
	}
	if s.issuer == "" {
		s.issuer = guardIssuer
	}
	if s.inputs == nil {
		s.inputs = obj{"lock": g.lock, "pages": g.pages(g.tools)}
		if s.kind == guard.KindDecision {
			s.inputs = obj{"now": s.issuedAt, "lock": g.lock, "observed": obj{"endpoint": s.subject, "pages": g.pages(g.tools)}}
		}
	}
	req := obj{"kind": s.kind, "private_key": s.key.Seed, "key_id": s.key.KID, "issuer": s.issuer,
		"issued_at": s.issuedAt, "expires_at": s.expiresAt, "nonce": guardNonce, "subject": s.subject, "inputs": s.inputs}
	if s.carryLock {
		req["carry_lock"] = true
	}
	var out struct{ Receipt obj }
	if err := json.Unmarshal(call(t, "sign_receipt", req), &out); err != nil {
		t.Fatal(err)
	}
	r := out.Receipt
	if s.edit != nil {
		s.edit(r)
	}
	if s.resealWith != nil {
		r = reseal(t, r, *s.resealWith)
	}
	if s.foreignDomain {
		priv, err := sig.PrivateKey(s.key.Seed)
		if err != nil {
			t.Fatal(err)
		}
		r["signature"] = sig.Sign(priv, s.key.KID, "crawlcheck-mcp-lock", r["sha256"].(string))
	}
	return r
}

// reseal signs an edited receipt again, as an issuer that lies would.
func reseal(t testing.TB, r obj, k testKey) obj {
	v, err := canon.Parse(mustJSON(t, r))
	if err != nil {
		t.Fatal(err)
	}
	priv, err := sig.PrivateKey(k.Seed)
	if err != nil {
		t.Fatal(err)
	}
	var out obj
	if err := json.Unmarshal(canon.Canonical(guard.Seal(v, priv, k.KID)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// request is the guard request of a host that connected to the approved
// endpoint, asked for a lock check and read the same list itself.
func (g *guardFixture) request(receipt any) obj {
	return obj{
		"receipt":               receipt,
		"expected_subject":      fixtureURL,
		"expected_operation":    guard.OpLockCheck,
		"now":                   checkNow,
		"key_directory":         g.directory,
		"lock":                  g.lock,
		"observed_tools_sha256": g.toolsSHA(g.tools),
	}
}

func (g *guardFixture) toolsSHA(ts []obj) string {
	return resultField(g.t, call(g.t, "hash_tools", obj{"tools": ts}), "tools_sha256")
}

func (g *guardFixture) faulty(f guardFaults) obj {
	s := receiptSpec{}
	if f.expired {
		s.issuedAt, s.expiresAt = "2026-11-30T11:40:00.000Z", "2026-11-30T11:50:00.000Z"
	}
	switch f.key {
	case "unknown":
		s.key = g.foreign
	case "retired":
		s.key = g.retired
	}
	s.foreignDomain = f.foreign
	if f.operation {
		s.kind = guard.KindDecision
	}
	if f.redirect {
		s.subject = redirectedURL
	}
	r := g.receipt(s)
	req := g.request(r)
	if f.replayed {
		req["seen_nonces"] = []any{obj{"nonce": guardNonce, "expires_at": r["expires_at"]}}
	}
	return req
}

func guardCases(t testing.TB) []goldenCase {
	g := newGuardFixture(t)
	var cs []goldenCase
	add := func(name string, r obj) { cs = append(cs, goldenCase{name, r}) }
	for _, f := range allGuardFaults() {
		add(f.name(), g.faulty(f))
	}

	clean := g.receipt(receiptSpec{})
	rugged := rugPull(g.tools)
	rugReading := g.toolsSHA(rugged)
	add("receipt as its text", g.request(string(mustJSON(t, clean))))
	add("decision receipt for the operation asked", with(g.request(g.receipt(receiptSpec{kind: guard.KindDecision})), "expected_operation", guard.OpDecide))
	add("issuer blocks a changed list", with(g.request(g.receipt(receiptSpec{inputs: obj{"lock": g.lock, "pages": g.pages(rugged)}})), "observed_tools_sha256", rugReading))
	add("issuer could not reach the server", with(g.request(g.receipt(receiptSpec{inputs: obj{"lock": g.lock, "failure": "server_unavailable", "failure_detail": "connect: connection refused"}})), "observed_tools_sha256", nil))
	add("issuer read a truncated list", g.request(g.receipt(receiptSpec{inputs: obj{"lock": g.lock, "pages": []string{page(t, g.tools, "c2")}}})))
	add("decision receipt that pauses a changed tool", with(with(g.request(g.receipt(receiptSpec{kind: guard.KindDecision,
		inputs: obj{"now": "2026-11-30T11:59:00.000Z", "lock": g.lock, "observed": obj{"endpoint": fixtureURL, "pages": g.pages(rugged)}}})),
		"expected_operation", guard.OpDecide), "observed_tools_sha256", rugReading))
	add("decision receipt with an incomplete assessment", with(g.request(g.receipt(receiptSpec{kind: guard.KindDecision,
		inputs: obj{"now": "2026-11-30T11:59:00.000Z", "lock": g.lock, "observed": obj{"endpoint": fixtureURL, "pages": []string{page(t, g.tools, "c2")}}}})),
		"expected_operation", guard.OpDecide))
	otherLock := lockDoc(t, g.tools, oldApproval) // the same tools, approved another time
	add("receipt computed against another lockfile", g.request(g.receipt(receiptSpec{inputs: obj{"lock": otherLock, "pages": g.pages(g.tools)}})))
	add("lockfile carried in the inputs", g.request(g.receipt(receiptSpec{carryLock: true})))
	add("carried lockfile contradicts its digest", g.request(g.receipt(receiptSpec{carryLock: true, resealWith: &g.active,
		edit: func(r obj) { r["inputs"].(obj)["lock"] = otherLock }})))
	add("lying issuer: connect signed for a changed list", with(g.request(g.receipt(receiptSpec{
		inputs: obj{"lock": g.lock, "pages": g.pages(rugged)}, resealWith: &g.active,
		edit: func(r obj) {
			r["verdict"], r["decision"], r["modified"], r["modified_detail"] = "unchanged", "connect", []any{}, []any{}
		}})), "observed_tools_sha256", rugReading))
	add("decided by other rules", g.request(g.receipt(receiptSpec{resealWith: &g.active,
		edit: func(r obj) { r["engine"].(obj)["rules_sha256"] = strings.Repeat("0", 64) }})))
	add("host read another list than the issuer", with(g.request(clean), "observed_tools_sha256", rugReading))
	add("host without a reading of its own", with(g.request(clean), "observed_tools_sha256", nil))
	add("expired within the clock skew", g.request(g.receipt(receiptSpec{issuedAt: "2026-11-30T11:45:00.000Z", expiresAt: "2026-11-30T11:55:00.001Z"})))
	add("expired at the edge of the clock skew", g.request(g.receipt(receiptSpec{issuedAt: "2026-11-30T11:45:00.000Z", expiresAt: "2026-11-30T11:55:00.000Z"})))
	add("issued ahead within the clock skew", g.request(g.receipt(receiptSpec{issuedAt: "2026-11-30T12:05:00.000Z", expiresAt: "2026-11-30T12:10:00.000Z"})))
	add("issued ahead beyond the clock skew", g.request(g.receipt(receiptSpec{issuedAt: "2026-11-30T12:05:00.001Z", expiresAt: "2026-11-30T12:10:00.000Z"})))
	add("edited after signing", g.request(g.receipt(receiptSpec{edit: func(r obj) { r["nonce"] = "nonce-00000000" }})))
	add("malformed signature", g.request(g.receipt(receiptSpec{edit: func(r obj) { r["signature"] = "ed25519:test-issuer-2026:!!" }})))
	add("key_id names another key than the signature", g.request(g.receipt(receiptSpec{edit: func(r obj) { r["key_id"] = g.retired.KID }})))
	add("active key past its not_after", with(g.request(g.receipt(receiptSpec{issuedAt: "2027-01-02T00:00:00.000Z", expiresAt: "2027-01-02T00:05:00.000Z"})),
		"now", "2027-01-02T00:01:00.000Z"))
	add("receipt names another issuer", g.request(g.receipt(receiptSpec{issuer: "issuer.example.net"})))
	add("receipt is not JSON", g.request("<html><body>503 Service Unavailable</body></html>"))
	add("a signed lockfile is not a receipt", g.request(signDoc(t, g.lock, g.active, true)))
	add("receipt without a nonce", g.request(g.receipt(receiptSpec{edit: func(r obj) { delete(r, "nonce") }})))
	pinned := func(k testKey) []any { return []any{obj{"kid": k.KID, "public_key": k.PublicKey}} }
	noDir := func(r obj) obj { delete(r, "key_directory"); return r }
	add("pinned key without a directory", with(noDir(g.request(clean)), "pinned_keys", pinned(g.active)))
	add("pinned foreign key", with(noDir(g.request(g.receipt(receiptSpec{key: g.foreign}))), "pinned_keys", pinned(g.foreign)))
	add("pinned key the directory retired", with(g.request(g.receipt(receiptSpec{key: g.retired})), "pinned_keys", pinned(g.retired)))
	expired := g.faulty(guardFaults{expired: true})
	add("operator policy cannot make an expired receipt proceed", with(expired, "policy", obj{"kind": "crawlcheck-policy", "v": 1, "version": "acme-2026-11",
		"effects": obj{"evidence_expired": "proceed"}}))
	add("operator policy denies an expired receipt", with(expired, "policy", obj{"kind": "crawlcheck-policy", "v": 1, "version": "acme-2026-11",
		"effects": obj{"evidence_expired": "deny"}}))
	add("seen nonces of receipts that can no longer be fresh are dropped", with(g.request(clean), "seen_nonces", []any{
		obj{"nonce": "nonce-old", "expires_at": "2026-11-30T11:55:00.000Z"},
		obj{"nonce": "nonce-live", "expires_at": "2026-11-30T12:02:00.000Z"},
	}))
	return cs
}

// TestGuardGolden holds testdata/guard.json: every case's request gives
// exactly its answer, and the file holds exactly the cases above.
func TestGuardGolden(t *testing.T) {
	cases := guardCases(t)
	if len(cases) < 64 {
		t.Errorf("the acceptance suite has %d cases; spec §6 asks for at least 64", len(cases))
	}
	goldenFile{
		path:   filepath.Join(testdataDir, "guard.json"),
		kind:   "crawlcheck-guard-golden",
		about:  "Each case: the guard request and the answer it must give, byte for byte once compacted (docs/receipts.md). Written by `go test ./core -update`.",
		op:     "guard",
		result: "answer",
	}.hold(t, cases)
}

// guardAnswer is the part of a guard answer the fault tests read.
type guardAnswer struct {
	Reasons      map[string]*string `json:"reasons"`
	PolicyResult string             `json:"policy_result"`
	Level        string             `json:"evidence_level"`
	Observations []struct {
		Observation string `json:"observation"`
	} `json:"observations"`
	SeenNonces []struct{ Nonce string } `json:"seen_nonces"`
}

func askGuard(t testing.TB, request obj) guardAnswer {
	t.Helper()
	var a guardAnswer
	if err := json.Unmarshal(call(t, "guard", request), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestGuardFaults states, for every combination, which answers fail and why,
// which observations a continuity check receives and what the default
// policy answers — independently of the golden file, so a wrong golden
// cannot be written by -update unnoticed.
func TestGuardFaults(t *testing.T) {
	g := newGuardFixture(t)
	for _, f := range allGuardFaults() {
		want := map[string]string{}
		obs := map[string]bool{}
		if f.expired {
			want["freshness_valid"], obs["evidence_expired"] = "expired", true
		}
		switch f.key {
		case "unknown":
			want["integrity_valid"], want["issuer_trusted"], want["key_policy_valid"] = "key_unknown", "key_unknown", "key_unknown"
			obs["key_unknown"] = true
		case "retired":
			want["key_policy_valid"], obs["key_retired"] = "retired_key", true
		}
		if f.foreign && f.key != "unknown" {
			want["integrity_valid"], obs["signature_invalid"] = "bad_signature", true
		}
		if f.replayed {
			want["replay_safe"], obs["evidence_expired"] = "nonce_seen", true
		}
		if f.operation {
			want["operation_matches"], obs["decision_refused"] = "other_operation", true
		}
		if f.redirect {
			want["subject_matches"], obs["server_identity_mismatch"] = "other_subject", true
		}
		a := askGuard(t, g.faulty(f))
		for q, r := range a.Reasons {
			got := ""
			if r != nil {
				got = *r
			}
			if got != want[q] {
				t.Errorf("%s: %s fails for %q, want %q", f.name(), q, got, want[q])
			}
		}
		var gotObs []string
		for _, o := range a.Observations {
			gotObs = append(gotObs, o.Observation)
		}
		var wantObs []string
		for o := range obs {
			wantObs = append(wantObs, o)
		}
		slices.Sort(gotObs)
		slices.Sort(wantObs)
		if !slices.Equal(gotObs, wantObs) {
			t.Errorf("%s: observations %v, want %v", f.name(), gotObs, wantObs)
		}
		result := "deny"
		switch {
		case len(obs) == 0:
			result = "proceed"
		case len(obs) == 1 && obs["evidence_expired"]:
			result = "pause" // refresh: ask again
		}
		if a.PolicyResult != result {
			t.Errorf("%s: policy_result %s, want %s", f.name(), a.PolicyResult, result)
		}
		authentic := f.key == "" && !f.foreign
		// The nonce is kept while its receipt could be fresh: an authentic
		// receipt adds it, a replay finds it already there.
		if keeps := len(a.SeenNonces) == 1; keeps != (!f.expired && (authentic || f.replayed)) {
			t.Errorf("%s: seen_nonces %v", f.name(), a.SeenNonces)
		}
		if wantLevel := map[bool]string{true: "C", false: "none"}[authentic]; a.Level != wantLevel {
			t.Errorf("%s: evidence_level %s, want %s", f.name(), a.Level, wantLevel)
		}
	}
}

// TestGuardFeedsContinuity: the observations of a guard answer are exactly
// what continuity_check takes as evidence.
func TestGuardFeedsContinuity(t *testing.T) {
	g := newGuardFixture(t)
	var a struct{ Observations []any }
	if err := json.Unmarshal(call(t, "guard", g.faulty(guardFaults{expired: true, key: "retired", redirect: true})), &a); err != nil {
		t.Fatal(err)
	}
	rec := call(t, "continuity_check", with(continuityRequest(g.lock, g.pages(g.tools), "enforce"), "evidence", a.Observations))
	var r struct {
		Effect       string
		Observations []struct{ Observation string }
	}
	if err := json.Unmarshal(rec, &r); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range r.Observations {
		got = append(got, o.Observation)
	}
	if want := []string{"unchanged", "evidence_expired", "key_retired", "server_identity_mismatch"}; !slices.Equal(got, want) || r.Effect != "deny" {
		t.Errorf("record observations %v effect %s, want %v deny", got, r.Effect, want)
	}
}

// TestGuardSuiteCoversEveryReason: every reason of the evidence table is
// shown by at least one case of the suite, no answer fails for a reason the
// table lacks, and every answer's observations are evidence continuity_check
// accepts.
func TestGuardSuiteCoversEveryReason(t *testing.T) {
	g := newGuardFixture(t)
	unseen := map[string]bool{}
	for _, r := range policy.EvidenceReasons {
		unseen[r.Reason] = true
	}
	for _, c := range guardCases(t) {
		var a struct {
			Observations []struct {
				Observation string
				Detail      struct {
					Failed []struct{ Answer, Reason string }
				}
			}
		}
		res := call(t, "guard", c.Request)
		if err := json.Unmarshal(res, &a); err != nil {
			t.Fatal(err)
		}
		for _, o := range a.Observations {
			for _, f := range o.Detail.Failed {
				want, ok := policy.EvidenceObservation(f.Reason)
				if !ok || string(want) != o.Observation {
					t.Errorf("%s: %s fails for %q under %s; the table says %q", c.Name, f.Answer, f.Reason, o.Observation, want)
				}
				delete(unseen, f.Reason)
			}
		}
		var raw struct{ Observations json.RawMessage }
		json.Unmarshal(res, &raw)
		var evidence any
		json.Unmarshal(raw.Observations, &evidence)
		call(t, "continuity_check", with(continuityRequest(g.lock, g.pages(g.tools), "enforce"), "evidence", evidence))
	}
	for r := range unseen {
		t.Errorf("no case of the suite fails for %q", r)
	}
}

// TestReceiptInputsNameTheLockfile: inputs.lock_sha256 is the content digest
// verify_lock reports and a record's baseline.sha256, and stays the same when
// the lockfile is signed.
func TestReceiptInputsNameTheLockfile(t *testing.T) {
	g := newGuardFixture(t)
	r := g.receipt(receiptSpec{})
	signed := signDoc(t, g.lock, g.active, true)
	for _, doc := range []obj{g.lock, signed} {
		if got := resultField(t, call(t, "verify_lock", obj{"lock": doc, "now": checkNow}), "content_sha256"); got != r["inputs"].(obj)["lock_sha256"] {
			t.Errorf("content_sha256 %s, receipt names %s", got, r["inputs"].(obj)["lock_sha256"])
		}
	}
	d := g.receipt(receiptSpec{kind: guard.KindDecision})
	var rec struct{ Baseline struct{ SHA256 string } }
	inputs := with(d["inputs"].(obj), "lock", g.lock)
	delete(inputs, "lock_sha256")
	json.Unmarshal(call(t, "continuity_check", inputs), &rec)
	if rec.Baseline.SHA256 != d["inputs"].(obj)["lock_sha256"] {
		t.Errorf("record baseline.sha256 %s, receipt names %s", rec.Baseline.SHA256, d["inputs"].(obj)["lock_sha256"])
	}
}
