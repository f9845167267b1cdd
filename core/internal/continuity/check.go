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
	"time"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/classify"
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
	// FailureCapture names the capture's own failures in a record's
	// detail: the host's MCP SDK answered without a tools/list read on the
	// wire (FaultListCached), or took an answer the capture did not see
	// (FaultNotCaptured), so nothing live was read. The core records them
	// as FailureUnavailable (HostFailure): the class that means "nothing
	// was compared", which pauses under every policy that pauses on an
	// unreachable server.
	FailureCapture = "capture_failed"
	// FailureTooLarge is a frame the server sent past the host's answer
	// limit: the host cut it off unread and broke the session there. Its
	// detail is the limit in bytes (a decimal integer); the core words the
	// recorded detail, so every host records the same bytes for the same
	// fact.
	FailureTooLarge = "answer_too_large"
)

// Observed is what the binding saw of the server.
type Observed struct {
	Endpoint        string      // "" when the check is over a file, not a live server
	ProtocolVersion string      // "" when unknown
	ServerInfo      canon.Value // null when unknown
	Handshake       string      // "initialize", "server/discover" or ""
	// HandshakeRead says the host handed the handshake's result as the
	// server sent it (handshake_result): then ServerInfo and Instructions
	// are what the core read of it, and HandshakeErr, when not nil, is why
	// it could not (handshake_malformed; neither is then compared).
	HandshakeRead bool
	Instructions  canon.Value // a string, or null when the server gave none
	HandshakeErr  error
	// ClientCapabilities are what the checking client declared (in
	// initialize, or a 2026-07-28 request's _meta); null when the host does
	// not say.
	ClientCapabilities canon.Value
	Pages              []string
	PageCapReached     bool
	// StrayLines counts the lines of a stdio server's stdout the host
	// skipped as no JSON-RPC message: a fact on the record, so that a
	// server that talks past the protocol is seen, never a reason to block
	// a list it answered whole.
	StrayLines int
	// Launched is the package the stdio command line launches, as the host
	// resolved it (launched.go); zero when the host says nothing of it.
	Launched      ObservedLaunched
	Failure       string // "", FailureUnavailable or FailureTimeout
	FailureDetail string
	// Features are the prompts, resources, resource templates and UI
	// templates the host read (features.go); empty when it read none.
	Features ObservedFeatures
}

// ReadHandshake reads a handshake's result as the server sent it: the
// result of initialize or server/discover, or the JSON-RPC response
// carrying it. Its serverInfo (an object when present; server/discover's
// is _meta's io.modelcontextprotocol/serverInfo) and instructions (a
// string when present) are what the core records and compares; any other
// shape, and anything the strict parser refuses, is an error the check
// records as handshake_malformed. A server's handshake is data the core
// judges, never part of a request's syntax: whatever it holds, the check
// leaves a record (issue 22, F6).
func ReadHandshake(raw string) (serverInfo, instructions canon.Value, err error) {
	v, err := canon.ParseString(raw)
	if err != nil {
		return serverInfo, instructions, err
	}
	if v.Kind() == canon.Object && v.Has("jsonrpc") {
		if e, ok := v.Get("error"); ok {
			return serverInfo, instructions, shapeError("the server answered the handshake with a JSON-RPC error: " + clipText(e.String()))
		}
		v, _ = v.Get("result")
	}
	if v.Kind() != canon.Object {
		return serverInfo, instructions, shapeError("the handshake's result is " + v.Kind().String() + ", not an object")
	}
	si, ok := v.Get("serverInfo")
	if meta, _ := v.Get("_meta"); !ok && meta.Kind() == canon.Object {
		// server/discover (2026-07-28) carries it in _meta.
		si, ok = meta.Get("io.modelcontextprotocol/serverInfo")
	}
	if ok {
		if si.Kind() != canon.Object {
			return serverInfo, instructions, shapeError("serverInfo is " + si.Kind().String() + ", not an object")
		}
		serverInfo = si
	}
	if in, ok := v.Get("instructions"); ok && !in.IsNull() {
		if in.Kind() != canon.String {
			return serverInfo, canon.NullValue(), shapeError("instructions is " + in.Kind().String() + ", not a string")
		}
		instructions = in
	}
	return serverInfo, instructions, nil
}

// shapeError is a handshake result that parses but is not of MCP's shape:
// it has no JSON error code (its record detail says code null).
type shapeError string

func (e shapeError) Error() string { return string(e) }

// handshakeDetail is the record's detail of a handshake_malformed.
func handshakeDetail(err error) canon.Value {
	code := canon.NullValue()
	msg := err.Error()
	if _, shape := err.(shapeError); !shape {
		code, msg = canon.Str(string(cerr.CodeOf(err))), cerr.Message(err)
	}
	return canon.Obj(canon.M("code", code), canon.M("error", canon.Str(msg)))
}

// clipText shortens a server's text for a message to 200 bytes, whole
// characters only.
func clipText(s string) string {
	if len(s) <= 200 {
		return s
	}
	i := 200
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
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
	Recheck               *Recheck  // a re-check list_changed asked for; nil for any other check
	Log                   *LogInput // the issuer's log proof for the lockfile; nil when none was given
}

// Recheck is what a host's rate limit did to a re-check the server's
// notifications/tools/list_changed asked for: how many notifications the
// check covers (those since the record before) and how long the limit held
// it back after the first of them.
type Recheck struct {
	Coalesced  int
	HeldBackMS int
}

// Storm reports whether the re-check is a storm's: the server announced
// more than one change for it, or announced again before the limit let a
// check start. Only then does the record carry storm, so a server's storm
// is visible on its bounded records and a plain re-check stays unmarked.
func (r *Recheck) Storm() bool { return r != nil && (r.Coalesced > 1 || r.HeldBackMS > 0) }

// Trust is the baseline's verification.
type Trust struct {
	sig.Result
	Parts    string // "signed", "unsigned", "absent", "ignored", "not_applicable"
	Coverage string // the coverage extension, as Parts
	Features string // the features extension (prompts, resources, UI templates), as Parts
	Digest   string // the lockfile's content digest
	// Provenance is the lockfile's provenance extension as it states it
	// (nil: none stated, or an agentgate.lock); vouched for as far as
	// Trust says.
	Provenance *lock.Provenance
}

// requireObserved refuses, when the policy asks for it, a baseline whose
// provenance is not "observed" under a signature that vouches: a list an
// issuer signed because someone handed it over (F9) is not a reading, and a
// provenance nobody signed states nothing.
func requireObserved(t Trust, required bool) Trust {
	if !required || t.Trust == sig.Untrusted {
		return t
	}
	signed := t.Trust == sig.Verified || t.Trust == sig.OperatorSigned
	if !signed || t.Provenance == nil || t.Provenance.Source != lock.SourceObserved {
		t.Trust, t.Reason = sig.Untrusted, sig.ReasonNotObserved
	}
	return t
}

// CoverageUsable reports whether the coverage extension may be compared
// against: present, and not added after signing.
func (t Trust) CoverageUsable() bool { return t.Coverage == "signed" || t.Coverage == "unsigned" }

// VerifyBaseline checks a lockfile's signature and says which per-part
// hashes may be used. Parts added to a signed lockfile after signing are set
// aside ("ignored") when the rest still verifies.
func VerifyBaseline(f lock.File, keys sig.Keys, requireSigned bool, now time.Time) Trust {
	if f.Agentgate != nil {
		t := Trust{Result: sig.Result{Trust: sig.Unsigned}, Parts: "not_applicable", Coverage: "not_applicable", Features: "not_applicable", Digest: LockDigest(f)}
		return refuseUnsigned(t, requireSigned)
	}
	l := f.Crawlcheck
	content := l.Digest()
	t := Trust{Digest: content, Result: sig.Verify(lock.Kind, l.SHA256, content, l.Signature, keys, now), Provenance: l.Provenance}
	t.Parts, t.Coverage = signedStatus(l.Parts != nil, t.Trust), signedStatus(l.Coverage != nil, t.Trust)
	t.Features = signedStatus(l.Features != nil, t.Trust)
	if t.Reason != sig.ReasonEdited {
		return refuseUnsigned(t, requireSigned)
	}
	// Signed before its features were added: they are set aside, the
	// parts and coverage hold.
	if wf := l.DigestWithoutFeatures(); wf != "" {
		if r := sig.Verify(lock.Kind, l.SHA256, wf, l.Signature, keys, now); r.Trust != sig.Untrusted {
			t.Result, t.Features = r, "ignored"
			t.Parts, t.Coverage = signedStatus(l.Parts != nil, r.Trust), signedStatus(l.Coverage != nil, r.Trust)
			return refuseUnsigned(t, requireSigned)
		}
	}
	// Signed before its coverage, or before its parts and coverage, were
	// added: what was added after signing is set aside, the rest holds.
	if wc := l.DigestWithoutCoverage(); wc != "" {
		if r := sig.Verify(lock.Kind, l.SHA256, wc, l.Signature, keys, now); r.Trust != sig.Untrusted {
			t.Result, t.Coverage, t.Features = r, "ignored", ignored(l.Features != nil)
			t.Parts = signedStatus(l.Parts != nil, r.Trust)
			return refuseUnsigned(t, requireSigned)
		}
	}
	if withoutParts := l.DigestWithoutParts(); withoutParts != "" {
		if r := sig.Verify(lock.Kind, l.SHA256, withoutParts, l.Signature, keys, now); r.Trust != sig.Untrusted {
			t.Result = r
			t.Parts, t.Coverage = ignored(l.Parts != nil), ignored(l.Coverage != nil)
			t.Features = ignored(l.Features != nil)
			return refuseUnsigned(t, requireSigned)
		}
	}
	return refuseUnsigned(t, requireSigned)
}

// signedStatus says how a lockfile's optional extension stands: absent,
// or under the lockfile's signature (signed) or not (unsigned).
func signedStatus(present bool, trust string) string {
	switch {
	case !present:
		return "absent"
	case trust == sig.Verified || trust == sig.OperatorSigned:
		return "signed"
	}
	return "unsigned"
}

func ignored(present bool) string {
	if present {
		return "ignored"
	}
	return "absent"
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
	return f.Crawlcheck.Digest()
}

// Run performs the check and returns the record.
func Run(in Input) (canon.Value, error) {
	c, d, err := runCheck(in)
	if err != nil {
		return canon.Value{}, err
	}
	return c.record(d), nil
}

func runCheck(in Input) (*check, policy.Decision, error) {
	requireSigned := len(in.Keys.Operator) > 0
	if in.Policy.RequireSignedBaseline != nil {
		requireSigned = *in.Policy.RequireSignedBaseline
	}
	if in.RequireSigned != nil {
		requireSigned = *in.RequireSigned
	}
	trust := requireObserved(VerifyBaseline(in.Lock, in.Keys, requireSigned, in.Now), in.Policy.RequireObservedBaseline)
	var base lock.Baseline
	var cov *lock.Coverage
	if in.Lock.Agentgate != nil {
		var err error
		if base, err = in.Lock.Agentgate.Baseline(in.ServerName); err != nil {
			return nil, policy.Decision{}, err
		}
	} else {
		base = in.Lock.Crawlcheck.Baseline(trust.Parts != "ignored")
		if trust.CoverageUsable() {
			cov = in.Lock.Crawlcheck.Coverage
		}
	}

	c := &check{in: in, base: base, trust: trust, cov: cov}
	if cov == nil {
		c.blind = append(c.blind, tools.Members...)
	}
	c.judgeBaseline()
	c.log = c.judgeLog()
	c.judgeServer()
	c.compare()
	c.judgeHandshake()
	c.compareFeatures()
	if c.listRead && !c.changed && c.observed.Truncated == "" {
		c.add(policy.Unchanged, "", "", "", canon.NullValue())
	}
	c.findings = append(c.findings, in.Evidence...)
	sortFindings(c.findings)

	offered := make([]string, len(c.observed.Tools))
	for i, t := range c.observed.Tools {
		offered[i] = t.Name
	}
	return c, policy.Decide(in.Policy, in.Mode, c.findings, offered, in.Now, in.Refreshed), nil
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
	launched     string // the record's server.launched.identity (launched.go)
	comparedDiff *diff.Result

	cov     *lock.Coverage // the baseline's coverage when it may be used
	changed bool           // any difference was seen in what was compared
	blind   []string       // members and server facts not compared (the record's blind_parts, after the baseline's own)
	log     canon.Value    // the record's log member; the zero Value when no proof was given

	features []comparedList // the prompts, resources and templates lists compared
}

func (c *check) add(o policy.Observation, tool, part, toolSHA string, detail canon.Value) {
	c.findings = append(c.findings, policy.Finding{Observation: o, Tool: tool, Part: part, ToolSHA256: toolSHA, Detail: detail})
}

func (c *check) judgeBaseline() {
	if c.trust.Trust == sig.Untrusted {
		// A lockfile signed by a key of the directory that may not vouch now
		// (retired, or outside its window) is key_retired, as a receipt of
		// that key is: its signature verifies and its key is the issuer's,
		// so it is not what baseline_untrusted means, and a host following a
		// rotation sees the retirement named (docs/decisions.md).
		o := policy.BaselineUntrusted
		if c.trust.Reason == sig.ReasonRetiredKey || c.trust.Reason == sig.ReasonOutsideValidity {
			o = policy.KeyRetired
		}
		c.add(o, "", "", "", canon.Obj(
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
	if c.judgeLaunched() {
		return
	}
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
			// The forms compared (endpoint.Same), so that a refusal's
			// "approved X, answering Y" shows why they differ.
			canon.M("approved", canon.Str(endpoint.Canonical(c.base.URL))),
			canon.M("observed", canon.Str(endpoint.Canonical(obs))),
		))
	}
}

// capabilitiesDiffer is the detail of a tool added or removed while the
// checking client declared other capabilities than the client the lockfile
// was made with (a server may offer tools by what the client declares:
// server-everything offers get-roots-list only to a client declaring
// roots): {"client_capabilities": {"approved", "observed"}}; null when both
// are known and equal, or either is not.
func (c *check) capabilitiesDiffer() canon.Value {
	l := c.in.Lock.Crawlcheck
	obs := c.in.Observed.ClientCapabilities
	if l == nil || l.Server.ClientCapabilities.IsNull() || obs.IsNull() ||
		canon.SHA256Hex(l.Server.ClientCapabilities) == canon.SHA256Hex(obs) {
		return canon.NullValue()
	}
	return canon.Obj(canon.M("client_capabilities", canon.Obj(
		canon.M("approved", l.Server.ClientCapabilities),
		canon.M("observed", obs),
	)))
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
	c.changed = !r.Same()
	hashOf := map[string]string{}
	for _, t := range obs.Tools {
		hashOf[t.Name] = t.SHA256
	}
	caps := c.capabilitiesDiffer()
	for _, n := range r.Added {
		c.add(policy.ToolAdded, n, "", hashOf[n], caps)
	}
	// Tools on pages that were not read are not "removed": a truncated list
	// cannot say what is missing (and pauses the session anyway).
	if obs.Truncated == "" && len(r.Removed) > 0 {
		// The baseline's hashes by name, taken once: Lookup scans the
		// baseline, and a check of an empty list against a 1,000-tool
		// lockfile (the SDKs' warm-up check) removes every tool.
		hashes := make(map[string]string, len(c.base.Tools))
		for i := len(c.base.Tools) - 1; i >= 0; i-- { // the first of a name wins, as in Lookup
			hashes[c.base.Tools[i].Name] = c.base.Tools[i].SHA256
		}
		for _, n := range r.Removed {
			c.add(policy.ToolRemoved, n, "", hashes[n], caps)
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
				ms := m.DescriptionClasses.Value()
				if m.DescriptionDiff != nil {
					ms = append(ms, canon.M("description_diff", diff.SegmentsValue(m.DescriptionDiff)))
				}
				c.add(policy.DescriptionChanged, m.Name, p, m.ObservedSHA256, canon.Obj(ms...))
			case tools.PartInputSchema:
				c.add(policy.SchemaChanged, m.Name, p, m.ObservedSHA256, canon.NullValue())
			case tools.PartAnnotations:
				c.add(policy.AnnotationsChanged, m.Name, p, m.ObservedSHA256, canon.NullValue())
			}
		}
	}
	c.compareMembers()
}

// MemberObservation names the observation of a change in a covered member
// (tools.Members), for the check and for approve alike.
func MemberObservation(member string) policy.Observation { return memberObservations[member] }

// memberObservations names the observation of a change in each covered member.
var memberObservations = map[string]policy.Observation{
	tools.MemberTitle: policy.TitleChanged, tools.MemberOutputSchema: policy.OutputSchemaChanged,
	tools.MemberIcons: policy.IconsChanged, tools.MemberExecution: policy.ExecutionChanged,
	tools.MemberMeta: policy.MetaChanged, tools.MemberMetaUI: policy.MetaUIChanged,
	tools.MemberUnknown: policy.UnknownMembersChanged,
}

// compareMembers compares every member the coverage extension pins, of each
// offered tool the baseline approved. Without usable coverage none is
// compared, and the record says so (blind_parts).
func (c *check) compareMembers() {
	if c.cov == nil {
		return
	}
	var k *classify.Classifier // for a changed title: built once, if one changed
	for i := range c.observed.Tools {
		t := &c.observed.Tools[i]
		approved, ok := c.cov.Tools[t.Name]
		if !ok {
			continue // an added tool: tool_added says it
		}
		for _, m := range tools.Members {
			if !canon.Same(t.MemberHash(m), approved[m]) {
				c.changed = true
				detail := canon.NullValue()
				if m == tools.MemberTitle {
					if k == nil {
						k = classify.New(toolNames(c.observed.Tools))
					}
					detail = titleClasses(k, t)
				}
				c.add(memberObservations[m], t.Name, m, t.SHA256, detail)
			}
		}
	}
}

// titleClasses classifies a changed title: the coverage keeps its hash,
// not its text, so the whole new title is read as inserted (which can only
// add classes). A title that went away is editorial.
func titleClasses(k *classify.Classifier, t *tools.Tool) canon.Value {
	title, _ := t.MemberValue(tools.MemberTitle).Str()
	return canon.Obj(k.Whole(title, t.Name).Value()...)
}

func toolNames(list []tools.Tool) []string {
	names := make([]string, len(list))
	for i := range list {
		names[i] = list[i].Name
	}
	return names
}

// judgeHandshake compares what the handshake said — instructions and
// serverInfo — with what the baseline's coverage recorded. A handshake the
// core could not read is handshake_malformed, and nothing of it is compared.
func (c *check) judgeHandshake() {
	o := c.in.Observed
	if o.HandshakeErr != nil {
		c.add(policy.HandshakeMalformed, "", "", "", handshakeDetail(o.HandshakeErr))
	}
	comparable := o.HandshakeRead && o.HandshakeErr == nil && c.cov != nil
	if comparable && c.cov.HasInstructions {
		if !canon.Equal(o.Instructions, c.cov.Instructions) {
			c.changed = true
			now, _ := o.Instructions.Str()
			words := diff.Words(c.cov.InstructionsText(), now)
			classes := classify.New(toolNames(c.observed.Tools)).Change(diff.Classify(words), "")
			c.add(policy.InstructionsChanged, "", "", "", canon.Obj(append(classes.Value(),
				canon.M("instructions_diff", diff.SegmentsValue(words)))...))
		}
	} else {
		c.blind = append(c.blind, BlindInstructions)
	}
	if comparable && c.cov.ServerInfoSHA256 != "" {
		if h := canon.SHA256Hex(o.ServerInfo); h != c.cov.ServerInfoSHA256 {
			c.changed = true
			c.add(policy.ServerInfoChanged, "", "", "", canon.Obj(
				canon.M("approved_sha256", canon.Str(c.cov.ServerInfoSHA256)),
				canon.M("observed_sha256", canon.Str(h))))
		}
	} else {
		c.blind = append(c.blind, BlindServerInfo)
	}
}

// What a record's blind_parts names beyond tool members: the server's
// instructions and serverInfo, when the baseline recorded none or the host
// handed no readable handshake.
const (
	BlindInstructions = "instructions"
	BlindServerInfo   = "server_info"
)
