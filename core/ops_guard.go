package core

import (
	"slices"
	"strings"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/continuity"
	"github.com/crawlcheck/verifier/core/internal/guard"
	"github.com/crawlcheck/verifier/core/internal/policy"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/sig"
	"github.com/crawlcheck/verifier/core/internal/tlog"
	"github.com/crawlcheck/verifier/core/internal/tools"
	"github.com/crawlcheck/verifier/core/timefmt"
)

// runnerAt runs the decision ops of the table on a request object whose
// messages name path: a receipt is computed, and replayed, by exactly the
// code of lock_check and continuity_check.
func runnerAt(path string) guard.Runner {
	return func(op string, request canon.Value) (canon.Value, error) {
		if request.Kind() != canon.Object {
			return canon.Value{}, cerr.New(cerr.BadRequest, "%s must be an object", path)
		}
		return run(op, ops[op], req.Obj{V: request, Path: path})
	}
}

// lockAndDigest reads a lockfile document field and its content digest
// ("" when absent).
func lockAndDigest(rd *req.Reader, field string) (canon.Value, string) {
	doc, ok := rd.Doc(field)
	if !ok || rd.Failed() {
		return doc, ""
	}
	d, err := guard.LockDigest(doc)
	rd.In(field, err)
	return doc, d
}

func opGuard(r req.Obj) (canon.Value, error) {
	if !r.Has("receipt") {
		return canon.Value{}, cerr.New(cerr.BadRequest, "%s is required", r.Read().Field("receipt"))
	}
	step, fault := issuerAnswerFault(r)
	if step == continuity.IssuerSteps[0] {
		// The directory is no answer: the pins alone are read, as the
		// check does without it (session.WithoutUnreadableDirectory).
		r = r.With(r.V.Without("fetched_key_directory"))
	}
	rd := r.Read()
	in := guard.Input{Run: runnerAt("receipt.inputs"), Policy: policy.Default()}
	// A receipt is what an issuer sent: bytes that are not JSON are an
	// answer (malformed_receipt), not an error of the request.
	in.Receipt = rd.Text("receipt")
	if s, ok := in.Receipt.Str(); ok && step == "" {
		var err error
		if in.Receipt, err = canon.ParseString(s); err != nil {
			in.Unreadable = cerr.In("receipt", err)
		}
	}
	if step != "" {
		in.Unreadable = cerr.New(cerr.BadRequest, "the issuer gave no answer to judge (%s: %s)", step, fault)
	}
	in.ExpectedSubject = rd.Str("expected_subject", true)
	// The operation a host asks an issuer for is the core's to name, so no
	// host keeps a copy of it: absent is the lock check.
	in.ExpectedOperation = rd.Str("expected_operation", false)
	if !rd.Has("expected_operation") {
		in.ExpectedOperation = guard.OpLockCheck
	}
	in.Now = rd.Time("now")
	in.Directory, in.Pinned = receiptKeys(rd)
	in.SeenNonces = seenNonces(rd)
	in.Lock, in.LockSHA256 = lockAndDigest(rd, "lock")
	if !rd.Failed() && in.LockSHA256 == "" {
		rd.Fail(cerr.New(cerr.BadRequest, "%s is required: the approved lockfile", rd.Field("lock")))
	}
	if doc, ok := rd.Doc("policy"); ok {
		p, err := policy.Parse(doc)
		if rd.In("policy", err) {
			in.Policy = p
		}
	}
	in.ObservedToolsSHA256 = rd.Str("observed_tools_sha256", false)
	if in.ObservedToolsSHA256 != "" && !tools.IsHexHash(in.ObservedToolsSHA256) {
		rd.Fail(cerr.New(cerr.BadRequest, "%s must be 64 lowercase hex digits", rd.Field("observed_tools_sha256")))
	}
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	a := guard.Check(in)
	v := a.Value()
	if step != "" {
		// An answer that is no answer: the host's issuer member names this
		// step and fault (continuity_check's issuer), and relies on none of
		// the rest.
		v = canon.Obj(append(v.Members(), canon.M("issuer_fault", canon.Obj(
			canon.M("step", canon.Str(step)), canon.M("fault", canon.Str(fault)))))...)
	}
	return v, nil
}

// issuerAnswerFault is the fault of an issuer's answers that gives guard
// nothing to judge, as the issuer member's step and fault ("" when they
// can be judged), in the order a host asks: the key directory it fetched
// (fetched_key_directory) that is not a JSON object (response_malformed)
// or that the core cannot read (keys_invalid), then the lock check's
// answer (receipt) that is not a JSON object. Each host had checked the
// first and last itself, after each request; the core says it once.
func issuerAnswerFault(r req.Obj) (step, fault string) {
	if r.Has("fetched_key_directory") {
		if !isJSONObject(r, "fetched_key_directory") {
			return continuity.IssuerSteps[0], continuity.IssuerResponseMalformed
		}
		kr := r.Read()
		if issuerKeys(kr); kr.Failed() && cerr.CodeOf(kr.Err()) == cerr.IssuerKeysInvalid {
			return continuity.IssuerSteps[0], continuity.IssuerKeysInvalid
		}
	}
	if !isJSONObject(r, "receipt") {
		return continuity.IssuerSteps[1], continuity.IssuerResponseMalformed
	}
	return "", ""
}

// isJSONObject reports whether a document field given as an issuer sent
// it is a UTF-8 JSON object: its text is JSON syntax in UTF-8 whose value
// is an object. The core's stricter refusals (a duplicate key, a lone
// surrogate, depth, a number out of range) still leave a JSON object,
// which is an answer to judge (guard's malformed_receipt), as every host's
// own JSON reader had taken it. A field given as a JSON value is judged by
// its kind; one the request cannot resolve is left to the op's own read.
func isJSONObject(r req.Obj, name string) bool {
	text, ok, err := r.DocText(name)
	switch {
	case err != nil:
		return true
	case !ok:
		return r.Value(name).Kind() == canon.Object
	}
	if _, err := canon.ParseString(text); err != nil {
		switch cerr.CodeOf(err) {
		case cerr.JSONSyntax, cerr.JSONInvalidUTF8, cerr.InputTooLarge:
			return false
		}
	}
	return strings.HasPrefix(strings.TrimLeft(text, " \t\r\n"), "{")
}

// receiptKeys reads the keys a receipt may be signed with: the issuer's
// key directory and the keys the deployment pinned (issuerKeys). At least
// one is needed: with neither, no receipt could ever be trusted, which is a
// configuration mistake, not an answer.
func receiptKeys(rd *req.Reader) (*sig.Directory, []guard.PinnedKey) {
	dir, pinned := issuerKeys(rd)
	if !rd.Failed() && dir == nil && len(pinned) == 0 {
		rd.Fail(cerr.New(cerr.BadRequest, "%s or %s is required: without keys no receipt can be trusted", rd.Field("key_directory"), rd.Field("pinned_keys")))
	}
	return dir, pinned
}

// issuerKeys reads the issuer's keys a request names: key_directory (the
// operator's copy, trusted as it is), pinned_keys, and
// fetched_key_directory (the directory as the host fetched it from the
// issuer, which counts only for the pinned keys: pinnedOnly). guard judges
// a receipt, and continuity_check a baseline, by this one rule.
func issuerKeys(rd *req.Reader) (*sig.Directory, []guard.PinnedKey) {
	var dir *sig.Directory
	if doc, ok := rd.Doc("key_directory"); ok {
		d, err := sig.ParseDirectory(doc)
		if !rd.In("key_directory", err) {
			return nil, nil
		}
		dir = d
	}
	var pinned []guard.PinnedKey
	var pins [][2]string // kid, public_key as given
	rd.Objects("pinned_keys", "{kid, public_key}", names(pinnedKeyFields), func(_ int, o *req.Reader) {
		kid := o.Str("kid", true)
		pubS := o.Str("public_key", true)
		if o.Failed() {
			return
		}
		pub, err := sig.PublicKey(pubS)
		if o.In("public_key", err) {
			pinned = append(pinned, guard.PinnedKey{ID: kid, Public: pub})
			pins = append(pins, [2]string{kid, pubS})
		}
	})
	if rd.Has("fetched_key_directory") && !rd.Failed() {
		switch {
		case dir != nil:
			rd.Fail(cerr.New(cerr.BadRequest, "give either %s (the operator's copy) or %s, not both", rd.Field("key_directory"), rd.Field("fetched_key_directory")))
		case len(pins) == 0:
			rd.Fail(cerr.New(cerr.BadRequest, "%s needs %s: a fetched directory vouches only for keys the deployment pinned", rd.Field("fetched_key_directory"), rd.Field("pinned_keys")))
		default:
			var err error
			dir, err = pinnedOnly(rd.O, pins)
			rd.Fail(err)
		}
	}
	return dir, pinned
}

// baselineKeys are the issuer keys continuity_check verifies a lockfile
// by, under guard's rule (issuerKeys, guard.judgeKey): a key of the
// directory is judged by its status and window; a pinned key the
// directory does not hold vouches as pinned, since the pins alone decide
// what the directory does not say. So an issuer's live directory, fetched
// at each check, can retire a pinned key for the baseline as for a
// receipt, and vouch for no other key. Beside the operator's own copy of
// the directory (key_directory) the pins judge no baseline: that copy
// vouches for it, as without an issuer, and the pins (still read) serve
// guard alone. Each host had dropped its pins itself before the check.
func baselineKeys(rd *req.Reader) *sig.Directory {
	dir, pinned := issuerKeys(rd)
	if len(pinned) == 0 || rd.Has("key_directory") {
		return dir
	}
	out := &sig.Directory{}
	if dir != nil {
		*out = *dir
		// A copy by append: slices.Clone here added 49 KB to the wasm module.
		out.Keys = append([]sig.Key(nil), dir.Keys...)
	}
	for _, p := range pinned {
		if _, held := out.Lookup(p.ID); !held {
			out.Keys = append(out.Keys, sig.Key{ID: p.ID, Public: p.Public, Status: sig.StatusActive})
		}
	}
	return out
}

// pinnedOnly reads the key directory a host fetched from the issuer
// (request.fetched_key_directory) and keeps of it only the keys the
// deployment pinned (same kid, same public_key text), with its kind,
// version and issuer: so the issuer's own directory can retire a pinned
// key, bound its window or name the issuer, and vouch for nothing else.
// nil when it holds none of them: the pins alone decide then. A directory
// the core cannot read is the issuer's fault, not the deployment's: every
// such error is issuer_keys_invalid, which a host tells apart by its code
// and reports as the issuer's step key_directory (continuity_check's
// issuer.step).
func pinnedOnly(o req.Obj, pins [][2]string) (*sig.Directory, error) {
	const field = "fetched_key_directory"
	refused := func(err error) error {
		return cerr.New(cerr.IssuerKeysInvalid, "%s.%s: the issuer's key directory is refused: %s", o.Path, field, cerr.Message(err))
	}
	doc, _, err := o.Doc(field)
	if err != nil {
		return nil, refused(cerr.New(cerr.KeyInvalid, "%s", strings.TrimPrefix(cerr.Message(err), o.Path+"."+field+": ")))
	}
	keys, _ := doc.Get("keys")
	switch {
	case doc.Kind() != canon.Object:
		return nil, refused(cerr.New(cerr.KeyInvalid, "it is %s, not an object", doc.Kind()))
	case keys.Kind() != canon.Array:
		return nil, refused(cerr.New(cerr.KeyInvalid, "its keys are not an array"))
	}
	var kept []canon.Value
	for _, k := range keys.Elems() {
		kidV, _ := k.Get("kid")
		pubV, _ := k.Get("public_key")
		kid, ok1 := kidV.Str()
		pub, ok2 := pubV.Str()
		if k.Kind() == canon.Object && ok1 && ok2 && slices.Contains(pins, [2]string{kid, pub}) {
			kept = append(kept, k)
		}
	}
	if len(kept) == 0 {
		return nil, nil
	}
	d, err := sig.ParseDirectory(canon.Obj(append(doc.Without("keys").Members(), canon.M("keys", canon.Arr(kept...)))...))
	if err != nil {
		return nil, refused(err)
	}
	return d, nil
}

func seenNonces(rd *req.Reader) []guard.Nonce {
	var out []guard.Nonce
	rd.Objects("seen_nonces", "{nonce, expires_at}", names(seenNonceFields), func(_ int, o *req.Reader) {
		n := guard.Nonce{Nonce: o.Str("nonce", true), ExpiresAt: o.Time("expires_at")}
		out = append(out, n)
	})
	return out
}

// readReceipt reads request.receipt, which must be a receipt.
func readReceipt(rd *req.Reader) *guard.Receipt {
	doc := rd.RequiredDoc("receipt")
	if rd.Failed() {
		return nil
	}
	rc, err := guard.Read(doc)
	if err != nil {
		rd.Fail(cerr.New(cerr.CodeOf(err), "%s.%s", rd.O.Path, cerr.Message(err)))
	}
	return rc
}

func opReplayDecision(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	rc := readReceipt(rd)
	lockDoc, digest := lockAndDigest(rd, "lock")
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	if !rc.Inputs.Has("lock") {
		switch {
		case digest == "":
			return canon.Value{}, cerr.New(cerr.BadRequest, "%s is required: the receipt's inputs name the lockfile only by its digest %s", rd.Field("lock"), rc.LockSHA256)
		case digest != rc.LockSHA256:
			return canon.Value{}, cerr.New(cerr.BadRequest, "%s has content digest %s; the receipt was computed from %s", rd.Field("lock"), digest, rc.LockSHA256)
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
	rd := r.Read()
	kind := rd.OneOf("kind", guard.KindLockCheck, guard.KindLockCheck, guard.KindDecision)
	priv, kid := signingKey(rd)
	env := guard.Envelope{Issuer: rd.Str("issuer", true), Nonce: rd.Str("nonce", true), Subject: rd.Str("subject", true)}
	env.IssuedAt = rd.Time("issued_at")
	env.ExpiresAt = rd.Time("expires_at")
	if !rd.Failed() && env.ExpiresAt.Before(env.IssuedAt) {
		rd.Fail(cerr.New(cerr.BadRequest, "%s %s is before issued_at %s", rd.Field("expires_at"), timefmt.Format(env.ExpiresAt), timefmt.Format(env.IssuedAt)))
	}
	_, op, _ := guard.OperationOf(kind)
	inputs, ok := rd.Verbatim("inputs")
	if !rd.Failed() && !ok {
		rd.Fail(cerr.New(cerr.BadRequest, "%s is required: the %s request the receipt answers", rd.Field("inputs"), op))
	}
	ir := inputs.Read()
	digest := lockDigestShared(ir, "lock")
	if !rd.Failed() && !ir.Failed() && digest == "" {
		ir.Fail(cerr.New(cerr.BadRequest, "%s is required: a receipt names the lockfile it was computed from", ir.Field("lock")))
	}
	if !rd.Failed() {
		rd.Fail(ir.Err())
	}
	carry := rd.Bool("carry_lock")
	withEntry := rd.Bool("log_entry")
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	result, err := runnerAt(inputs.Path)(op, inputs.V)
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
	out := []canon.Member{
		canon.M("receipt", doc),
		canon.M("sha256", sha),
		canon.M("key_id", canon.Str(kid)),
	}
	if withEntry {
		// The receipt was sealed just now: its digest holds by construction,
		// the check log_entry makes of a document handed back.
		e, _ := tlog.Entry(doc)
		out = append(out, canon.M("log_entry", canon.Str(string(e))))
	}
	return canon.Obj(out...), nil
}
