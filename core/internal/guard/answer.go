package guard

import (
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/policy"
	"github.com/crawlcheck/verifier/core/timefmt"
)

// AnswerKind is the kind of a guard answer.
const AnswerKind = "crawlcheck-guard-answer"

// Level names of evidence_level: the highest of A, B and C reached with
// every level below it.
func (a *Answer) level() string {
	switch {
	case !a.A.Reached:
		return "none"
	case !a.B.Reached:
		return "A"
	case !a.C.Reached:
		return "B"
	}
	return "C"
}

// Value renders the answer (docs/receipts.md).
func (a *Answer) Value() canon.Value {
	optStr := func(s string) canon.Value { return canon.StrOrNull(s, s != "") }
	ms := []canon.Member{
		canon.M("kind", canon.Str(AnswerKind)),
		canon.M("v", canon.Int(1)),
		canon.M("receipt", a.receiptValue()),
		canon.M("unreadable", optStr(a.Unreadable)),
	}
	reasons := make([]canon.Member, len(Questions))
	for i, q := range Questions {
		ms = append(ms, canon.M(q, canon.BoolOf(a.Holds[q])))
		reasons[i] = canon.M(q, optStr(a.Reasons[q]))
	}
	level := func(l Level) canon.Value {
		return canon.Obj(canon.M("reached", canon.BoolOf(l.Reached)), canon.M("reason", optStr(l.Reason)))
	}
	evidence := make([]canon.Value, len(a.Findings))
	for i, f := range a.Findings {
		evidence[i] = canon.Obj(canon.M("observation", canon.Str(string(f.Observation))), canon.M("detail", f.Detail))
	}
	nonces := make([]canon.Value, len(a.Nonces))
	for i, n := range a.Nonces {
		nonces[i] = canon.Obj(canon.M("nonce", canon.Str(n.Nonce)), canon.M("expires_at", canon.Str(timefmt.Format(n.ExpiresAt))))
	}
	receiptAuthority := canon.NullValue()
	if a.Receipt != nil {
		receiptAuthority = a.Receipt.Authority
	}
	return canon.Obj(append(ms,
		canon.M("reasons", canon.Obj(reasons...)),
		canon.M("policy_source", canon.Str(a.policy.Source)),
		canon.M("evidence_level", canon.Str(a.level())),
		canon.M("evidence_assurance", canon.Obj(
			canon.M("A", level(a.A)),
			canon.M("B", level(a.B)),
			canon.M("C", level(a.C)),
		)),
		canon.M("policy_result", canon.Str(a.Result)),
		canon.M("effect", canon.Str(a.Effect.String())),
		canon.M("authority", canon.Obj(
			canon.M("decided_by", canon.Str("deployment_policy")),
			canon.M("policy_sha256", canon.Str(a.policy.SHA256)),
			canon.M("policy_version", canon.Str(a.policy.Version)),
			canon.M("receipt_authority", receiptAuthority),
		)),
		canon.M("observations", canon.Arr(evidence...)),
		canon.M("seen_nonces", canon.Arr(nonces...)),
		canon.M("engine", canon.Obj(
			canon.M("version", canon.Str(policy.EngineVersion)),
			canon.M("rules_sha256", canon.Str(policy.RulesSHA256())),
		)),
	)...)
}

func (a *Answer) receiptValue() canon.Value {
	r := a.Receipt
	if r == nil {
		return canon.NullValue()
	}
	return canon.Obj(
		canon.M("kind", canon.Str(r.Kind)),
		canon.M("sha256", canon.Str(r.SHA256)),
		canon.M("key_id", canon.Str(r.KeyID)),
		canon.M("issuer", canon.Str(r.Issuer)),
		canon.M("subject", canon.Str(r.Subject)),
		canon.M("operation", canon.Str(r.Operation)),
		canon.M("nonce", canon.Str(r.Nonce)),
		canon.M("issued_at", canon.Str(timefmt.Format(r.IssuedAt))),
		canon.M("expires_at", canon.Str(timefmt.Format(r.ExpiresAt))),
		canon.M("decision", canon.Str(r.Decision)),
		canon.M("tools_sha256", canon.StrOrNull(r.ToolsSHA256, r.ToolsSHA256 != "")),
		canon.M("rules_sha256", canon.Str(r.RulesSHA256)),
	)
}
