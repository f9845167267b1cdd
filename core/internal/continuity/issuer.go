package continuity

import (
	"strconv"

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

// Issuer faults: why an issuer gave no answer to judge, as the host hands
// it (the issuer member's fault), so that a down or broken issuer gives the
// same record bytes in every language: the core words each (issue 18),
// where each host had worded its own error text.
const (
	// IssuerConnectRefused: the connection was refused or could not be made.
	IssuerConnectRefused = "connect_refused"
	// IssuerTimeout: the consultation's deadline passed first (timeout_ms,
	// when the host gives it, is the deadline).
	IssuerTimeout = "timeout"
	// IssuerSessionEnded: the connection closed before the answer was read
	// whole.
	IssuerSessionEnded = "session_ended"
	// IssuerHTTPStatus: the issuer answered with a status other than 200
	// (status), a redirect included: redirects are not followed.
	IssuerHTTPStatus = "http_status"
	// IssuerAnswerTooLarge: the answer was longer than the hosts read of an
	// issuer (IssuerAnswerBytes).
	IssuerAnswerTooLarge = "answer_too_large"
	// IssuerResponseMalformed: a 200 answer that is not a JSON object.
	IssuerResponseMalformed = "response_malformed"
	// IssuerKeysInvalid: a key directory it served that the core cannot
	// read (guard's or continuity_check's issuer_keys_invalid).
	IssuerKeysInvalid = "keys_invalid"
)

// IssuerFaults are the faults an issuer member may name.
var IssuerFaults = []string{IssuerConnectRefused, IssuerTimeout, IssuerSessionEnded, IssuerHTTPStatus,
	IssuerAnswerTooLarge, IssuerResponseMalformed, IssuerKeysInvalid}

// IssuerAnswerBytes is the most a host reads of one issuer answer: half
// the request cap, as guard judges the answer beside the lockfile and the
// rest in one request.
const IssuerAnswerBytes = MaxPagesBytes / 2

// issuerWords words an issuer fault: what the record's service_unavailable
// detail says as its error.
func issuerWords(fault string, status, timeoutMS int) string {
	switch fault {
	case IssuerConnectRefused:
		return "the issuer could not be reached (the connection was refused or could not be made)"
	case IssuerTimeout:
		if timeoutMS > 0 {
			return "no answer within " + duration(timeoutMS)
		}
		return "no answer before the consultation's deadline"
	case IssuerSessionEnded:
		return "the connection closed before the answer was read"
	case IssuerHTTPStatus:
		if status >= 300 && status < 400 {
			return "the issuer answered HTTP " + strconv.Itoa(status) + ", a redirect, which is not followed"
		}
		return "the issuer answered HTTP " + strconv.Itoa(status) + ", not 200"
	case IssuerAnswerTooLarge:
		return "the answer exceeds " + strconv.Itoa(IssuerAnswerBytes) + " bytes"
	case IssuerResponseMalformed:
		return "the answer is not a JSON object"
	default: // IssuerKeysInvalid
		return "the key directory it served is not one the core can read"
	}
}

// IssuerTrace reads the request's "issuer" member — {url, guard} when the
// issuer answered (guard: the core's guard answer on its receipt, as the
// guard op gave it), {url, step, fault, status?, timeout_ms?} when it gave
// none (the step that failed and the fault, IssuerFaults), or the older
// {url, unavailable} — into what the record keeps: the receipt relied on,
// by kind, sha256, key and issuer, and the guard's evidence level and
// result. An issuer that agreed adds no observation, so without this the
// record could not show it was asked at all.
//
// {url, step, fault} also gives the evidence it implies, so that no host
// words it: service_unavailable, whose detail names the issuer, the
// operation, the step and the error in the core's words, and that the
// local comparison is the fallback.
func IssuerTrace(o req.Obj) (trace canon.Value, evidence []policy.Finding, err error) {
	if o.Has("error") {
		return canon.Value{}, nil, cerr.New(cerr.BadRequest, "%s.error is not taken: give fault (%v), which the core words", o.Path, IssuerFaults)
	}
	if err := o.Only("url", "guard", "unavailable", "step", "fault", "status", "timeout_ms"); err != nil {
		return canon.Value{}, nil, err
	}
	r := o.Read()
	url := r.Str("url", true)
	unavailable := r.Str("unavailable", false)
	step := r.OneOf("step", "", IssuerSteps...)
	fault := r.OneOf("fault", "", IssuerFaults...)
	status, timeoutMS := wholeNumber(r, "status"), wholeNumber(r, "timeout_ms")
	if err := r.Err(); err != nil {
		return canon.Value{}, nil, err
	}
	switch {
	case (step == "") != (fault == ""):
		return canon.Value{}, nil, cerr.New(cerr.BadRequest, "%s: step and fault go together: which step of asking the issuer failed, and how", o.Path)
	case step != "" && unavailable != "":
		return canon.Value{}, nil, cerr.New(cerr.BadRequest, "%s: give step and fault, or unavailable, not both", o.Path)
	case fault == IssuerHTTPStatus && (status < 100 || status > 599 || status == 200):
		return canon.Value{}, nil, cerr.New(cerr.BadRequest, "%s.status: http_status needs the HTTP status the issuer answered, 100 to 599 and not 200", o.Path)
	case fault != IssuerHTTPStatus && o.Has("status"):
		return canon.Value{}, nil, cerr.New(cerr.BadRequest, "%s.status goes with the fault http_status only", o.Path)
	case fault != IssuerTimeout && o.Has("timeout_ms"):
		return canon.Value{}, nil, cerr.New(cerr.BadRequest, "%s.timeout_ms goes with the fault timeout only", o.Path)
	case step != "":
		text := issuerWords(fault, status, timeoutMS)
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

// wholeNumber reads an optional member that is a whole number of at least
// 1; 0 when it is absent.
func wholeNumber(r *req.Reader, name string) int {
	if !r.Has(name) || r.Failed() {
		return 0
	}
	text, ok := r.Value(name).NumberText()
	n, err := strconv.Atoi(text)
	if !ok || err != nil || n < 1 {
		r.Fail(cerr.New(cerr.BadRequest, "%s must be a whole number of at least 1", r.Field(name)))
		return 0
	}
	return n
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
