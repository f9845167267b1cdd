package core

import (
	"github.com/crawlcheck/verifier/core/canon"
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/guard"
	"github.com/crawlcheck/verifier/core/policy"
	"github.com/crawlcheck/verifier/core/req"
	"github.com/crawlcheck/verifier/core/sig"
	"github.com/crawlcheck/verifier/core/timefmt"
	"github.com/crawlcheck/verifier/core/tools"
)

// runnerAt runs the decision ops of the table on a request object whose
// messages name path: a receipt is computed, and replayed, by exactly the
// code of lock_check and continuity_check.
func runnerAt(path string) guard.Runner {
	return func(op string, request canon.Value) (canon.Value, error) {
		if request.Kind() != canon.Object {
			return canon.Value{}, cerr.New(cerr.BadRequest, "%s must be an object", path)
		}
		return ops[op](req.Obj{V: request, Path: path})
	}
}

// lockAndDigest reads a lockfile document field and its content digest.
func lockAndDigest(r req.Obj, field string) (canon.Value, string, error) {
	doc, ok, err := r.Doc(field)
	if err != nil || !ok {
		return doc, "", err
	}
	d, err := guard.LockDigest(doc)
	return doc, d, cerr.In(r.Path+"."+field, err)
}

func opGuard(r req.Obj) (canon.Value, error) {
	if err := r.Only("receipt", "expected_subject", "expected_operation", "now", "key_directory", "pinned_keys",
		"seen_nonces", "lock", "policy", "observed_tools_sha256"); err != nil {
		return canon.Value{}, err
	}
	in := guard.Input{Run: runnerAt("receipt.inputs"), Policy: policy.Default()}
	var err error
	if !r.Has("receipt") {
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.receipt is required")
	}
	// A receipt is what an issuer sent: bytes that are not JSON are an
	// answer (malformed_receipt), not an error of the request.
	if in.Receipt, err = r.Text("receipt"); err != nil {
		return canon.Value{}, err
	}
	if s, ok := in.Receipt.Str(); ok {
		if in.Receipt, err = canon.ParseString(s); err != nil {
			in.Unreadable = cerr.In("receipt", err)
		}
	}
	if in.ExpectedSubject, err = r.Str("expected_subject", true); err != nil {
		return canon.Value{}, err
	}
	if in.ExpectedOperation, err = r.Str("expected_operation", true); err != nil {
		return canon.Value{}, err
	}
	if in.Now, err = r.Time("now"); err != nil {
		return canon.Value{}, err
	}
	if in.Directory, in.Pinned, err = receiptKeys(r); err != nil {
		return canon.Value{}, err
	}
	if in.SeenNonces, err = seenNonces(r); err != nil {
		return canon.Value{}, err
	}
	if in.Lock, in.LockSHA256, err = lockAndDigest(r, "lock"); err != nil {
		return canon.Value{}, err
	}
	if in.LockSHA256 == "" {
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.lock is required: the approved lockfile")
	}
	if doc, ok, err := r.Doc("policy"); err != nil {
		return canon.Value{}, err
	} else if ok {
		if in.Policy, err = policy.Parse(doc); err != nil {
			return canon.Value{}, cerr.In("request.policy", err)
		}
	}
	if in.ObservedToolsSHA256, err = r.Str("observed_tools_sha256", false); err != nil {
		return canon.Value{}, err
	}
	if in.ObservedToolsSHA256 != "" && !tools.IsHexHash(in.ObservedToolsSHA256) {
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.observed_tools_sha256 must be 64 lowercase hex digits")
	}
	a := guard.Check(in)
	return a.Value(), nil
}

// receiptKeys reads the keys a receipt may be signed with: the issuer's
// key directory and the keys the deployment pinned. At least one is needed:
// with neither, no receipt could ever be trusted, which is a configuration
// mistake, not an answer.
func receiptKeys(r req.Obj) (*sig.Directory, []guard.PinnedKey, error) {
	var dir *sig.Directory
	if doc, ok, err := r.Doc("key_directory"); err != nil {
		return nil, nil, err
	} else if ok {
		if dir, err = sig.ParseDirectory(doc); err != nil {
			return nil, nil, cerr.In("request.key_directory", err)
		}
	}
	var pinned []guard.PinnedKey
	if r.Has("pinned_keys") {
		v := r.Value("pinned_keys")
		if v.Kind() != canon.Array {
			return nil, nil, cerr.New(cerr.BadRequest, "request.pinned_keys must be an array of {kid, public_key}")
		}
		for i, e := range v.Elems() {
			o := req.Obj{V: e, Path: "request.pinned_keys[" + canon.Int(int64(i)).String() + "]"}
			if e.Kind() != canon.Object {
				return nil, nil, cerr.New(cerr.BadRequest, "%s must be an object", o.Path)
			}
			if err := o.Only("kid", "public_key"); err != nil {
				return nil, nil, err
			}
			kid, err := o.Str("kid", true)
			if err != nil {
				return nil, nil, err
			}
			pubS, err := o.Str("public_key", true)
			if err != nil {
				return nil, nil, err
			}
			pub, err := sig.PublicKey(pubS)
			if err != nil {
				return nil, nil, cerr.In(o.Path+".public_key", err)
			}
			pinned = append(pinned, guard.PinnedKey{ID: kid, Public: pub})
		}
	}
	if dir == nil && len(pinned) == 0 {
		return nil, nil, cerr.New(cerr.BadRequest, "request.key_directory or request.pinned_keys is required: without keys no receipt can be trusted")
	}
	return dir, pinned, nil
}

func seenNonces(r req.Obj) ([]guard.Nonce, error) {
	if !r.Has("seen_nonces") {
		return nil, nil
	}
	v := r.Value("seen_nonces")
	if v.Kind() != canon.Array {
		return nil, cerr.New(cerr.BadRequest, "request.seen_nonces must be an array of {nonce, expires_at}")
	}
	out := make([]guard.Nonce, len(v.Elems()))
	for i, e := range v.Elems() {
		o := req.Obj{V: e, Path: "request.seen_nonces[" + canon.Int(int64(i)).String() + "]"}
		if e.Kind() != canon.Object {
			return nil, cerr.New(cerr.BadRequest, "%s must be an object", o.Path)
		}
		if err := o.Only("nonce", "expires_at"); err != nil {
			return nil, err
		}
		var err error
		if out[i].Nonce, err = o.Str("nonce", true); err != nil {
			return nil, err
		}
		if out[i].ExpiresAt, err = o.Time("expires_at"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readReceipt reads request.receipt, which must be a receipt.
func readReceipt(r req.Obj) (*guard.Receipt, error) {
	doc, ok, err := r.Doc("receipt")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, cerr.New(cerr.BadRequest, "request.receipt is required")
	}
	rc, err := guard.Read(doc)
	if err != nil {
		return nil, cerr.New(cerr.CodeOf(err), "request.%s", cerr.Message(err))
	}
	return rc, nil
}

func opReplayDecision(r req.Obj) (canon.Value, error) {
	if err := r.Only("receipt", "lock"); err != nil {
		return canon.Value{}, err
	}
	rc, err := readReceipt(r)
	if err != nil {
		return canon.Value{}, err
	}
	lockDoc, digest, err := lockAndDigest(r, "lock")
	if err != nil {
		return canon.Value{}, err
	}
	if !rc.Inputs.Has("lock") {
		switch {
		case digest == "":
			return canon.Value{}, cerr.New(cerr.BadRequest, "request.lock is required: the receipt's inputs name the lockfile only by its digest %s", rc.LockSHA256)
		case digest != rc.LockSHA256:
			return canon.Value{}, cerr.New(cerr.BadRequest, "request.lock has content digest %s; the receipt was computed from %s", digest, rc.LockSHA256)
		}
	}
	rep := guard.ReplayReceipt(rc, lockDoc, runnerAt("receipt.inputs"))
	errV := canon.NullValue()
	if rep.Err != nil {
		errV = canon.Obj(
			canon.M("code", canon.Str(string(cerr.CodeOf(rep.Err)))),
			canon.M("message", canon.Str(cerr.Message(rep.Err))),
		)
	}
	return canon.Obj(
		canon.M("kind", canon.Str(rc.Kind)),
		canon.M("operation", canon.Str(rc.Operation)),
		canon.M("receipt_sha256", canon.Str(rc.SHA256)),
		canon.M("decision", canon.Str(rc.Decision)),
		canon.M("replayed_decision", canon.StrOrNull(rep.Decision, rep.Decision != "")),
		canon.M("reproducible", canon.BoolOf(rep.Reproducible)),
		canon.M("reason", canon.StrOrNull(rep.Reason, rep.Reason != "")),
		canon.M("differs", canon.Strs(nonNil(rep.Differs))),
		canon.M("same_rules", canon.BoolOf(rep.SameRules)),
		canon.M("receipt_rules_sha256", canon.Str(rc.RulesSHA256)),
		canon.M("rules_sha256", canon.Str(policy.RulesSHA256())),
		canon.M("replayed", rep.Result),
		canon.M("error", errV),
	), nil
}

func opSignReceipt(r req.Obj) (canon.Value, error) {
	if err := r.Only("kind", "private_key", "key_id", "issuer", "issued_at", "expires_at", "nonce", "subject", "inputs", "carry_lock"); err != nil {
		return canon.Value{}, err
	}
	kind, err := r.OneOf("kind", guard.KindLockCheck, guard.KindLockCheck, guard.KindDecision)
	if err != nil {
		return canon.Value{}, err
	}
	priv, kid, err := signingKey(r)
	if err != nil {
		return canon.Value{}, err
	}
	var env guard.Envelope
	for _, f := range []struct {
		name string
		dst  *string
	}{{"issuer", &env.Issuer}, {"nonce", &env.Nonce}, {"subject", &env.Subject}} {
		if *f.dst, err = r.Str(f.name, true); err != nil {
			return canon.Value{}, err
		}
	}
	if env.IssuedAt, err = r.Time("issued_at"); err != nil {
		return canon.Value{}, err
	}
	if env.ExpiresAt, err = r.Time("expires_at"); err != nil {
		return canon.Value{}, err
	}
	if env.ExpiresAt.Before(env.IssuedAt) {
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.expires_at %s is before issued_at %s", timefmt.Format(env.ExpiresAt), timefmt.Format(env.IssuedAt))
	}
	_, op, _ := guard.OperationOf(kind)
	inputs, ok, err := r.Verbatim("inputs")
	if err != nil {
		return canon.Value{}, err
	}
	if !ok {
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.inputs is required: the %s request the receipt answers", op)
	}
	_, digest, err := lockAndDigest(inputs, "lock")
	if err != nil {
		return canon.Value{}, err
	}
	if digest == "" {
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.inputs.lock is required: a receipt names the lockfile it was computed from")
	}
	carry, err := r.Bool("carry_lock")
	if err != nil {
		return canon.Value{}, err
	}
	result, err := runnerAt("request.inputs")(op, inputs.V)
	if err != nil {
		return canon.Value{}, err
	}
	kept := inputs.V
	if !carry {
		kept = kept.Without("lock")
	}
	kept = canon.Obj(append(kept.Members(), canon.M("lock_sha256", canon.Str(digest)))...)
	var doc canon.Value
	if kind == guard.KindLockCheck {
		doc = guard.LockCheck(env, result, kept)
	} else {
		doc = guard.Decision(env, result, kept)
	}
	doc = guard.Seal(doc, priv, kid)
	sha, _ := doc.Get("sha256")
	return canon.Obj(
		canon.M("receipt", doc),
		canon.M("sha256", sha),
		canon.M("key_id", canon.Str(kid)),
	), nil
}
