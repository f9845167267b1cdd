package guard

import (
	"time"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/continuity"
	"github.com/crawlcheck/verifier/core/internal/lock"
	"github.com/crawlcheck/verifier/core/internal/policy"
	"github.com/crawlcheck/verifier/core/internal/sig"
)

// Runner runs a core op on a request object and returns its result: the
// op table's own code, so a replay decides exactly as the op does.
type Runner func(op string, request canon.Value) (canon.Value, error)

// LockDigest is a lockfile's content digest: what a receipt's
// inputs.lock_sha256, a record's baseline.sha256 and verify_lock's
// content_sha256 name. Signing does not change it.
func LockDigest(doc canon.Value) (string, error) {
	f, err := lock.Parse(doc)
	if err != nil {
		return "", err
	}
	return continuity.VerifyBaseline(f, sig.Keys{}, false, time.Time{}).Digest, nil
}

// Reasons a replay does not reproduce a receipt's decision.
const (
	ReasonOtherRules      = "other_rules"      // the receipt was decided by another rule table
	ReasonLockUnavailable = "lock_unavailable" // neither the inputs nor the host hold the lockfile it names
	ReasonNotReproducible = "not_reproducible" // the inputs do not run, or give another answer
)

// Replay is the outcome of re-running a receipt's decision.
type Replay struct {
	SameRules    bool
	Reproducible bool
	Reason       string      // "" when reproducible
	Differs      []string    // the answer members that differ
	Decision     string      // the replayed decision; "" when it did not run
	Result       canon.Value // the replayed lock_check answer or continuity record; null when it did not run
	Err          error       // why the inputs did not run
}

// ReplayReceipt re-runs the decision of r from its inputs with this core.
// lockDoc is the lockfile to use when the inputs carry only its digest
// (null for none); a lockfile whose digest is not the one named is not used.
func ReplayReceipt(r *Receipt, lockDoc canon.Value, run Runner) Replay {
	out := Replay{SameRules: r.RulesSHA256 == policy.RulesSHA256(), Result: canon.NullValue()}
	lockDoc, err := lockFor(r, lockDoc)
	if err != nil {
		out.Err, out.Reason = err, ReasonNotReproducible
		return out
	}
	if lockDoc.IsNull() {
		out.Reason = ReasonLockUnavailable
		return out
	}
	_, op, _ := OperationOf(r.Kind)
	req := r.Inputs.Without("lock_sha256", "lock")
	req = canon.Obj(append(req.Members(), canon.M("lock", lockDoc))...)
	result, err := run(op, req)
	if err != nil {
		out.Err = cerr.In("receipt.inputs", err)
		out.Reason = ReasonNotReproducible
		return out
	}
	out.Result = result
	want := result.Members()
	if r.Kind == KindDecision {
		want = decisionAnswer(result)
	}
	for _, m := range want {
		if m.Key == "kind" || m.Key == "v" {
			continue
		}
		if m.Key == "decision" {
			out.Decision, _ = m.Value.Str()
		}
		if got, _ := r.Doc.Get(m.Key); !canon.Equal(got, m.Value) {
			out.Differs = append(out.Differs, m.Key)
		}
	}
	switch {
	case len(out.Differs) > 0:
		out.Reason = ReasonNotReproducible
	case !out.SameRules:
		out.Reason = ReasonOtherRules
	default:
		out.Reproducible = true
	}
	return out
}

// lockFor finds the lockfile a receipt was computed from: the one its
// inputs carry, which must have the digest they name (else the receipt
// contradicts itself), or else the one given when it has that digest. Null
// when neither holds it.
func lockFor(r *Receipt, given canon.Value) (canon.Value, error) {
	if carried, ok := r.Inputs.Get("lock"); ok {
		if !hasDigest(carried, r.LockSHA256) {
			return canon.Value{}, cerr.New(cerr.BadRequest, "receipt.inputs.lock is not the lockfile inputs.lock_sha256 names")
		}
		return carried, nil
	}
	if hasDigest(given, r.LockSHA256) {
		return given, nil
	}
	return canon.NullValue(), nil
}

// hasDigest reports whether doc (a lockfile, or its text) has the content
// digest want.
func hasDigest(doc canon.Value, want string) bool {
	if s, ok := doc.Str(); ok {
		var err error
		if doc, err = canon.ParseString(s); err != nil {
			return false
		}
	}
	d, err := LockDigest(doc)
	return err == nil && d == want
}
