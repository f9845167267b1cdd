package core

import (
	"time"

	"github.com/crawlcheck/verifier/core/canon"
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/continuity"
	"github.com/crawlcheck/verifier/core/diff"
	"github.com/crawlcheck/verifier/core/lock"
	"github.com/crawlcheck/verifier/core/policy"
	"github.com/crawlcheck/verifier/core/req"
	"github.com/crawlcheck/verifier/core/tools"
)

func opMakeLock(r req.Obj) (canon.Value, error) {
	if err := r.Only("tools", "pages", "page_cap_reached", "format", "server", "approved_at", "name", "generated_by", "into"); err != nil {
		return canon.Value{}, err
	}
	format, err := r.OneOf("format", "crawlcheck", "crawlcheck", "agentgate")
	if err != nil {
		return canon.Value{}, err
	}
	obs, err := toolSource(r)
	if err != nil {
		return canon.Value{}, err
	}
	if obs.Truncated != "" {
		return canon.Value{}, cerr.New(cerr.BadRequest, "the tool list is truncated (%s): a lockfile pins the whole list or nothing", obs.Truncated)
	}
	at, err := r.Time("approved_at")
	if err != nil {
		return canon.Value{}, err
	}
	if format == "agentgate" {
		return makeAgentgate(r, obs.Tools, at)
	}
	srv, err := serverOf(r)
	if err != nil {
		return canon.Value{}, err
	}
	l := lock.NewCrawlcheck(srv, at, obs.Tools)
	l.Seal(nil)
	return canon.Obj(canon.M("lock", canon.Str(string(l.Bytes())))), nil
}

func serverOf(r req.Obj) (lock.Server, error) {
	var s lock.Server
	o, ok, err := r.Object("server")
	if err != nil || !ok {
		return s, err
	}
	if err := o.Only("url", "protocol_version", "info"); err != nil {
		return s, err
	}
	if s.URL, err = o.Str("url", false); err != nil {
		return s, err
	}
	if s.ProtocolVersion, err = o.Str("protocol_version", false); err != nil {
		return s, err
	}
	if o.Has("info") {
		if s.Info = o.Value("info"); s.Info.Kind() != canon.Object {
			return s, cerr.New(cerr.BadRequest, "request.server.info must be an object")
		}
	}
	return s, nil
}

// agentgateEntry reads what names an agentgate.lock server entry: the
// required server name and generatedBy (this engine when not given).
func agentgateEntry(r req.Obj) (name, by string, err error) {
	if name, err = r.Str("name", true); err != nil {
		return "", "", err
	}
	if by, err = r.Str("generated_by", false); by == "" {
		by = policy.EngineVersion
	}
	return name, by, err
}

func makeAgentgate(r req.Obj, ts []tools.Tool, at time.Time) (canon.Value, error) {
	name, by, err := agentgateEntry(r)
	if err != nil {
		return canon.Value{}, err
	}
	a := &lock.Agentgate{}
	if r.Has("into") {
		f, err := parseLock(r, "into")
		if err != nil {
			return canon.Value{}, err
		}
		if f.Agentgate == nil {
			return canon.Value{}, cerr.New(cerr.BadRequest, "request.into must be an agentgate.lock")
		}
		a = f.Agentgate
	}
	a.GeneratedBy, a.GeneratedAt = by, at
	a.Put(lock.NewAgentgateServer(name, ts))
	return canon.Obj(canon.M("lock", canon.Str(string(a.Bytes())))), nil
}

// readSide reads one side of a diff: a lockfile, a bare array of tools, or a
// tools/list page (result or JSON-RPC response).
func readSide(r req.Obj, field string) (*lock.File, []tools.Tool, error) {
	doc, ok, err := r.Doc(field)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, cerr.New(cerr.BadRequest, "request.%s is required", field)
	}
	if doc.Kind() == canon.Object && (doc.Has("kind") || doc.Has("lockfileVersion")) {
		f, err := lock.Parse(doc)
		if err != nil {
			return nil, nil, cerr.In("request."+field, err)
		}
		return &f, nil, nil
	}
	list, cursor, more, err := tools.PageValue(doc)
	if err != nil {
		return nil, nil, cerr.In("request."+field, err)
	}
	if more {
		return nil, nil, cerr.New(cerr.BadRequest, "request.%s has nextCursor %q: it is one page, not the whole list", field, cursor)
	}
	ts, err := tools.Hash(list)
	return nil, ts, cerr.In("request."+field, err)
}

func baselineOf(f lock.File, serverName string) (lock.Baseline, error) {
	if f.Agentgate != nil {
		return f.Agentgate.Baseline(serverName)
	}
	return f.Crawlcheck.Baseline(true), nil
}

func opDiff(r req.Obj) (canon.Value, error) {
	if err := r.Only("old", "new", "server_name"); err != nil {
		return canon.Value{}, err
	}
	oldLock, oldTools, err := readSide(r, "old")
	if err != nil {
		return canon.Value{}, err
	}
	newLock, newTools, err := readSide(r, "new")
	if err != nil {
		return canon.Value{}, err
	}
	if newLock != nil {
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.new must be a tool list: a lockfile holds hashes, which cannot be compared part by part with another lockfile's")
	}
	if oldLock == nil {
		return diff.Lists(oldTools, newTools).Value(), nil
	}
	name, err := r.Str("server_name", false)
	if err != nil {
		return canon.Value{}, err
	}
	base, err := baselineOf(*oldLock, name)
	if err != nil {
		return canon.Value{}, err
	}
	return diff.Against(base, newTools).Value(), nil
}

// opLockCheck is the crawlcheck-mcp-lock-check answer of the lockfile spec:
// any difference blocks, and so does a list that could not be read whole.
func opLockCheck(r req.Obj) (canon.Value, error) {
	if err := r.Only("lock", "tools", "pages", "page_cap_reached", "server_name", "failure", "failure_detail"); err != nil {
		return canon.Value{}, err
	}
	f, err := parseLock(r, "lock")
	if err != nil {
		return canon.Value{}, err
	}
	if err := checkSealed(f); err != nil {
		return canon.Value{}, err
	}
	name, err := r.Str("server_name", false)
	if err != nil {
		return canon.Value{}, err
	}
	base, err := baselineOf(f, name)
	if err != nil {
		return canon.Value{}, err
	}
	failure, err := r.OneOf("failure", "", continuity.FailureUnavailable, continuity.FailureTimeout)
	if err != nil {
		return canon.Value{}, err
	}
	unreachable := func(reason, detail string) (canon.Value, error) {
		return lockCheckAnswer(base, "unreachable", nil, "", canon.Obj(canon.M("reason", canon.Str(reason)), canon.M("detail", canon.Str(detail)))), nil
	}
	if failure != "" {
		detail, err := r.Str("failure_detail", false)
		if err != nil {
			return canon.Value{}, err
		}
		return unreachable(failure, detail)
	}
	answer, _, _, err := checkTools(r, base)
	return answer, err
}

// lockCheckKind is the kind of a lock_check answer.
const lockCheckKind = "crawlcheck-mcp-lock-check"

// checkTools is lock_check's comparison of the request's tools with a
// baseline: the answer, and the difference and tools it was made from (nil
// and none when the list could not be compared).
func checkTools(r req.Obj, base lock.Baseline) (canon.Value, *diff.Result, tools.Observed, error) {
	unreachable := func(reason, detail string) canon.Value {
		return lockCheckAnswer(base, "unreachable", nil, "", canon.Obj(canon.M("reason", canon.Str(reason)), canon.M("detail", canon.Str(detail))))
	}
	obs, err := toolSource(r)
	if cerr.CodeOf(err) == cerr.ToolsMalformed || cerr.CodeOf(err) == cerr.InputTooLarge {
		return unreachable(string(policy.ResponseMalformed), cerr.Message(err)), nil, obs, nil
	}
	if err != nil {
		return canon.Value{}, nil, obs, err
	}
	if obs.Truncated != "" {
		return unreachable(string(policy.ToolListTruncated), obs.Truncated), nil, obs, nil
	}
	d := diff.Against(base, obs.Tools)
	verdict := "unchanged"
	if !d.Same() {
		verdict = "changed"
	}
	return lockCheckAnswer(base, verdict, &d, tools.ListSHA256(obs.Tools), canon.NullValue()), &d, obs, nil
}

// checkSealed refuses a crawlcheck lockfile whose sha256 no longer matches
// its content: lock_check takes no keys, so this is the integrity it can
// check (verify_lock checks signatures). A digest without parts is accepted,
// as for parts added after signing.
func checkSealed(f lock.File) error {
	l := f.Crawlcheck
	if l == nil || l.SHA256 == "" {
		return nil
	}
	content, withoutParts := l.Digests()
	if l.SHA256 != content && l.SHA256 != withoutParts {
		return cerr.New(cerr.LockInvalid, "request.lock: its sha256 does not match its content: it was edited after it was sealed")
	}
	return nil
}

func lockCheckAnswer(base lock.Baseline, verdict string, d *diff.Result, observedSHA string, unreachable canon.Value) canon.Value {
	decision := "block"
	if verdict == "unchanged" {
		decision = "connect"
	}
	added, removed, modified, detail := []string{}, []string{}, []string{}, []canon.Value{}
	blind := base.BlindParts
	if d != nil {
		added, removed = nonNil(d.Added), nonNil(d.Removed)
		for _, m := range d.Modified {
			modified = append(modified, m.Name)
			detail = append(detail, m.Value())
		}
	}
	return canon.Obj(
		canon.M("kind", canon.Str(lockCheckKind)),
		canon.M("v", canon.Int(1)),
		canon.M("verdict", canon.Str(verdict)),
		canon.M("decision", canon.Str(decision)),
		canon.M("lock_tools_sha256", canon.StrOrNull(base.ToolsSHA256, base.ToolsSHA256 != "")),
		canon.M("tools_sha256", canon.StrOrNull(observedSHA, observedSHA != "")),
		canon.M("added", canon.Strs(added)),
		canon.M("removed", canon.Strs(removed)),
		canon.M("modified", canon.Strs(modified)),
		canon.M("modified_detail", canon.Arr(detail...)),
		canon.M("blind_parts", canon.Strs(nonNil(blind))),
		canon.M("unreachable", unreachable),
	)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// evidenceObservations are the observations a host may hand the check from
// signed evidence (a guard answer) or from asking the issuer.
var evidenceObservations = map[policy.Observation]bool{
	policy.EvidenceExpired: true, policy.SignatureInvalid: true, policy.KeyUnknown: true,
	policy.KeyRetired: true, policy.ServerIdentityMismatch: true, policy.DecisionRefused: true,
	policy.ServiceUnavailable: true,
}

func opContinuityCheck(r req.Obj) (canon.Value, error) {
	if err := r.Only("now", "mode", "lock", "server_name", "observed", "policy", "expected_policy_version",
		"key_directory", "operator_keys", "require_signed_baseline", "evidence", "issuer", "prev_record_sha256", "refreshed"); err != nil {
		return canon.Value{}, err
	}
	var in continuity.Input
	var err error
	if in.Now, err = r.Time("now"); err != nil {
		return canon.Value{}, err
	}
	if in.Mode, err = r.OneOf("mode", policy.ModeEnforce, policy.Modes...); err != nil {
		return canon.Value{}, err
	}
	if in.Lock, err = parseLock(r, "lock"); err != nil {
		return canon.Value{}, err
	}
	if in.ServerName, err = r.Str("server_name", false); err != nil {
		return canon.Value{}, err
	}
	if in.Observed, err = observedOf(r); err != nil {
		return canon.Value{}, err
	}
	in.Policy = policy.Default()
	if doc, ok, err := r.Doc("policy"); err != nil {
		return canon.Value{}, err
	} else if ok {
		if in.Policy, err = policy.Parse(doc); err != nil {
			return canon.Value{}, cerr.In("request.policy", err)
		}
	}
	if in.ExpectedPolicyVersion, err = r.Str("expected_policy_version", false); err != nil {
		return canon.Value{}, err
	}
	if in.Keys, err = keysOf(r); err != nil {
		return canon.Value{}, err
	}
	if in.RequireSigned, err = r.OptBool("require_signed_baseline"); err != nil {
		return canon.Value{}, err
	}
	if in.Evidence, err = evidenceOf(r); err != nil {
		return canon.Value{}, err
	}
	if o, ok, err := r.Object("issuer"); err != nil {
		return canon.Value{}, err
	} else if ok {
		if in.Issuer, err = continuity.IssuerTrace(o); err != nil {
			return canon.Value{}, err
		}
	}
	if in.PrevRecordSHA256, err = r.Str("prev_record_sha256", false); err != nil {
		return canon.Value{}, err
	}
	if in.PrevRecordSHA256 != "" && !tools.IsHexHash(in.PrevRecordSHA256) {
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.prev_record_sha256 must be 64 lowercase hex digits")
	}
	if in.Refreshed, err = r.Bool("refreshed"); err != nil {
		return canon.Value{}, err
	}
	return continuity.Run(in)
}

func observedOf(r req.Obj) (continuity.Observed, error) {
	var o continuity.Observed
	ob, ok, err := r.Object("observed")
	if err != nil {
		return o, err
	}
	if !ok {
		return o, cerr.New(cerr.BadRequest, "request.observed is required")
	}
	if err := ob.Only("endpoint", "protocol_version", "server_info", "handshake", "pages", "page_cap_reached", "failure", "failure_detail"); err != nil {
		return o, err
	}
	if o.Endpoint, err = ob.Str("endpoint", false); err != nil {
		return o, err
	}
	if o.ProtocolVersion, err = ob.Str("protocol_version", false); err != nil {
		return o, err
	}
	if ob.Has("server_info") {
		// Kept as the server sent it; a non-object is recorded, not judged.
		o.ServerInfo = ob.Value("server_info")
	}
	if o.Handshake, err = ob.OneOf("handshake", "", "initialize", "server/discover"); err != nil {
		return o, err
	}
	if o.Failure, err = ob.OneOf("failure", "", continuity.FailureUnavailable, continuity.FailureTimeout); err != nil {
		return o, err
	}
	if o.FailureDetail, err = ob.Str("failure_detail", false); err != nil {
		return o, err
	}
	if o.PageCapReached, err = ob.Bool("page_cap_reached"); err != nil {
		return o, err
	}
	if o.Pages, err = ob.Pages("pages"); err != nil {
		return o, err
	}
	if o.Failure == "" && !ob.Has("pages") {
		return o, cerr.New(cerr.BadRequest, "request.observed needs pages, or a failure saying why there are none")
	}
	if len(o.Pages) > tools.MaxPages {
		return o, cerr.New(cerr.BadRequest, "request.observed.pages: %d pages exceed the limit of %d", len(o.Pages), tools.MaxPages)
	}
	return o, nil
}

func evidenceOf(r req.Obj) ([]policy.Finding, error) {
	if !r.Has("evidence") {
		return nil, nil
	}
	v := r.Value("evidence")
	if v.Kind() != canon.Array {
		return nil, cerr.New(cerr.BadRequest, "request.evidence must be an array")
	}
	var out []policy.Finding
	for i, e := range v.Elems() {
		o := req.Obj{V: e, Path: "request.evidence[" + canon.Int(int64(i)).String() + "]"}
		if e.Kind() != canon.Object {
			return nil, cerr.New(cerr.BadRequest, "%s must be an object", o.Path)
		}
		if err := o.Only("observation", "detail"); err != nil {
			return nil, err
		}
		name, err := o.Str("observation", true)
		if err != nil {
			return nil, err
		}
		if !evidenceObservations[policy.Observation(name)] {
			return nil, cerr.New(cerr.BadRequest, "%s.observation %q is not one a host may report (evidence_expired, signature_invalid, key_unknown, key_retired, server_identity_mismatch, decision_refused, service_unavailable)", o.Path, name)
		}
		out = append(out, policy.Finding{Observation: policy.Observation(name), Detail: o.Value("detail")})
	}
	return out, nil
}
