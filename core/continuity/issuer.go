package continuity

import (
	"github.com/crawlcheck/verifier/core/canon"
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/req"
	"github.com/crawlcheck/verifier/core/tools"
)

// IssuerTrace reads the request's "issuer" member — {url, guard} when the
// issuer answered (guard: the core's guard answer on its receipt, as the
// guard op gave it), {url, unavailable} when it could not be asked — into
// what the record keeps: the receipt relied on, by kind, sha256, key and
// issuer, and the guard's evidence level and result. An issuer that agreed
// adds no observation, so without this the record could not show it was
// asked at all.
func IssuerTrace(o req.Obj) (canon.Value, error) {
	if err := o.Only("url", "guard", "unavailable"); err != nil {
		return canon.Value{}, err
	}
	url, err := o.Str("url", true)
	if err != nil {
		return canon.Value{}, err
	}
	unavailable, err := o.Str("unavailable", false)
	if err != nil {
		return canon.Value{}, err
	}
	receipt, level, result := canon.NullValue(), canon.NullValue(), canon.NullValue()
	switch g, hasGuard := o.Value("guard"), o.Has("guard"); {
	case hasGuard == (unavailable != ""):
		return canon.Value{}, cerr.New(cerr.BadRequest, "%s needs exactly one of guard (the issuer answered) and unavailable (it could not be asked)", o.Path)
	case hasGuard:
		if receipt, level, result, err = guardSummary(g); err != nil {
			return canon.Value{}, cerr.In(o.Path+".guard", err)
		}
	}
	return canon.Obj(
		canon.M("url", canon.Str(url)),
		canon.M("receipt", receipt),
		canon.M("evidence_level", level),
		canon.M("policy_result", result),
		canon.M("unavailable", canon.StrOrNull(unavailable, unavailable != "")),
	), nil
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
