package continuity

import (
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/policy"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

// OperationLockCheck is the operation the service path asks an issuer for.
const OperationLockCheck = "mcp.lock.check"

// IssuerSteps are the steps of asking an issuer that can fail (the
// issuer member's step): fetching its key directory, and asking it for
// the lock check.
var IssuerSteps = []string{"key_directory", "lock_check"}

// IssuerTrace reads the request's "issuer" member — {url, guard} when the
// issuer answered (guard: the core's guard answer on its receipt, as the
// guard op gave it), {url, step, error} when it could not be asked (the
// step that failed and the host's text of what failed), or the older
// {url, unavailable} — into what the record keeps: the receipt relied on,
// by kind, sha256, key and issuer, and the guard's evidence level and
// result. An issuer that agreed adds no observation, so without this the
// record could not show it was asked at all.
//
// {url, step, error} also gives the evidence it implies, so that no host
// words it: service_unavailable, whose detail names the issuer, the
// operation, the step and the error, and that the local comparison is the
// fallback.
func IssuerTrace(o req.Obj) (trace canon.Value, evidence []policy.Finding, err error) {
	if err := o.Only("url", "guard", "unavailable", "step", "error"); err != nil {
		return canon.Value{}, nil, err
	}
	r := o.Read()
	url := r.Str("url", true)
	unavailable := r.Str("unavailable", false)
	step := r.OneOf("step", "", IssuerSteps...)
	text := r.Str("error", false)
	if err := r.Err(); err != nil {
		return canon.Value{}, nil, err
	}
	switch {
	case step == "" && o.Has("error"):
		return canon.Value{}, nil, cerr.New(cerr.BadRequest, "%s.error needs step: which step of asking the issuer failed", o.Path)
	case step != "" && unavailable != "":
		return canon.Value{}, nil, cerr.New(cerr.BadRequest, "%s: give step and error, or unavailable, not both", o.Path)
	case step != "":
		unavailable = step + ": " + text
		evidence = []policy.Finding{{Observation: policy.ServiceUnavailable, Detail: canon.Obj(
			canon.M("issuer", canon.Str(url)),
			canon.M("operation", canon.Str(OperationLockCheck)),
			canon.M("step", canon.Str(step)),
			canon.M("error", canon.Str(text)),
			canon.M("fallback", canon.Str("local_comparison")),
		)}}
	}
	receipt, level, result := canon.NullValue(), canon.NullValue(), canon.NullValue()
	switch g, hasGuard := o.Value("guard"), o.Has("guard"); {
	case hasGuard == (unavailable != ""):
		return canon.Value{}, nil, cerr.New(cerr.BadRequest, "%s needs exactly one of guard (the issuer answered) and unavailable (it could not be asked)", o.Path)
	case hasGuard:
		if receipt, level, result, err = guardSummary(g); err != nil {
			return canon.Value{}, nil, cerr.In(o.Path+".guard", err)
		}
	}
	return canon.Obj(
		canon.M("url", canon.Str(url)),
		canon.M("receipt", receipt),
		canon.M("evidence_level", level),
		canon.M("policy_result", result),
		canon.M("unavailable", canon.StrOrNull(unavailable, unavailable != "")),
	), evidence, nil
}

// guardSummary takes from a guard answer the receipt's identity, the
// evidence level and the result.
func guardSummary(g canon.Value) (receipt, level, result canon.Value, err error) {
	bad := cerr.New(cerr.BadRequest, "is not a guard answer (receipt, evidence_level and policy_result expected)")
	lv, _ := g.Get("evidence_level")
	rv, _ := g.Get("policy_result")
	l, ok1 := lv.Str()
	r, ok2 := rv.Str()
	if g.Kind() != canon.Object || !ok1 || !ok2 || !oneOf(l, "none", "A", "B", "C") || !oneOf(r, "proceed", "pause", "deny") {
		return receipt, level, result, bad
	}
	receipt = canon.NullValue()
	if rc, _ := g.Get("receipt"); !rc.IsNull() {
		field := func(k string) (string, bool) { v, _ := rc.Get(k); return v.Str() }
		kind, ok1 := field("kind")
		sha, ok2 := field("sha256")
		kid, ok3 := field("key_id")
		iss, ok4 := field("issuer")
		if rc.Kind() != canon.Object || !(ok1 && ok2 && ok3 && ok4) || !tools.IsHexHash(sha) {
			return receipt, level, result, bad
		}
		receipt = canon.Obj(canon.M("kind", canon.Str(kind)), canon.M("sha256", canon.Str(sha)),
			canon.M("key_id", canon.Str(kid)), canon.M("issuer", canon.Str(iss)))
	}
	return receipt, canon.Str(l), canon.Str(r), nil
}

func oneOf(s string, allowed ...string) bool {
	for _, a := range allowed {
		if s == a {
			return true
		}
	}
	return false
}
