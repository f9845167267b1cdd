package guard

import (
	"time"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/ed25519"
	"github.com/crawlcheck/verifier/core/internal/endpoint"
	"github.com/crawlcheck/verifier/core/internal/policy"
	"github.com/crawlcheck/verifier/core/internal/sig"
	"github.com/crawlcheck/verifier/core/timefmt"
)

// Questions are the answers of spec §7 that must each hold before a host
// acts on a receipt, in the order an answer lists them.
var Questions = []string{
	"integrity_valid",     // the receipt hashes to its sha256 and the signature verifies in its kind's domain
	"issuer_trusted",      // the key is the issuer's: in the key directory (of the issuer named) or pinned
	"key_policy_valid",    // the key may vouch now: active, within its window
	"freshness_valid",     // now is within issued_at and expires_at, give or take the clock skew
	"subject_matches",     // the receipt speaks about the endpoint the host is connecting to
	"operation_matches",   // the receipt answers the operation the host asked
	"replay_safe",         // the nonce was not seen before
	"baseline_matches",    // the receipt was computed against the approved lockfile
	"assessment_complete", // the issuer read and compared the whole list
}

// PinnedKey is an issuer key the deployment pinned.
type PinnedKey struct {
	ID     string
	Public ed25519.PublicKey
}

// Nonce is the nonce of an authentic receipt, kept until that receipt
// could no longer be fresh.
type Nonce struct {
	Nonce     string
	ExpiresAt time.Time
}

// Input is everything one guard needs. Receipt is the document as received;
// Unreadable is set instead when the bytes were not even JSON.
type Input struct {
	Receipt             canon.Value
	Unreadable          error
	ExpectedSubject     string
	ExpectedOperation   string
	Now                 time.Time
	Directory           *sig.Directory
	Pinned              []PinnedKey
	SeenNonces          []Nonce
	Lock                canon.Value // the approved lockfile
	LockSHA256          string      // its content digest
	Policy              *policy.Policy
	ObservedToolsSHA256 string // the host's own reading; "" when it has none
	Run                 Runner
}

// Level is one evidence assurance level, reached or not.
type Level struct {
	Reached bool
	Reason  string // why not; "" when reached
}

// failed is one failing answer behind an observation.
type failed struct {
	answer, reason string
	expected, got  canon.Value
}

// Answer is the guard's answer.
type Answer struct {
	Receipt    *Receipt // nil when the document is not a receipt
	Unreadable string   // why it is not
	Holds      map[string]bool
	Reasons    map[string]string
	A, B, C    Level
	Result     string        // proceed, pause or deny
	Effect     policy.Effect // the strongest effect the deployment's policy gives the observations
	Findings   []policy.Finding
	Nonces     []Nonce
	failures   []failed
	policy     *policy.Policy
	sawChange  bool // an authentic lock check whose verdict is changed
}

// Check judges a receipt. It never fails: a receipt that cannot be read,
// verified or replayed is an answer that says so.
func Check(in Input) Answer {
	a := Answer{Holds: map[string]bool{}, Reasons: map[string]string{}, policy: in.Policy}
	r, err := in.receipt()
	if err != nil {
		a.Unreadable = cerr.Message(err)
		for _, q := range Questions {
			a.fail(q, "malformed_receipt", canon.NullValue(), canon.NullValue())
		}
		a.A = Level{Reason: "malformed_receipt"}
		a.B, a.C = a.A, a.A
		a.Nonces = keepNonces(in, nil)
	} else {
		a.Receipt = r
		a.judge(in, r)
	}
	a.decide(in)
	return a
}

func (in Input) receipt() (*Receipt, error) {
	if in.Unreadable != nil {
		return nil, in.Unreadable
	}
	return Read(in.Receipt)
}

func (a *Answer) fail(q, reason string, expected, got canon.Value) {
	a.Holds[q], a.Reasons[q] = false, reason
	a.failures = append(a.failures, failed{q, reason, expected, got})
}

func (a *Answer) judge(in Input, r *Receipt) {
	str := canon.Str
	null := canon.NullValue()
	a.judgeKey(in, r)

	switch {
	case !in.Now.Before(r.ExpiresAt.Add(policy.ClockSkew)):
		a.fail("freshness_valid", "expired", str(timefmt.Format(in.Now)), str(timefmt.Format(r.ExpiresAt)))
	case r.IssuedAt.After(in.Now.Add(policy.ClockSkew)):
		a.fail("freshness_valid", "not_yet_valid", str(timefmt.Format(in.Now)), str(timefmt.Format(r.IssuedAt)))
	default:
		a.Holds["freshness_valid"] = true
	}
	a.check("subject_matches", endpoint.Same(r.Subject, in.ExpectedSubject), "other_subject", str(in.ExpectedSubject), str(r.Subject))
	a.check("operation_matches", r.Operation == in.ExpectedOperation, "other_operation", str(in.ExpectedOperation), str(r.Operation))
	// A loop, not slices.ContainsFunc: the generic call's dictionary puts
	// Nonce, and so time.Time, in an interface, which links time's layout
	// formatter (Time.String) into the wasm module: about 40 KB of code.
	seen := false
	for _, n := range in.SeenNonces {
		if n.Nonce == r.Nonce {
			seen = true
			break
		}
	}
	a.check("replay_safe", !seen, "nonce_seen", null, str(r.Nonce))
	a.check("baseline_matches", r.LockSHA256 == in.LockSHA256, "other_baseline", str(in.LockSHA256), str(r.LockSHA256))
	switch {
	case r.Kind == KindLockCheck && r.Verdict == "unreachable":
		a.fail("assessment_complete", "incomplete", null, str(r.Verdict))
	case len(r.Incomplete) > 0:
		a.fail("assessment_complete", "incomplete", null, canon.Strs(r.Incomplete))
	default:
		a.Holds["assessment_complete"] = true
	}
	// A lock check that saw a change is a reading, not a refusal: the host's
	// own comparison names the changed tools and the policy withholds them
	// one by one (a lying issuer fails B, the replay). Only a decision
	// receipt's pause or deny refuses the connection; a lock check the issuer
	// could not complete fails assessment_complete above.
	a.sawChange = r.Kind == KindLockCheck && r.Verdict == "changed"
	if r.Kind == KindDecision && !r.Allows() {
		a.failures = append(a.failures, failed{"decision", "not_allowed", null, str(r.Decision)})
	}

	a.A = Level{Reached: true}
	for _, q := range Questions[:3] {
		if !a.Holds[q] {
			a.A = Level{Reason: a.Reasons[q]}
			break
		}
	}
	rep := ReplayReceipt(r, in.Lock, in.Run)
	a.B = Level{Reached: rep.Reproducible, Reason: rep.Reason}
	if rep.Reason == ReasonNotReproducible {
		a.failures = append(a.failures, failed{"evidence_assurance.B", ReasonNotReproducible, canon.StrOrNull(rep.Decision, rep.Decision != ""), str(r.Decision)})
	}
	switch {
	case in.ObservedToolsSHA256 == "":
		a.C = Level{Reason: "no_host_reading"}
	case r.ToolsSHA256 == "":
		a.C = Level{Reason: "no_issuer_reading"}
	case r.ToolsSHA256 != in.ObservedToolsSHA256:
		a.C = Level{Reason: "readings_differ"}
	default:
		a.C = Level{Reached: true}
	}
	var add *Nonce
	if a.A.Reached {
		add = &Nonce{r.Nonce, r.ExpiresAt}
	}
	a.Nonces = keepNonces(in, add)
}

func (a *Answer) check(q string, ok bool, reason string, expected, got canon.Value) {
	if ok {
		a.Holds[q] = true
		return
	}
	a.fail(q, reason, expected, got)
}

// judgeKey answers the three questions about the signature and its key.
// They are separate: a retired key's signature still verifies (integrity
// holds, key policy fails); an unknown key's cannot be checked at all.
func (a *Answer) judgeKey(in Input, r *Receipt) {
	str, null := canon.Str, canon.NullValue()
	// The key questions are about the key the receipt names; integrity
	// requires the signature to name the same one.
	kid := r.KeyID
	var pub ed25519.PublicKey
	var usable string // why the key may not vouch now; "" if it may
	switch k, inDir := in.Directory.Lookup(kid); {
	case inDir:
		pub, usable = k.Public, k.Usable(in.Now)
		if iss := in.Directory.Issuer; iss != "" && iss != r.Issuer {
			a.fail("issuer_trusted", "other_issuer", str(iss), str(r.Issuer))
		} else {
			a.Holds["issuer_trusted"] = true
		}
	default:
		for _, p := range in.Pinned {
			if p.ID == kid {
				pub = p.Public
			}
		}
		a.check("issuer_trusted", pub != nil, "key_unknown", null, str(r.KeyID))
	}

	switch signedBy, content := sig.KeyIDOf(r.Signature), sig.Digest(r.Doc); {
	case signedBy == "":
		a.fail("integrity_valid", "malformed_signature", null, str(r.Signature))
	case signedBy != kid:
		a.fail("integrity_valid", "key_id_mismatch", str(signedBy), str(kid))
	case pub == nil:
		a.fail("integrity_valid", "key_unknown", null, str(r.KeyID))
	case !sig.SignedBy(pub, r.Kind, r.SHA256, r.Signature):
		a.fail("integrity_valid", "bad_signature", null, str(r.KeyID))
	case content != r.SHA256:
		a.fail("integrity_valid", "edited_after_signing", str(content), str(r.SHA256))
	default:
		a.Holds["integrity_valid"] = true
	}

	switch {
	case pub == nil:
		a.fail("key_policy_valid", "key_unknown", null, str(r.KeyID))
	case usable != "":
		a.fail("key_policy_valid", usable, null, str(r.KeyID))
	default:
		a.Holds["key_policy_valid"] = true
	}
}

// keepNonces is the host's replay state after a receipt: nonces whose
// receipts can no longer be fresh are dropped, and add (the nonce of an
// authentic receipt, evidence level A; nil for none) is kept while its
// receipt could still be. Forged receipts add nothing, so they cannot fill
// the state.
func keepNonces(in Input, add *Nonce) []Nonce {
	live := func(expires time.Time) bool { return in.Now.Before(expires.Add(policy.ClockSkew)) }
	out := []Nonce{}
	for _, n := range in.SeenNonces {
		if live(n.ExpiresAt) {
			out = append(out, n)
			if add != nil && n.Nonce == add.Nonce {
				add = nil
			}
		}
	}
	if add != nil && live(add.ExpiresAt) {
		out = append(out, *add)
	}
	return out
}

// decide maps the failing answers onto observations and lets the
// deployment's policy decide. A receipt with any failing answer, or whose
// decision does not allow, never proceeds, whatever the policy says: the
// policy only chooses between pause and deny.
func (a *Answer) decide(in Input) {
	byObs := map[policy.Observation][]failed{}
	for _, f := range a.failures {
		o, _ := policy.EvidenceObservation(f.reason)
		byObs[o] = append(byObs[o], f)
	}
	receiptSHA := canon.NullValue()
	if a.Receipt != nil {
		receiptSHA = canon.Str(a.Receipt.SHA256)
	}
	for _, rule := range policy.Rules {
		fs, ok := byObs[rule.Observation]
		if !ok {
			continue
		}
		rows := make([]canon.Value, len(fs))
		for i, f := range fs {
			rows[i] = canon.Obj(
				canon.M("answer", canon.Str(f.answer)),
				canon.M("reason", canon.Str(f.reason)),
				canon.M("expected", f.expected),
				canon.M("got", f.got),
			)
		}
		a.Findings = append(a.Findings, policy.Finding{Observation: rule.Observation, Detail: canon.Obj(
			canon.M("failed", canon.Arr(rows...)),
			canon.M("receipt_sha256", receiptSHA),
		)})
	}
	if len(a.Findings) == 0 && a.sawChange {
		// Sound evidence of a change: nothing to refuse, but not a pass
		// either; a host that runs the continuity check learns which tools.
		a.Result, a.Effect = policy.DecisionPause, policy.PauseTool
		return
	}
	if len(a.Findings) == 0 {
		a.Result, a.Effect = policy.DecisionProceed, policy.Proceed
		return
	}
	a.Effect = policy.Decide(in.Policy, policy.ModeEnforce, a.Findings, nil, in.Now, false).Effect
	a.Result = policy.DecisionPause
	if a.Effect == policy.Deny {
		a.Result = policy.DecisionDeny
	}
}
