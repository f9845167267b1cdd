// Package continuity is the continuity check of spec "Tool-interface
// continuity": it compares the tools a server offers now with the approved
// baseline, applies the operator's policy in a mode, and writes the
// crawlcheck-continuity-record that says what was compared and decided.
//
// The check decides from facts the binding hands it (docs/continuity.md): the
// raw tools/list pages, the endpoint that answered, whether the binding
// reached its page cap, or whether it could not connect or ran out of time.
// Everything else — parsing, hashing, truncation, identity, trust, age,
// effects — is decided here, so every language decides alike. No failure
// becomes a pass: each is an observation the policy turns into an effect.
package continuity

import (
	"strconv"
	"time"

	"github.com/crawlcheck/verifier/core/canon"
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/diff"
	"github.com/crawlcheck/verifier/core/internal/endpoint"
	"github.com/crawlcheck/verifier/core/internal/lock"
	"github.com/crawlcheck/verifier/core/internal/policy"
	"github.com/crawlcheck/verifier/core/internal/sig"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

// Failures a binding reports instead of pages.
const (
	FailureUnavailable = "server_unavailable"
	FailureTimeout     = "check_timeout"
	// FailureCapture is the capture's own failure: the host's MCP SDK
	// answered without a tools/list read on the wire (its list cache), so
	// nothing live was read. The core records it as FailureUnavailable
	// (HostFailure): the class that means "nothing was compared", which
	// pauses under every policy that pauses on an unreachable server.
	FailureCapture = "capture_failed"
	// FailureTooLarge is a frame the server sent past the host's answer
	// limit: the host cut it off unread and broke the session there. Its
	// detail is the limit in bytes (a decimal integer); the core words the
	// recorded detail, so every host records the same bytes for the same
	// fact.
	FailureTooLarge = "answer_too_large"
)

// HostFailures are the failures a host may report (observed.failure,
// lock_check's failure).
var HostFailures = []string{FailureUnavailable, FailureTimeout, FailureCapture, FailureTooLarge}

// HostFailure maps a host's failure and detail to what a record and a
// lock_check answer carry: capture_failed becomes server_unavailable with
// the capture's class leading its detail; answer_too_large becomes
// server_unavailable worded from its limit (a detail that is not a positive
// decimal byte count is refused); the others stay as they are.
func HostFailure(failure, detail string) (string, string, error) {
	switch failure {
	case FailureCapture:
		return FailureUnavailable, FailureCapture + ": " + detail, nil
	case FailureTooLarge:
		n, err := strconv.ParseUint(detail, 10, 63)
		if err != nil || n == 0 || strconv.FormatUint(n, 10) != detail {
			return "", "", cerr.New(cerr.BadRequest, "failure_detail of %s is the answer limit in bytes, a positive decimal integer; got %q", FailureTooLarge, detail)
		}
		return FailureUnavailable, "the server sent an answer of more than " + detail + " bytes: not read further", nil
	}
	return failure, detail, nil
}

// Observed is what the binding saw of the server.
type Observed struct {
	Endpoint        string      // "" when the check is over a file, not a live server
	ProtocolVersion string      // "" when unknown
	ServerInfo      canon.Value // null when unknown
	Handshake       string      // "initialize", "server/discover" or ""
	Pages           []string
	PageCapReached  bool
	Failure         string // "", FailureUnavailable or FailureTimeout
	FailureDetail   string
}

// Input is everything one check needs.
type Input struct {
	Now                   time.Time
	Mode                  string
	Lock                  lock.File
	ServerName            string // agentgate: the server entry to compare against
	Observed              Observed
	Policy                *policy.Policy
	ExpectedPolicyVersion string
	Keys                  sig.Keys
	RequireSigned         *bool            // overrides the policy's require_signed_baseline
	Evidence              []policy.Finding // observations from signed evidence (guard)
	Issuer                canon.Value      // what the issuer asked said (IssuerTrace); null when none was asked
	PrevRecordSHA256      string
	Refreshed             bool
}

// Trust is the baseline's verification.
type Trust struct {
	sig.Result
	Parts  string // "signed", "unsigned", "absent", "ignored", "not_applicable"
	Digest string // the lockfile's content digest
}

// VerifyBaseline checks a lockfile's signature and says which per-part
// hashes may be used. Parts added to a signed lockfile after signing are set
// aside ("ignored") when the rest still verifies.
func VerifyBaseline(f lock.File, keys sig.Keys, requireSigned bool, now time.Time) Trust {
	if f.Agentgate != nil {
		t := Trust{Result: sig.Result{Trust: sig.Unsigned}, Parts: "not_applicable", Digest: LockDigest(f)}
		return refuseUnsigned(t, requireSigned)
	}
	l := f.Crawlcheck
	content, withoutParts := l.Digests()
	t := Trust{Digest: content, Result: sig.Verify(lock.Kind, l.SHA256, content, l.Signature, keys, now)}
	if t.Reason == sig.ReasonEdited && withoutParts != "" {
		if r := sig.Verify(lock.Kind, l.SHA256, withoutParts, l.Signature, keys, now); r.Trust != sig.Untrusted {
			t.Result, t.Parts = r, "ignored"
			return t
		}
	}
	switch {
	case l.Parts == nil:
		t.Parts = "absent"
	case t.Trust == sig.Verified || t.Trust == sig.OperatorSigned:
		t.Parts = "signed"
	default:
		t.Parts = "unsigned"
	}
	return refuseUnsigned(t, requireSigned)
}

func refuseUnsigned(t Trust, requireSigned bool) Trust {
	if requireSigned && t.Trust == sig.Unsigned {
		t.Trust, t.Reason = sig.Untrusted, sig.ReasonUnsignedRefused
	}
	return t
}

// LockDigest is the content digest a record's baseline.sha256 names: the
// SHA-256 of a crawlcheck lockfile's content (docs/lockfile), or of the
// canonical JSON of an agentgate.lock.
func LockDigest(f lock.File) string {
	if f.Agentgate != nil {
		v, _ := canon.Parse(f.Agentgate.Bytes())
		return canon.SHA256Hex(v)
	}
	content, _ := f.Crawlcheck.Digests()
	return content
}

// Run performs the check and returns the record.
func Run(in Input) (canon.Value, error) {
	requireSigned := len(in.Keys.Operator) > 0
	if in.Policy.RequireSignedBaseline != nil {
		requireSigned = *in.Policy.RequireSignedBaseline
	}
	if in.RequireSigned != nil {
		requireSigned = *in.RequireSigned
	}
	trust := VerifyBaseline(in.Lock, in.Keys, requireSigned, in.Now)
	var base lock.Baseline
	if in.Lock.Agentgate != nil {
		var err error
		if base, err = in.Lock.Agentgate.Baseline(in.ServerName); err != nil {
			return canon.Value{}, err
		}
	} else {
		base = in.Lock.Crawlcheck.Baseline(trust.Parts != "ignored")
	}

	c := &check{in: in, base: base, trust: trust}
	c.judgeBaseline()
	c.judgeServer()
	c.compare()
	c.findings = append(c.findings, in.Evidence...)
	sortFindings(c.findings)

	offered := make([]string, len(c.observed.Tools))
	for i, t := range c.observed.Tools {
		offered[i] = t.Name
	}
	d := policy.Decide(in.Policy, in.Mode, c.findings, offered, in.Now, in.Refreshed)
	return c.record(d), nil
}

type check struct {
	in       Input
	base     lock.Baseline
	trust    Trust
	findings []policy.Finding

	observed     tools.Observed
	listRead     bool // the pages parsed: observed.Tools is what the server offered
	malformed    error
	identity     string
	comparedDiff *diff.Result
}

func (c *check) add(o policy.Observation, tool, part, toolSHA string, detail canon.Value) {
	c.findings = append(c.findings, policy.Finding{Observation: o, Tool: tool, Part: part, ToolSHA256: toolSHA, Detail: detail})
}

func (c *check) judgeBaseline() {
	if c.trust.Trust == sig.Untrusted {
		c.add(policy.BaselineUntrusted, "", "", "", canon.Obj(
			canon.M("reason", canon.Str(c.trust.Reason)),
			canon.M("key_id", canon.Str(c.trust.KeyID)),
		))
	}
	age := c.in.Now.Sub(c.base.ApprovedAt)
	if age > c.in.Policy.MaxBaselineAge {
		c.add(policy.BaselineStale, "", "", "", canon.Obj(
			canon.M("age_s", canon.Int(int64(age/time.Second))),
			canon.M("max_age_s", canon.Int(int64(c.in.Policy.MaxBaselineAge/time.Second))),
		))
	}
	if c.in.ExpectedPolicyVersion != "" && c.in.ExpectedPolicyVersion != c.in.Policy.Version {
		c.add(policy.PolicyVersionMismatch, "", "", "", canon.Obj(
			canon.M("expected", canon.Str(c.in.ExpectedPolicyVersion)),
			canon.M("in_force", canon.Str(c.in.Policy.Version)),
		))
	}
}

// Identity results.
const (
	IdentityMatch       = "match"
	IdentityMismatch    = "mismatch"
	IdentityNotPinned   = "not_pinned"   // the baseline names no endpoint
	IdentityNotObserved = "not_observed" // the check was not over a live server
)

func (c *check) judgeServer() {
	obs := c.in.Observed.Endpoint
	switch {
	case c.base.URL == "":
		c.identity = IdentityNotPinned
	case obs == "":
		c.identity = IdentityNotObserved
	case endpoint.Same(c.base.URL, obs):
		c.identity = IdentityMatch
	default:
		c.identity = IdentityMismatch
		c.add(policy.ServerIdentityMismatch, "", "", "", canon.Obj(
			canon.M("approved", canon.Str(c.base.URL)),
			canon.M("observed", canon.Str(obs)),
		))
	}
}

func (c *check) compare() {
	o := c.in.Observed
	switch o.Failure {
	case FailureUnavailable:
		c.add(policy.ServerUnavailable, "", "", "", canon.Obj(canon.M("detail", canon.Str(o.FailureDetail))))
		return
	case FailureTimeout:
		c.add(policy.CheckTimeout, "", "", "", canon.Obj(canon.M("detail", canon.Str(o.FailureDetail))))
		return
	}
	obs, err := tools.FromPages(o.Pages, o.PageCapReached)
	c.observed = obs
	if err != nil {
		c.malformed = err
		c.observed.Tools = nil
		c.add(policy.ResponseMalformed, "", "", "", canon.Obj(
			canon.M("code", canon.Str(string(cerr.CodeOf(err)))),
			canon.M("error", canon.Str(cerr.Message(err))),
		))
		return
	}
	c.listRead = true
	if obs.Truncated != "" {
		c.add(policy.ToolListTruncated, "", "", "", canon.Obj(
			canon.M("reason", canon.Str(obs.Truncated)),
			canon.M("pages_read", canon.Int(int64(obs.Pages))),
		))
	}
	r := diff.Against(c.base, obs.Tools)
	c.comparedDiff = &r
	hashOf := map[string]string{}
	for _, t := range obs.Tools {
		hashOf[t.Name] = t.SHA256
	}
	for _, n := range r.Added {
		c.add(policy.ToolAdded, n, "", hashOf[n], canon.NullValue())
	}
	// Tools on pages that were not read are not "removed": a truncated list
	// cannot say what is missing (and pauses the session anyway).
	if obs.Truncated == "" {
		for _, n := range r.Removed {
			bt, _ := c.base.Lookup(n)
			c.add(policy.ToolRemoved, n, "", bt.SHA256, canon.NullValue())
		}
	}
	for _, m := range r.Modified {
		if m.Unknown {
			c.add(policy.ToolChanged, m.Name, "", m.ObservedSHA256, canon.NullValue())
			continue
		}
		for _, p := range m.Parts {
			switch p {
			case tools.PartDescription:
				detail := canon.NullValue()
				if m.DescriptionDiff != nil {
					detail = canon.Obj(canon.M("description_diff", diff.SegmentsValue(m.DescriptionDiff)))
				}
				c.add(policy.DescriptionChanged, m.Name, p, m.ObservedSHA256, detail)
			case tools.PartInputSchema:
				c.add(policy.SchemaChanged, m.Name, p, m.ObservedSHA256, canon.NullValue())
			case tools.PartAnnotations:
				c.add(policy.AnnotationsChanged, m.Name, p, m.ObservedSHA256, canon.NullValue())
			}
		}
	}
	if r.Same() && obs.Truncated == "" {
		c.add(policy.Unchanged, "", "", "", canon.NullValue())
	}
}
