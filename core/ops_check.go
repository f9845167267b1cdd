package core

import (
	"time"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/continuity"
	"github.com/crawlcheck/verifier/core/internal/diff"
	"github.com/crawlcheck/verifier/core/internal/endpoint"
	"github.com/crawlcheck/verifier/core/internal/lock"
	"github.com/crawlcheck/verifier/core/internal/policy"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/sig"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

func opMakeLock(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	format := rd.OneOf("format", "crawlcheck", "crawlcheck", "agentgate")
	src, srv := observedSource(rd)
	obs := sourceTools(rd, src)
	if !rd.Failed() && obs.Truncated != "" {
		rd.Fail(cerr.New(cerr.BadRequest, "the tool list is truncated (%s): a lockfile pins the whole list or nothing", obs.Truncated))
	}
	at := rd.Time("approved_at")
	prov := provenanceOf(rd, format)
	if format == "agentgate" {
		return makeAgentgate(rd, obs.Tools, at)
	}
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	l := lock.NewCrawlcheck(srv.Server, at, obs.Tools, srv.coverage(obs.Tools))
	l.Provenance = prov
	feats, err := lockFeatures(srv.features, obs.Tools)
	if err != nil {
		return canon.Value{}, err
	}
	l.Features = feats
	l.Launched = srv.launched
	l.Seal(nil)
	return canon.Obj(canon.M("lock", canon.Str(string(l.Bytes())))), nil
}

// provenanceOf reads make_lock's optional provenance (lock.Provenance): what
// the signer will state about where the tools came from. "observed" is
// written only of a lockfile made from the facts of a reading (observed),
// never of tools or pages handed over, so a signer cannot label a
// submitted list observed through this op; an agentgate.lock has no place
// for it.
func provenanceOf(rd *req.Reader, format string) *lock.Provenance {
	if rd.Failed() || !rd.Has(lock.ProvenanceMember) {
		return nil
	}
	if format == "agentgate" {
		rd.Fail(cerr.New(cerr.BadRequest, "%s: an agentgate.lock has no provenance", rd.Field(lock.ProvenanceMember)))
		return nil
	}
	p, err := lock.ParseProvenance(rd.Value(lock.ProvenanceMember), rd.Field(lock.ProvenanceMember))
	if err != nil {
		rd.Fail(cerr.New(cerr.BadRequest, "%s", cerr.Message(err)))
		return nil
	}
	if p.Source == lock.SourceObserved && !rd.Has("observed") {
		rd.Fail(cerr.New(cerr.BadRequest, "%s.source \"observed\" needs the facts of a reading (%s), not tools or pages handed over", rd.Field(lock.ProvenanceMember), rd.Field("observed")))
		return nil
	}
	return p
}

// approvedSource is what a lockfile pins of the server besides its tools:
// the server member, and what the handshake said when the host handed it
// (observed.handshake_result), for the coverage extension.
type approvedSource struct {
	lock.Server
	handshake    bool
	instructions canon.Value
	serverInfo   canon.Value
	features     continuity.ObservedFeatures // what the host read beside the tools (ops_features.go)
	launched     *lock.Launched              // the package the command line launches, as the host resolved it (ops_launched.go)
}

// coverage is the coverage extension of a new lockfile of ts.
func (s approvedSource) coverage(ts []tools.Tool) *lock.Coverage {
	return lock.NewCoverage(ts, s.handshake, s.instructions, s.serverInfo)
}

// serverOf reads the optional server a crawlcheck lockfile pins.
func serverOf(rd *req.Reader) lock.Server {
	var s lock.Server
	o, ok := rd.Object("server")
	if !ok || !rd.Fail(o.Only(names(serverFields)...)) {
		return s
	}
	sr := o.Read()
	// A lockfile pins the canonical form of its endpoint, never a
	// credential in clear (endpoint.Canonical), and no host that has
	// none (endpoint.CheckHost).
	url := sr.Str("url", false)
	if err := endpoint.CheckHost(url); err != nil {
		sr.Fail(cerr.New(cerr.BadRequest, "%s %s %v", sr.Field("url"), canon.Str(clipText(url)), err))
	}
	s.URL = endpoint.Canonical(url)
	s.ProtocolVersion = sr.Str("protocol_version", false)
	if sr.Has("info") && !sr.Failed() {
		if s.Info = sr.Value("info"); s.Info.Kind() != canon.Object {
			sr.Fail(cerr.New(cerr.BadRequest, "%s must be an object", sr.Field("info")))
		}
	}
	if sr.Has("client_capabilities") && !sr.Failed() {
		if s.ClientCapabilities = sr.Value("client_capabilities"); s.ClientCapabilities.Kind() != canon.Object {
			sr.Fail(cerr.New(cerr.BadRequest, "%s must be an object", sr.Field("client_capabilities")))
		}
	}
	rd.Fail(sr.Err())
	return s
}

// agentgateEntry reads what names an agentgate.lock server entry: the
// required server name and generatedBy (this engine when not given).
func agentgateEntry(rd *req.Reader) (name, by string) {
	name = rd.Str("name", true)
	if by = rd.Str("generated_by", false); by == "" {
		by = policy.EngineVersion
	}
	return name, by
}

func makeAgentgate(rd *req.Reader, ts []tools.Tool, at time.Time) (canon.Value, error) {
	name, by := agentgateEntry(rd)
	a := &lock.Agentgate{}
	if rd.Has("into") {
		f := parseLock(rd, "into")
		if !rd.Failed() && f.Agentgate == nil {
			rd.Fail(cerr.New(cerr.BadRequest, "%s must be an agentgate.lock", rd.Field("into")))
		}
		a = f.Agentgate
	}
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	a.GeneratedBy, a.GeneratedAt = by, at
	a.Put(lock.NewAgentgateServer(name, ts))
	return canon.Obj(canon.M("lock", canon.Str(string(a.Bytes())))), nil
}

// readSide reads one side of a diff: a lockfile, a bare array of tools, a
// tools/list page (result or JSON-RPC response), or {"pages": [...]}, the
// pages of one walk (each a page's text or the page itself), so that a
// host hands over a list of several pages as it read them instead of
// joining their tools itself.
func readSide(rd *req.Reader, field string) (*lock.File, []tools.Tool) {
	doc := rd.RequiredDoc(field)
	if rd.Failed() {
		return nil, nil
	}
	if claimsLockfile(doc) {
		f, err := lock.Parse(doc)
		if !rd.In(field, err) {
			return nil, nil
		}
		return &f, nil
	}
	if doc.Kind() == canon.Object && doc.Has("pages") {
		return nil, sidePages(rd, field, doc)
	}
	list, cursor, more, err := tools.PageValue(doc)
	if !rd.In(field, err) {
		return nil, nil
	}
	if more {
		rd.Fail(cerr.New(cerr.BadRequest, "%s has nextCursor %q: it is one page, not the whole list", rd.Field(field), cursor))
		return nil, nil
	}
	ts, err := tools.Hash(list)
	rd.In(field, err)
	return nil, ts
}

// sidePages reads a diff side {"pages": [...]}: the whole list, read
// across its pages as hash_tools reads them.
func sidePages(rd *req.Reader, field string, doc canon.Value) []tools.Tool {
	side := req.Obj{V: doc, Path: rd.Field(field)}
	if !rd.Fail(side.Only("pages")) {
		return nil
	}
	pv := side.Value("pages")
	if pv.Kind() != canon.Array {
		rd.Fail(cerr.New(cerr.BadRequest, "%s.pages must be an array of pages", side.Path))
		return nil
	}
	pages := make([]string, 0, len(pv.Elems()))
	for i, p := range pv.Elems() {
		switch p.Kind() {
		case canon.String:
			s, _ := p.Str()
			pages = append(pages, s)
		case canon.Object, canon.Array:
			pages = append(pages, p.String())
		default:
			rd.Fail(cerr.New(cerr.BadRequest, "%s.pages[%d] must be a page: its text, or the page itself", side.Path, i))
			return nil
		}
	}
	obs, err := tools.FromPages(pages, false)
	switch {
	case !rd.Fail(cerr.In(side.Path+".pages", err)):
	case obs.Truncated != "":
		rd.Fail(cerr.New(cerr.BadRequest, "%s.pages is not the whole list (%s)", side.Path, obs.Truncated))
	default:
		return obs.Tools
	}
	return nil
}

func baselineOf(f lock.File, serverName string) (lock.Baseline, error) {
	if f.Agentgate != nil {
		return f.Agentgate.Baseline(serverName)
	}
	return f.Crawlcheck.Baseline(true), nil
}

func opDiff(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	oldLock, oldTools := readSide(rd, "old")
	newLock, newTools := readSide(rd, "new")
	if !rd.Failed() && newLock != nil {
		rd.Fail(cerr.New(cerr.BadRequest, "%s must be a tool list: a lockfile holds hashes, which cannot be compared part by part with another lockfile's", rd.Field("new")))
	}
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	if oldLock == nil {
		return diff.Lists(oldTools, newTools).Value(), nil
	}
	name := rd.Str("server_name", false)
	if err := rd.Err(); err != nil {
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
	rd := r.Read()
	f := parseLockShared(rd, "lock")
	if !rd.Failed() {
		rd.Fail(checkSealed(f))
	}
	name := rd.Str("server_name", false)
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	base, err := baselineOf(f, name)
	if err != nil {
		return canon.Value{}, err
	}
	return lockCheckOf(rd, base)
}

// lockCheckOf is the lock check of the observation rd reads (a tool source,
// or a host fault) against a baseline.
func lockCheckOf(rd *req.Reader, base lock.Baseline) (canon.Value, error) {
	if failure := readFault(rd); failure.Failure != "" {
		failure.Endpoint = base.URL // the endpoint a login hint names: the one pinned
		failure, detail, err := continuity.HostFailure(failure)
		if err := rd.Err(); err != nil {
			return canon.Value{}, err
		}
		if err != nil {
			return canon.Value{}, err
		}
		return lockCheckAnswer(base, "unreachable", nil, "", canon.Obj(canon.M("reason", canon.Str(failure)), canon.M("detail", canon.Str(detail)))), nil
	}
	answer, _, _ := checkTools(rd, rd.O, base)
	return answer, rd.Err()
}

// lockCheckKind is the kind of a lock_check answer.
const lockCheckKind = "crawlcheck-mcp-lock-check"

// checkTools is lock_check's comparison of the tools in from (the request,
// or approve's observed) with a baseline: the answer, and the difference and tools it was made from (nil
// and none when the list could not be compared). A list the hashing rules
// refuse or that was not read whole is an answer (unreachable), not an
// error.
func checkTools(rd *req.Reader, from req.Obj, base lock.Baseline) (canon.Value, *diff.Result, tools.Observed) {
	unreachable := func(reason, detail string) canon.Value {
		return lockCheckAnswer(base, "unreachable", nil, "", canon.Obj(canon.M("reason", canon.Str(reason)), canon.M("detail", canon.Str(detail))))
	}
	if rd.Failed() {
		return canon.Value{}, nil, tools.Observed{}
	}
	// The tool source is read on its own reader, as a request of its own:
	// its hashing errors are the server's and become the answer, whose
	// detail must not depend on where the request sits (a receipt's inputs
	// are computed under one path and replayed under another).
	src := from.At("request").Read()
	obs := toolSource(src)
	switch err := src.Err(); {
	case cerr.CodeOf(err) == cerr.ToolsMalformed || cerr.CodeOf(err) == cerr.InputTooLarge:
		return unreachable(string(policy.ResponseMalformed), cerr.Message(err)), nil, obs
	case err != nil:
		rd.Fail(err)
		return canon.Value{}, nil, obs
	case obs.Truncated != "":
		return unreachable(string(policy.ToolListTruncated), obs.Truncated), nil, obs
	}
	d := diff.Against(base, obs.Tools)
	verdict := "unchanged"
	if !d.Same() {
		verdict = "changed"
	}
	return lockCheckAnswer(base, verdict, &d, obs.ListSHA256(), canon.NullValue()), &d, obs
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
	if l.SHA256 != l.Digest() && l.SHA256 != l.DigestWithoutParts() {
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
	in, err := continuityInput(r)
	if err != nil {
		return canon.Value{}, err
	}
	return continuity.Run(in)
}

// opContinuityHandoff is continuity_check with what the host does next:
// the record, the session's course, the tool objects to hand over and the
// names a call may reach (continuity.Handoff); tool_texts false leaves the
// tool objects out.
func opContinuityHandoff(r req.Obj) (canon.Value, error) {
	in, err := continuityInput(r)
	if err != nil {
		return canon.Value{}, err
	}
	texts, err := r.OptBool("tool_texts")
	if err != nil {
		return canon.Value{}, err
	}
	return continuity.Handoff(in, texts == nil || *texts)
}

// continuityInput reads a continuity_check request.
func continuityInput(r req.Obj) (continuity.Input, error) {
	rd := r.Read()
	in := continuity.Input{Policy: policy.Default()}
	in.Now = rd.Time("now")
	in.Mode = rd.OneOf("mode", policy.ModeEnforce, policy.Modes...)
	in.Lock = parseLockShared(rd, "lock")
	in.ServerName = rd.Str("server_name", false)
	in.Observed = observedOf(rd)
	if doc, ok := rd.Doc("policy"); ok {
		p, err := policy.Parse(doc)
		if rd.In("policy", err) {
			in.Policy = p
		}
	}
	in.ExpectedPolicyVersion = rd.Str("expected_policy_version", false)
	in.Keys = sig.Keys{Directory: baselineKeys(rd), Operator: operatorKeys(rd)}
	in.RequireSigned = rd.OptBool("require_signed_baseline")
	in.Evidence = evidenceOf(rd)
	if o, ok := rd.Object("issuer"); ok {
		trace, evidence, err := continuity.IssuerTrace(o)
		rd.Fail(err)
		in.Issuer = trace
		in.Evidence = append(in.Evidence, evidence...)
	}
	in.PrevRecordSHA256 = rd.Str("prev_record_sha256", false)
	if in.PrevRecordSHA256 != "" && !tools.IsHexHash(in.PrevRecordSHA256) {
		rd.Fail(cerr.New(cerr.BadRequest, "%s must be 64 lowercase hex digits", rd.Field("prev_record_sha256")))
	}
	in.Refreshed = rd.Bool("refreshed")
	in.Recheck = recheckOf(rd)
	in.Log = logInputOf(rd)
	if err := rd.Err(); err != nil {
		return in, err
	}
	return in, nil
}

// recheckOf reads recheck: what a host's rate limit did to a re-check the
// server's list_changed notifications asked for (nil without one).
func recheckOf(rd *req.Reader) *continuity.Recheck {
	o, ok := rd.Object("recheck")
	if !ok || rd.Failed() {
		return nil
	}
	if err := o.Only("coalesced", "held_back_ms"); err != nil {
		rd.Fail(err)
		return nil
	}
	or := o.Read()
	for _, name := range []string{"coalesced", "held_back_ms"} {
		if !or.Has(name) {
			or.Fail(cerr.New(cerr.BadRequest, "%s is required", or.Field(name)))
		}
	}
	if or.Failed() {
		rd.Fail(or.Err())
		return nil
	}
	r := &continuity.Recheck{Coalesced: positiveInt(or, "coalesced"), HeldBackMS: wholeInt(or, "held_back_ms", 0)}
	if or.Failed() {
		rd.Fail(or.Err())
		return nil
	}
	return r
}

func observedOf(rd *req.Reader) continuity.Observed {
	ob, ok := rd.Object("observed")
	switch {
	case rd.Failed():
		return continuity.Observed{}
	case !ok:
		rd.Fail(cerr.New(cerr.BadRequest, "%s is required", rd.Field("observed")))
		return continuity.Observed{}
	}
	o, err := readObserved(ob)
	rd.Fail(err)
	return o
}

// readObserved reads an observed object: the facts a host saw of a server,
// as continuity_check takes them and make_lock and approve accept them.
func readObserved(ob req.Obj) (continuity.Observed, error) {
	var o continuity.Observed
	if err := ob.Only(names(observedFields)...); err != nil {
		return o, err
	}
	or := ob.Read()
	o.Endpoint = or.Str("endpoint", false)
	o.ProtocolVersion = or.Str("protocol_version", false)
	if or.Has("server_info") {
		// Kept as the server sent it; a non-object is recorded, not judged.
		o.ServerInfo = or.Value("server_info")
	}
	if raw, ok, err := ob.Raw("handshake_result"); err != nil {
		or.Fail(err)
	} else if ok {
		if or.Has("server_info") {
			or.Fail(cerr.New(cerr.BadRequest, "give either %s or %s, not both: the core reads serverInfo of the handshake's result", or.Field("server_info"), or.Field("handshake_result")))
		}
		o.HandshakeRead = true
		o.ServerInfo, o.Instructions, o.HandshakeErr = continuity.ReadHandshake(raw)
	}
	o.Handshake = or.OneOf("handshake", "", "initialize", "server/discover")
	if or.Has("client_capabilities") && !or.Failed() {
		if o.ClientCapabilities = or.Value("client_capabilities"); o.ClientCapabilities.Kind() != canon.Object {
			or.Fail(cerr.New(cerr.BadRequest, "%s must be an object", or.Field("client_capabilities")))
		}
	}
	var err error
	fault := readFault(or)
	fault.Endpoint = o.Endpoint
	if o.Failure, o.FailureDetail, err = continuity.HostFailure(fault); err != nil && !or.Failed() {
		or.Fail(err)
	}
	o.PageCapReached = or.Bool("page_cap_reached")
	if or.Has("stray_lines") && !or.Failed() {
		o.StrayLines = wholeInt(or, "stray_lines", 0)
	}
	o.Pages = or.Pages("pages")
	o.Features = readFeatures(or)
	o.Launched = readLaunched(or)
	switch {
	case or.Failed():
	case o.Failure == "" && !or.Has("pages"):
		or.Fail(cerr.New(cerr.BadRequest, "%s needs pages, or a failure saying why there are none", ob.Path))
	case len(o.Pages) > tools.MaxPages:
		// More pages than one check compares: the server kept handing out
		// cursors. That is the server's doing, an observation like any
		// list that was not read whole, never a refused request.
		o.Pages, o.PageCapReached = o.Pages[:tools.MaxPages], true
	}
	return o, or.Err()
}

// observedSource reads the observed member a make_lock or approve request
// may give instead of a tool source and a server: the same facts
// continuity_check takes. It answers the object the tool list is read from
// (observed itself: its pages and page_cap_reached) and the server a
// crawlcheck lockfile pins of them — the endpoint that answered, the
// negotiated protocol version, and serverInfo only when it is an object —
// so that no host decides which facts a lockfile pins. Without observed,
// the request itself is the source and its server member (serverOf) the
// server. Facts that hold no tool list (a failure) are refused: a lockfile
// pins the whole list or nothing.
func observedSource(rd *req.Reader) (src *req.Reader, srv approvedSource) {
	if !rd.Has("observed") {
		return rd, approvedSource{Server: serverOf(rd)}
	}
	for _, f := range []string{"tools", "pages", "page_cap_reached", "server"} {
		if rd.Has(f) {
			rd.Fail(cerr.New(cerr.BadRequest, "give either %s or %s, not both", rd.Field("observed"), rd.Field(f)))
			return rd, srv
		}
	}
	ob, _ := rd.Object("observed")
	if rd.Failed() {
		return rd, srv
	}
	o, err := readObserved(ob)
	switch {
	case !rd.Fail(err):
	case o.Failure != "":
		rd.Fail(cerr.New(cerr.BadRequest, "%s holds no tool list (%s: %s): a lockfile pins the whole list or nothing", ob.Path, o.Failure, canon.Str(o.FailureDetail)))
	case o.HandshakeErr != nil:
		rd.Fail(cerr.New(cerr.BadRequest, "%s.handshake_result could not be read (%s): a lockfile pins what the handshake said, or is made without it", ob.Path, o.HandshakeErr))
	}
	if err := endpoint.CheckHost(o.Endpoint); err != nil {
		rd.Fail(cerr.New(cerr.BadRequest, "%s.endpoint %s %v", ob.Path, canon.Str(clipText(o.Endpoint)), err))
		return rd, srv
	}
	srv.Server = lock.Server{URL: endpoint.Canonical(o.Endpoint), ProtocolVersion: o.ProtocolVersion}
	srv.Server.ClientCapabilities = o.ClientCapabilities
	if o.ServerInfo.Kind() == canon.Object {
		srv.Info = o.ServerInfo
	}
	srv.handshake, srv.instructions, srv.serverInfo = o.HandshakeRead, o.Instructions, o.ServerInfo
	srv.features = o.Features
	srv.launched = o.Launched.Package
	return ob.Read(), srv
}

// sourceTools reads the tool list from src (the request, or its observed:
// observedSource) and keeps its first error on rd.
func sourceTools(rd *req.Reader, src *req.Reader) tools.Observed {
	if rd.Failed() {
		return tools.Observed{}
	}
	obs := toolSource(src)
	rd.Fail(src.Err())
	return obs
}

func evidenceOf(rd *req.Reader) []policy.Finding {
	var out []policy.Finding
	rd.Objects("evidence", "{observation, detail}", names(evidenceFields), func(_ int, o *req.Reader) {
		name := o.Str("observation", true)
		if o.Failed() {
			return
		}
		if !evidenceObservations[policy.Observation(name)] {
			o.Fail(cerr.New(cerr.BadRequest, "%s.observation %q is not one a host may report (evidence_expired, signature_invalid, key_unknown, key_retired, server_identity_mismatch, decision_refused, service_unavailable)", o.O.Path, name))
			return
		}
		out = append(out, policy.Finding{Observation: policy.Observation(name), Detail: o.Value("detail")})
	})
	return out
}

// readFault reads a host's failure facts (failure, failure_detail,
// failure_at, failure_page, timeout_ms): the same members in
// continuity_check's observed and in lock_check.
func readFault(rd *req.Reader) continuity.Fault {
	f := continuity.Fault{
		Failure: rd.OneOf("failure", "", continuity.HostFailures...),
		Detail:  rd.Str("failure_detail", false),
		At:      rd.OneOf("failure_at", "", continuity.AtHandshake, continuity.AtToolsList),
	}
	if rd.Has("failure_page") && !rd.Failed() {
		f.Page = positiveInt(rd, "failure_page")
	}
	if rd.Has("timeout_ms") && !rd.Failed() {
		f.TimeoutMS = positiveInt(rd, "timeout_ms")
	}
	f.Command = rd.Str("failure_command", false)
	if rd.Has("exit_status") && !rd.Failed() {
		f.ExitStatus, f.HasExit = wholeInt(rd, "exit_status", 0), true
	}
	f.StderrTail = rd.Str("stderr_tail", false)
	f.ResourceMetadata = rd.Str("resource_metadata", false)
	return f
}
