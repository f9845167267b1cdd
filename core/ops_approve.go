package core

import (
	"slices"
	"strings"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/continuity"
	"github.com/crawlcheck/verifier/core/internal/endpoint"
	"github.com/crawlcheck/verifier/core/internal/features"
	"github.com/crawlcheck/verifier/core/internal/lock"
	"github.com/crawlcheck/verifier/core/internal/policy"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

// confirmable are the observations an approval may leave unnamed: no change
// (unchanged), a pin dropped for a tool no longer offered (tool_removed:
// dropping it makes nothing callable), and an approval that is only old
// (baseline_stale: re-approving is the cure). Every other observation about
// a tool must be named by the person approving; every other observation
// about the session (a different server, an untrusted baseline, evidence, a
// policy version, a list not read whole) is never resolved by approving
// tools, so it refuses the approval.
//
// serverInfo's change is confirmable too: it is self-reported and recorded,
// never trusted for identity. A change of the server's instructions is
// approved by approve_instructions, the person's act of having read its
// word diff, never by naming tools.
var confirmable = map[string]bool{
	string(policy.Unchanged): true, string(policy.ToolRemoved): true, string(policy.BaselineStale): true,
	string(policy.ServerInfoChanged): true,
}

// sighting is one observation of the record an approval is judged by.
type sighting struct {
	tool        string // "" for an observation about the session
	observation string
}

// approval is what a record says about the check it was made by.
type approval struct {
	sightings []sighting
	// made is the record's claim of what it was made from, compared with
	// the request's lock and tools before anything is written.
	format, serverName, lockSHA256, toolsSHA256 string
	// server is what a continuity record saw of the server; null for a
	// lock_check answer, which says nothing about it.
	server canon.Value
	// recomputed is set for a lock_check answer: it was recomputed from the
	// request's lock and tools, so it was made from them.
	recomputed bool
}

// opApprove re-approves the tools a record was made from, as a person's act:
// the names are the tools whose changes the person was shown and approved.
// It refuses (approved false, changing nothing) unless every observation
// that is not confirmable names a tool among names, and every name has a
// change: approving one tool must never approve another's change on the
// side. Otherwise it answers the new lockfile, of the format of the old one
// (for an agentgate.lock, the old file with the compared server replaced).
func opApprove(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	f := parseLock(rd, "lock")
	names := rd.Strings("names")
	approveInstructions := rd.Bool("approve_instructions")
	approveFeatures := rd.Bool("approve_features")
	at := rd.Time("approved_at")
	serverName := rd.Str("server_name", false)
	doc := rd.RequiredDoc("record")
	src, srv := observedSource(rd)
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	var a approval
	var obs tools.Observed
	kind, _ := doc.Get("kind")
	switch k, _ := kind.Str(); k {
	case continuity.RecordKind:
		a = recordApproval(rd, doc)
	case lockCheckKind:
		a, obs = lockCheckApproval(rd, src, doc, f, serverName)
	default:
		rd.Fail(cerr.New(cerr.RecordInvalid, "%s is neither a %s nor a %s answer (kind %s)", rd.Field("record"), continuity.RecordKind, lockCheckKind, kind))
	}
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	if approveInstructions && !srv.handshake {
		rd.Fail(cerr.New(cerr.BadRequest, "%s needs %s: the instructions approved are those the handshake gave", rd.Field("approve_instructions"), rd.Field("observed.handshake_result")))
		return canon.Value{}, rd.Err()
	}
	if approveFeatures && srv.features.Lists == nil && srv.features.UI == nil {
		rd.Fail(cerr.New(cerr.BadRequest, "%s needs %s: the prompts, resources and templates approved are those the host read", rd.Field("approve_features"), rd.Field("observed.features")))
		return canon.Value{}, rd.Err()
	}
	if approveFeatures && f.Agentgate != nil {
		rd.Fail(cerr.New(cerr.BadRequest, "%s: an agentgate.lock pins no prompts, resources or templates", rd.Field("approve_features")))
		return canon.Value{}, rd.Err()
	}
	approved := approvedParts{instructions: approveInstructions, features: approveFeatures}
	// A lock_check answer was recomputed from the request's tools: what the
	// new lockfile would pin beyond its observations is judged with them. A
	// record's own observations are judged first (a record that compared
	// nothing is refused before its tools are read), then with those.
	if a.recomputed {
		a.sightings = append(a.sightings, pinnedChanges(a.sightings, f.Crawlcheck, srv, obs.Tools)...)
	}
	if refusal, refused := judgeApproval(approved.drop(a.sightings, names), names); refused {
		return refusal, nil
	}
	if !a.recomputed {
		obs = recordMadeFrom(rd, src, f, a, serverName)
		if err := rd.Err(); err != nil {
			return canon.Value{}, err
		}
		if more := pinnedChanges(a.sightings, f.Crawlcheck, srv, obs.Tools); len(more) > 0 {
			if refusal, refused := judgeApproval(approved.drop(append(a.sightings, more...), names), names); refused {
				return refusal, nil
			}
		}
	}
	var newLock []byte
	chosen := canon.NullValue()
	if f.Agentgate != nil {
		ag := f.Agentgate
		ag.GeneratedBy, ag.GeneratedAt = policy.EngineVersion, at
		ag.Put(lock.NewAgentgateServer(a.serverName, obs.Tools))
		newLock, chosen = ag.Bytes(), canon.Str(a.serverName)
	} else {
		server := approvedServer(rd, srv.Server, f.Crawlcheck, a.server)
		l := lock.NewCrawlcheck(server, at, obs.Tools, approvedCoverage(srv, f.Crawlcheck, obs.Tools))
		// Approving tools approves no prompt, resource or UI template: the
		// old lockfile's features are kept as they were (issue 35), so a
		// change of one stays withheld until the person approves the lists
		// as offered now (approve_features) or pins them anew (lock).
		l.Features = f.Crawlcheck.Features
		if approveFeatures {
			feats, err := lockFeatures(srv.features, obs.Tools)
			if err != nil {
				return canon.Value{}, err
			}
			l.Features = approvedFeatures(f.Crawlcheck.Features, feats, srv.features)
		}
		// Approving tools approves no other package: the old pin stays (a
		// record whose package changed is never approvable, its
		// observation being the session's).
		l.Launched = f.Crawlcheck.Launched
		l.Seal(nil)
		newLock = l.Bytes()
	}
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	return canon.Obj(
		canon.M("approved", canon.BoolOf(true)),
		canon.M("lock", canon.Str(string(newLock))),
		canon.M("format", canon.Str(f.Format())),
		canon.M("server_name", chosen),
	), nil
}

// approvedParts are what a person approved beside the tools they named:
// the server's instructions (approve_instructions, after reading their
// word diff) and the prompts, resources, resource templates and ui://
// templates as offered now (approve_features, after reading each changed
// item and its scan).
type approvedParts struct {
	instructions, features bool
}

// featureObservations are the observations approve_features approves: a
// changed, added or removed item, and a changed ui:// template (which the
// record names under the tool that names it). features_incomplete, a list
// not read whole, is the session's and never approvable: nothing whole was
// shown.
var featureObservations = map[string]bool{
	string(policy.PromptAdded): true, string(policy.PromptRemoved): true, string(policy.PromptChanged): true,
	string(policy.ResourceAdded): true, string(policy.ResourceRemoved): true, string(policy.ResourceChanged): true,
	string(policy.ResourceTemplateAdded): true, string(policy.ResourceTemplateRemoved): true, string(policy.ResourceTemplateChanged): true,
	string(policy.UITemplateChanged): true,
}

// drop removes from seen the observations the person approved beside the
// tools: instructions_changed with approve_instructions, the items'
// observations with approve_features. A ui_template_changed of a tool the
// person named stays, approved by that name as before, so a host that
// names every tool a record names is not told the tool has no change.
func (p approvedParts) drop(seen []sighting, names []string) []sighting {
	if !p.instructions && !p.features {
		return seen
	}
	return slices.DeleteFunc(slices.Clone(seen), func(s sighting) bool {
		return p.instructions && s.observation == string(policy.InstructionsChanged) ||
			p.features && featureObservations[s.observation] && !(s.tool != "" && slices.Contains(names, s.tool))
	})
}

// approvedFeatures is the features extension of a lockfile whose lists a
// person approved as offered now (approve_features): each list the host
// read is pinned as make_lock pins it (lockFeatures, read), and a list it
// did not read keeps the old lockfile's pin, as do the ui:// templates
// when it read none: approving what was shown never drops a pin of what
// was not.
func approvedFeatures(old, read *lock.Features, observed continuity.ObservedFeatures) *lock.Features {
	if old == nil {
		return read
	}
	out := &lock.Features{Lists: map[string]map[string]features.Hashes{}, UI: old.UI}
	for name, items := range old.Lists {
		out.Lists[name] = items
	}
	for name, items := range read.Lists {
		out.Lists[name] = items
	}
	if observed.UI != nil {
		out.UI = read.UI
	}
	return out
}

// pinnedChanges are the changes the new lockfile would pin that seen does
// not name: what the old lockfile's coverage says of the tools and the
// handshake approved (ts, srv) against what it approved. A lock_check answer
// compares only the seed's four parts, and a record is tied to the tools by
// tools_sha256, which covers those parts alone; without this, a title,
// _meta or instructions change the person was never asked about would be
// pinned on the side.
func pinnedChanges(seen []sighting, old *lock.Crawlcheck, srv approvedSource, ts []tools.Tool) []sighting {
	if old == nil || old.Coverage == nil {
		return nil
	}
	cov := old.Coverage
	var out []sighting
	add := func(s sighting) {
		if !slices.Contains(seen, s) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for i := range ts {
		approved, ok := cov.Tools[ts[i].Name]
		if !ok {
			continue // an added tool: named as tool_added
		}
		for _, m := range tools.Members {
			if !canon.Same(ts[i].MemberHash(m), approved[m]) {
				add(sighting{ts[i].Name, string(continuity.MemberObservation(m))})
			}
		}
	}
	if srv.handshake && cov.HasInstructions && !canon.Equal(srv.instructions, cov.Instructions) {
		add(sighting{observation: string(policy.InstructionsChanged)})
	}
	return out
}

// approvedCoverage is the coverage of a re-approved list: its tools'
// members, and what the handshake said when the request hands it over;
// otherwise the old lockfile's record of the handshake is kept (an
// instructions change cannot be approved without the handshake that made
// it, approve_instructions).
func approvedCoverage(srv approvedSource, old *lock.Crawlcheck, ts []tools.Tool) *lock.Coverage {
	if srv.handshake || old.Coverage == nil {
		return srv.coverage(ts)
	}
	c := lock.NewCoverage(ts, false, canon.NullValue(), canon.NullValue())
	c.Instructions, c.HasInstructions, c.ServerInfoSHA256 = old.Coverage.Instructions, old.Coverage.HasInstructions, old.Coverage.ServerInfoSHA256
	return c
}

// judgeApproval applies the approval rule to a record's observations and
// the names a person approved; refused is true with the refusal answer.
func judgeApproval(seen []sighting, names []string) (canon.Value, bool) {
	named := map[string]bool{}
	var unnamed []canon.Value
	var listed []string
	for _, s := range seen {
		switch {
		case s.tool != "" && slices.Contains(names, s.tool):
			// A named tool_removed is an approved removal: a change too.
			named[s.tool] = true
		case confirmable[s.observation]:
		default:
			unnamed = append(unnamed, canon.Obj(
				canon.M("tool", canon.StrOrNull(s.tool, s.tool != "")),
				canon.M("observation", canon.Str(s.observation)),
			))
			if s.tool != "" {
				listed = append(listed, canon.Str(s.tool).String()+" ("+s.observation+")")
			} else {
				listed = append(listed, s.observation)
			}
		}
	}
	notChanged := []string{}
	for _, n := range names {
		if !named[n] && !slices.Contains(notChanged, n) {
			notChanged = append(notChanged, n)
		}
	}
	if len(unnamed) == 0 && len(notChanged) == 0 {
		return canon.Value{}, false
	}
	reason := "not approved"
	if len(listed) > 0 {
		reason += "; unnamed: " + strings.Join(listed, ", ")
	}
	if len(notChanged) > 0 {
		quoted := make([]string, len(notChanged))
		for i, n := range notChanged {
			quoted[i] = canon.Str(n).String()
		}
		reason += "; no change to approve for " + strings.Join(quoted, ", ")
	}
	return canon.Obj(
		canon.M("approved", canon.BoolOf(false)),
		canon.M("lock", canon.NullValue()),
		canon.M("unnamed", canon.Arr(unnamed...)),
		canon.M("not_changed", canon.Strs(notChanged)),
		canon.M("reason", canon.Str(reason)),
	), true
}

// recordApproval reads what an approval needs of a continuity record,
// whose record_sha256 must match it.
func recordApproval(rd *req.Reader, doc canon.Value) approval {
	bad := func(what string) approval {
		rd.Fail(cerr.New(cerr.RecordInvalid, "%s: %s", rd.Field("record"), what))
		return approval{}
	}
	v, err := continuity.VerifyRecord(doc)
	if !rd.In("record", err) {
		return approval{}
	}
	if !v.Valid {
		return bad(v.Reason)
	}
	var a approval
	list, _ := doc.Get("observations")
	if list.Kind() != canon.Array {
		return bad("observations must be an array")
	}
	for i, o := range list.Elems() {
		obsV, _ := o.Get("observation")
		toolV, _ := o.Get("tool")
		name, ok := obsV.Str()
		tool, isStr := toolV.Str()
		if o.Kind() != canon.Object || !ok || !isStr && !toolV.IsNull() {
			return bad("observations[" + itoa(i) + "] must have an observation string and a tool string or null")
		}
		a.sightings = append(a.sightings, sighting{tool: tool, observation: name})
	}
	str := func(parent, key string) (string, bool) {
		p, _ := doc.Get(parent)
		x, _ := p.Get(key)
		s, ok := x.Str()
		return s, ok || x.IsNull()
	}
	var okF, okN, okS, okT bool
	a.format, okF = str("baseline", "format")
	a.serverName, okN = str("baseline", "server_name")
	a.lockSHA256, okS = str("baseline", "sha256")
	a.toolsSHA256, okT = str("observed", "tools_sha256")
	if !okF || !okN || !okS || !okT {
		return bad("baseline.format, baseline.server_name, baseline.sha256 and observed.tools_sha256 must be strings or null")
	}
	if a.server, _ = doc.Get("server"); a.server.Kind() != canon.Object {
		return bad("server must be an object")
	}
	return a
}

// recordMadeFrom reads the request's tools and checks that the continuity
// record was made from them and from the request's lockfile (and, for an
// agentgate.lock, its server_name entry).
func recordMadeFrom(rd, src *req.Reader, f lock.File, a approval, serverName string) tools.Observed {
	switch {
	case a.format != f.Format() || a.lockSHA256 != continuity.LockDigest(f):
		rd.Fail(cerr.New(cerr.BadRequest, "%s was not made against %s (its baseline is another lockfile)", rd.Field("record"), rd.Field("lock")))
	case serverName != "" && serverName != a.serverName:
		rd.Fail(cerr.New(cerr.BadRequest, "%s %s is not the server the record compared (%s)", rd.Field("server_name"), canon.Str(serverName), canon.Str(a.serverName)))
	case f.Agentgate != nil:
		if _, ok := f.Agentgate.Server(a.serverName); !ok {
			rd.Fail(cerr.New(cerr.BadRequest, "%s compared server %s, which %s does not have", rd.Field("record"), canon.Str(a.serverName), rd.Field("lock")))
		}
	}
	obs := sourceTools(rd, src)
	switch {
	case rd.Failed():
	case obs.Truncated != "":
		rd.Fail(cerr.New(cerr.BadRequest, "the tool list is truncated (%s): a lockfile pins the whole list or nothing", obs.Truncated))
	case obs.ListSHA256() != a.toolsSHA256:
		rd.Fail(cerr.New(cerr.BadRequest, "%s was not made from these tools (its observed.tools_sha256 differs)", rd.Field("record")))
	}
	return obs
}

// lockCheckApproval recomputes the lock_check answer from the request's lock
// and tools and requires the record to be exactly that answer; its
// observations are those a continuity check makes of the same difference.
func lockCheckApproval(rd, src *req.Reader, doc canon.Value, f lock.File, serverName string) (approval, tools.Observed) {
	a := approval{server: canon.NullValue()}
	if !rd.Fail(checkSealed(f)) {
		return a, tools.Observed{}
	}
	base, err := baselineOf(f, serverName)
	if !rd.Fail(err) {
		return a, tools.Observed{}
	}
	a.format, a.serverName = f.Format(), base.AgentgateName
	if u, _ := doc.Get("unreachable"); u.Kind() == canon.Object {
		reasonV, _ := u.Get("reason")
		reason, _ := reasonV.Str()
		if !unreachableReasons[reason] {
			rd.Fail(cerr.New(cerr.RecordInvalid, "%s.unreachable.reason must be one lock_check answers, got %s", rd.Field("record"), reasonV))
		}
		a.sightings = []sighting{{observation: reason}}
		return a, tools.Observed{}
	}
	answer, d, obs := checkTools(rd, src.O, base)
	if rd.Failed() {
		return a, obs
	}
	if !canon.Equal(answer, doc) {
		rd.Fail(cerr.New(cerr.BadRequest, "%s is not the lock_check answer of %s and these tools", rd.Field("record"), rd.Field("lock")))
		return a, obs
	}
	a.recomputed = true
	for _, n := range d.Added {
		a.sightings = append(a.sightings, sighting{n, string(policy.ToolAdded)})
	}
	for _, n := range d.Removed {
		a.sightings = append(a.sightings, sighting{n, string(policy.ToolRemoved)})
	}
	for _, m := range d.Modified {
		if m.Unknown {
			a.sightings = append(a.sightings, sighting{m.Name, string(policy.ToolChanged)})
		}
		for _, p := range m.Parts {
			if o, ok := partObservation[p]; ok {
				a.sightings = append(a.sightings, sighting{m.Name, string(o)})
			}
		}
	}
	return a, obs
}

// unreachableReasons are the reasons of a lock_check answer that compared
// nothing: none can be approved.
var unreachableReasons = map[string]bool{
	continuity.FailureUnavailable: true, continuity.FailureTimeout: true,
	string(policy.ResponseMalformed): true, string(policy.ToolListTruncated): true,
}

// partObservation names the observation of a changed part, as the
// continuity check does.
var partObservation = map[string]policy.Observation{
	tools.PartDescription: policy.DescriptionChanged,
	tools.PartInputSchema: policy.SchemaChanged,
	tools.PartAnnotations: policy.AnnotationsChanged,
}

// approvedServer is the server a new crawlcheck lockfile pins: the
// request's server, or the server of its observed facts, when given
// (given: observedSource's); else what the continuity record saw (the
// endpoint that answered, its protocol version and serverInfo when an
// object); else, for a lock_check answer, which says nothing about the
// server, the server the old lockfile pinned.
func approvedServer(rd *req.Reader, given lock.Server, old *lock.Crawlcheck, seen canon.Value) lock.Server {
	if rd.Has("server") || rd.Has("observed") {
		return given
	}
	if seen.Kind() != canon.Object {
		return old.Server
	}
	var s lock.Server
	u, _ := seen.Get("observed_url")
	s.URL, _ = u.Str()
	pv, _ := seen.Get("protocol_version")
	s.ProtocolVersion, _ = pv.Str()
	if info, _ := seen.Get("info"); info.Kind() == canon.Object {
		s.Info = info
	}
	if old != nil {
		// A record does not carry them: the client is the one the old
		// lockfile was made with.
		s.ClientCapabilities = old.Server.ClientCapabilities
	}
	return s
}

// opEndpoint is how an endpoint is written into a record, and read back:
// given a server's url or command, the endpoint string a record carries (an
// http or https URL as given, or "stdio:" and the command line,
// endpoint.Stdio); given a written endpoint (a lockfile's server.url), the
// url or the argv a host reaches it by (endpoint.Split), so no host splits
// a command line by a rule of its own.
func opEndpoint(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	var (
		ep   string
		argv []string
	)
	given := 0
	for _, f := range []string{"url", "command", "endpoint"} {
		if rd.Has(f) {
			given++
		}
	}
	switch {
	case given > 1:
		rd.Fail(cerr.New(cerr.BadRequest, "give one of %s, %s and %s", rd.Field("url"), rd.Field("command"), rd.Field("endpoint")))
	case rd.Has("url"):
		ep = rd.Str("url", true)
		switch {
		case rd.Failed():
		case !endpoint.IsHTTP(ep):
			rd.Fail(cerr.New(cerr.BadRequest, "%s must be an http or https URL with a host, got %s", rd.Field("url"), canon.Str(clipText(ep))))
		case endpoint.CheckHost(ep) != nil:
			rd.Fail(cerr.New(cerr.BadRequest, "%s %s %v", rd.Field("url"), canon.Str(clipText(ep)), endpoint.CheckHost(ep)))
		}
	case rd.Has("command"):
		argv = rd.Strings("command")
		if !rd.Failed() && len(argv) == 0 {
			rd.Fail(cerr.New(cerr.BadRequest, "%s must name a program", rd.Field("command")))
		}
		ep = endpoint.Stdio(argv)
	case rd.Has("endpoint"):
		written := rd.Str("endpoint", true)
		if !rd.Failed() {
			var err error
			if _, argv, err = endpoint.Split(written); err != nil {
				rd.Fail(cerr.New(cerr.BadRequest, "%s %s %v", rd.Field("endpoint"), canon.Str(clipText(written)), err))
			}
			ep = written
			if argv != nil {
				ep = endpoint.Stdio(argv)
			}
		}
	default:
		rd.Fail(cerr.New(cerr.BadRequest, "%s, %s or %s is required", rd.Field("url"), rd.Field("command"), rd.Field("endpoint")))
	}
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	// The endpoint a record or lockfile writes is its canonical form, with
	// what looks like a credential hidden (endpoint.Canonical); the url or
	// argv a host reaches the server by is as given or as written.
	return endpointAnswer(endpoint.Canonical(ep), ep, argv), nil
}

// endpointAnswer is {endpoint, url, command}: the endpoint as a record
// writes it, and either the URL a host connects to or its argv.
func endpointAnswer(ep, url string, argv []string) canon.Value {
	if argv == nil {
		return canon.Obj(canon.M("endpoint", canon.Str(ep)), canon.M("url", canon.Str(url)), canon.M("command", canon.NullValue()))
	}
	return canon.Obj(canon.M("endpoint", canon.Str(ep)), canon.M("url", canon.NullValue()), canon.M("command", canon.Strs(argv)))
}

func itoa(n int) string { return canon.Int(int64(n)).String() }

// clipText shortens a request string quoted in a message.
func clipText(s string) string {
	if len(s) > 200 {
		return strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}
