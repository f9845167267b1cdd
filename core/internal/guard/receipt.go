// Package guard judges signed evidence from an issuer before a host acts on
// it (spec "Tool-interface continuity" §7: a valid signature is not safe to
// proceed).
//
// An issuer answers two kinds of receipt (docs/receipts.md): the signed
// answer to a lock check (crawlcheck-mcp-lock-check) and a decision receipt
// (crawlcheck-preflight-decision). Each is an answer this same core computed
// — lock_check or continuity_check — wrapped in an envelope: who issued it,
// with which key, when, until when, a nonce, the endpoint it speaks about,
// the operation it answers, the inputs it was computed from and the rule
// table's hash. Signing is core/internal/sig's scheme with the receipt's kind as the
// domain, so a lockfile signature never verifies as a receipt's.
//
// Check answers each question a host must ask separately, because any one
// of them failing makes the receipt unsafe to act on, and a host that only
// checks the signature accepts a replayed, expired or misdirected answer.
// Failures are answers, never errors: what an issuer sent is data to judge.
// The failing answers map onto observations of spec §4 (the evidence table
// of core/internal/policy) that a continuity check records, and the deployment's own
// policy, not the issuer's, decides the result.
//
// The package reads no clock and draws no randomness: now, nonces and keys
// are inputs. It cannot import package core (the op table imports it), so
// the decisions it re-runs are run through a Runner the op table supplies.
package guard

import (
	"time"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/ed25519"
	"github.com/crawlcheck/verifier/core/internal/policy"
	"github.com/crawlcheck/verifier/core/internal/sig"
	"github.com/crawlcheck/verifier/core/timefmt"
)

// Receipt kinds and the operation each answers.
const (
	KindLockCheck = "crawlcheck-mcp-lock-check"
	KindDecision  = "crawlcheck-preflight-decision"

	OpLockCheck = "mcp.lock.check"   // POST /api/v1/mcp/lock/check
	OpDecide    = "preflight.decide" // POST /api/v1/preflight/decide
)

// OperationOf returns the operation a receipt kind answers and the core op
// that computes its decision; ok is false for a kind that is not a receipt.
func OperationOf(kind string) (operation, coreOp string, ok bool) {
	switch kind {
	case KindLockCheck:
		return OpLockCheck, "lock_check", true
	case KindDecision:
		return OpDecide, "continuity_check", true
	}
	return "", "", false
}

// Receipt is a receipt read from its document: the envelope and what the
// guard needs of the answer. Doc keeps the document for digests and replay.
type Receipt struct {
	Doc                        canon.Value
	Kind                       string
	Issuer, KeyID, Nonce       string
	Subject, Operation         string
	IssuedAt, ExpiresAt        time.Time
	Decision                   string
	Verdict                    string   // lock checks: unchanged, changed or unreachable
	Incomplete                 []string // decision receipts: availability observations of the record
	ToolsSHA256                string   // the issuer's reading; "" when it read none
	Inputs                     canon.Value
	LockSHA256                 string // inputs.lock_sha256: the content digest of the lockfile
	RulesSHA256, EngineVersion string
	Authority                  canon.Value // decision receipts: the policy that decided; null otherwise
	SHA256, Signature          string
}

// Allows reports whether the receipt's decision lets the host go on.
func (r *Receipt) Allows() bool {
	return r.Decision == "connect" || r.Decision == policy.DecisionProceed
}

// Read reads a receipt document. An error (bad_request, naming the member)
// says why the document is not a receipt.
func Read(doc canon.Value) (*Receipt, error) {
	bad := func(format string, args ...any) (*Receipt, error) {
		return nil, cerr.New(cerr.BadRequest, "receipt"+format, args...)
	}
	if doc.Kind() != canon.Object {
		return bad(" is %s, not an object", doc.Kind())
	}
	r := &Receipt{Doc: doc}
	str := func(name string, dst *string) bool {
		v, _ := doc.Get(name)
		s, ok := v.Str()
		*dst = s
		return ok && s != ""
	}
	if !str("kind", &r.Kind) {
		return bad(".kind must be a non-empty string")
	}
	if _, _, ok := OperationOf(r.Kind); !ok {
		return bad(".kind %q is not a receipt kind (%s, %s)", r.Kind, KindLockCheck, KindDecision)
	}
	if v, _ := doc.Get("v"); v.String() != "1" {
		return bad(".v must be 1")
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"issuer", &r.Issuer}, {"key_id", &r.KeyID}, {"nonce", &r.Nonce}, {"subject", &r.Subject},
		{"operation", &r.Operation}, {"decision", &r.Decision}, {"sha256", &r.SHA256}, {"signature", &r.Signature}} {
		if !str(f.name, f.dst) {
			return bad(".%s must be a non-empty string", f.name)
		}
	}
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"issued_at", &r.IssuedAt}, {"expires_at", &r.ExpiresAt}} {
		var s string
		str(f.name, &s)
		t, err := timefmt.Parse(s)
		if err != nil {
			return bad(".%s must be an RFC 3339 time", f.name)
		}
		*f.dst = t
	}
	if r.ExpiresAt.Before(r.IssuedAt) {
		return bad(".expires_at is before issued_at")
	}
	if v, _ := doc.Get("tools_sha256"); !v.IsNull() && !str("tools_sha256", &r.ToolsSHA256) {
		return bad(".tools_sha256 must be a string or null")
	}
	engine, _ := doc.Get("engine")
	for _, f := range []struct {
		name string
		dst  *string
	}{{"rules_sha256", &r.RulesSHA256}, {"version", &r.EngineVersion}} {
		v, _ := engine.Get(f.name)
		if !isString(v, f.dst) {
			return bad(".engine.%s must be a non-empty string", f.name)
		}
	}
	r.Inputs, _ = doc.Get("inputs")
	if r.Inputs.Kind() != canon.Object {
		return bad(".inputs must be an object")
	}
	if v, _ := r.Inputs.Get("lock_sha256"); !isString(v, &r.LockSHA256) {
		return bad(".inputs.lock_sha256 must be a non-empty string")
	}
	r.Authority = canon.NullValue()
	if r.Kind == KindLockCheck {
		if !oneOf(r.Decision, "connect", "block") {
			return bad(".decision must be connect or block")
		}
		if !str("verdict", &r.Verdict) || !oneOf(r.Verdict, "unchanged", "changed", "unreachable") {
			return bad(".verdict must be unchanged, changed or unreachable")
		}
	} else {
		if !oneOf(r.Decision, policy.DecisionProceed, policy.DecisionPause, policy.DecisionDeny) {
			return bad(".decision must be proceed, pause or deny")
		}
		if r.Authority, _ = doc.Get("authority"); r.Authority.Kind() != canon.Object {
			return bad(".authority must be an object")
		}
		obs, _ := doc.Get("observations")
		if obs.Kind() != canon.Array {
			return bad(".observations must be an array of observation names")
		}
		for _, o := range obs.Elems() {
			var name string
			if !isString(o, &name) {
				return bad(".observations must be an array of observation names")
			}
			if rule, _ := policy.RuleOf(policy.Observation(name)); rule.Class == policy.ClassAvailability {
				r.Incomplete = append(r.Incomplete, name)
			}
		}
	}
	return r, nil
}

func isString(v canon.Value, dst *string) bool {
	s, ok := v.Str()
	*dst = s
	return ok && s != ""
}

func oneOf(s string, allowed ...string) bool {
	for _, a := range allowed {
		if s == a {
			return true
		}
	}
	return false
}

// Envelope is what an issuer adds to an answer to make it a receipt.
type Envelope struct {
	Issuer, Nonce, Subject string
	IssuedAt, ExpiresAt    time.Time
}

func (e Envelope) members(kind string) []canon.Member {
	op, _, _ := OperationOf(kind)
	return []canon.Member{
		canon.M("kind", canon.Str(kind)),
		canon.M("v", canon.Int(1)),
		canon.M("issuer", canon.Str(e.Issuer)),
		canon.M("issued_at", canon.Str(timefmt.Format(e.IssuedAt))),
		canon.M("expires_at", canon.Str(timefmt.Format(e.ExpiresAt))),
		canon.M("nonce", canon.Str(e.Nonce)),
		canon.M("subject", canon.Str(e.Subject)),
		canon.M("operation", canon.Str(op)),
		canon.M("engine", canon.Obj(
			canon.M("version", canon.Str(policy.EngineVersion)),
			canon.M("rules_sha256", canon.Str(policy.RulesSHA256())),
		)),
	}
}

// LockCheck makes the receipt of a lock check: every member of the
// lock_check answer, the envelope and the inputs the answer came from.
func LockCheck(e Envelope, answer, inputs canon.Value) canon.Value {
	ms := e.members(KindLockCheck)
	for _, m := range answer.Members() {
		if m.Key != "kind" && m.Key != "v" {
			ms = append(ms, m)
		}
	}
	return canon.Obj(append(ms, canon.M("inputs", inputs))...)
}

// Decision makes a decision receipt from the continuity record the issuer's
// check wrote: the decision its session effect amounts to, and what a host
// needs to judge and re-run it.
func Decision(e Envelope, record, inputs canon.Value) canon.Value {
	ms := append(e.members(KindDecision), decisionAnswer(record)...)
	return canon.Obj(append(ms, canon.M("inputs", inputs))...)
}

// decisionAnswer is what a decision receipt takes from its record; a replay
// compares exactly these members.
func decisionAnswer(record canon.Value) []canon.Member {
	get := func(path ...string) canon.Value {
		v := record
		for _, p := range path {
			v, _ = v.Get(p)
		}
		return v
	}
	effectName, _ := get("effect").Str()
	effect, _ := policy.ParseEffect(effectName)
	var names []string
	for _, o := range get("observations").Elems() {
		n, _ := o.Get("observation")
		s, _ := n.Str()
		if len(names) == 0 || names[len(names)-1] != s {
			names = append(names, s)
		}
	}
	return []canon.Member{
		canon.M("decision", canon.Str(policy.DecisionOf(effect))),
		canon.M("effect", get("effect")),
		canon.M("observations", canon.Strs(nonNil(names))),
		canon.M("tools_sha256", get("observed", "tools_sha256")),
		canon.M("record_sha256", get("record_sha256")),
		canon.M("authority", canon.Obj(
			canon.M("policy_sha256", get("policy", "sha256")),
			canon.M("policy_version", get("policy", "version")),
			canon.M("policy_source", get("policy", "source")),
		)),
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Seal signs a receipt: key_id is set to the signing key's id, sha256 to the
// digest of the rest, and signature covers that digest in the domain of the
// receipt's kind.
func Seal(doc canon.Value, priv ed25519.PrivateKey, keyID string) canon.Value {
	kindV, _ := doc.Get("kind")
	kind, _ := kindV.Str()
	body := doc.Without("key_id", "sha256", "signature")
	body = canon.Obj(append(body.Members(), canon.M("key_id", canon.Str(keyID)))...)
	digest := sig.Digest(body)
	return canon.Obj(append(body.Members(),
		canon.M("sha256", canon.Str(digest)),
		canon.M("signature", canon.Str(sig.Sign(priv, keyID, kind, digest))),
	)...)
}
