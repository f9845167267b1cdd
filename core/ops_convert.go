package core

import (
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/diff"
	"github.com/crawlcheck/verifier/core/internal/lock"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

// opConvertLock converts between the formats where the information allows.
// crawlcheck → agentgate is computed from the per-part hashes and the kept
// description texts; annotations, the server and the signature are lost.
// agentgate → crawlcheck cannot be computed from hashes (annotations and
// canonical descriptions are not in an agentgate.lock): it needs the tools,
// which must match the agentgate entry, and their annotations are taken as
// given, unpinned.
func opConvertLock(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	f := parseLock(rd, "lock")
	to := rd.OneOf("to", "", "crawlcheck", "agentgate")
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	switch {
	case to == "":
		return canon.Value{}, cerr.New(cerr.BadRequest, "%s is required (crawlcheck or agentgate)", rd.Field("to"))
	case to == "agentgate" && f.Crawlcheck != nil:
		return crawlcheckToAgentgate(rd, f.Crawlcheck)
	case to == "crawlcheck" && f.Agentgate != nil:
		return agentgateToCrawlcheck(rd, f.Agentgate)
	}
	return canon.Value{}, cerr.New(cerr.BadRequest, "the lockfile is already a %s", f.Format())
}

func crawlcheckToAgentgate(rd *req.Reader, l *lock.Crawlcheck) (canon.Value, error) {
	name, by := agentgateEntry(rd)
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	if l.Parts == nil {
		return canon.Value{}, cerr.New(cerr.LockInvalid, "a crawlcheck lockfile without per-part hashes cannot be converted: lock the tools again")
	}
	s := lock.AgentgateServer{Name: name}
	for _, e := range l.Tools {
		p := l.Parts[e.Name]
		desc := ""
		switch text, ok := l.Descriptions[e.Name]; {
		case tools.IsAbsentPart(p.Description):
		case !ok:
			return canon.Value{}, cerr.New(cerr.LockInvalid, "tool %q has a description whose text the lockfile does not keep", e.Name)
		case canon.SHA256Hex(canon.Str(text)) != p.Description:
			return canon.Value{}, cerr.New(cerr.LockInvalid, "descriptions.%s does not match its part hash", e.Name)
		default:
			desc = text
		}
		t := lock.AgentgateTool{Name: e.Name, Agentgate: tools.AgentgateHashes(e.Name, desc, p.InputSchema)}
		s.Tools = append(s.Tools, t)
	}
	built := lock.NewAgentgateServerFromHashes(s)
	a := &lock.Agentgate{GeneratedBy: by, GeneratedAt: l.ApprovedAt}
	a.Put(built)
	lost := []string{"annotations (agentgate.lock has no annotation hash)", "server (endpoint, protocol version, server info)", "tool sha256 and tools_sha256"}
	if l.Signature != "" {
		lost = append(lost, "signature (agentgate.lock is unsigned)")
	}
	if !l.ScanAtApproval.IsNull() {
		lost = append(lost, "scan_at_approval")
	}
	return canon.Obj(canon.M("lock", canon.Str(string(a.Bytes()))), canon.M("lost", canon.Strs(lost))), nil
}

func agentgateToCrawlcheck(rd *req.Reader, a *lock.Agentgate) (canon.Value, error) {
	name := rd.Str("name", false)
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	base, err := a.Baseline(name)
	if err != nil {
		return canon.Value{}, err
	}
	if !rd.Has("tools") && !rd.Has("pages") {
		return canon.Value{}, cerr.New(cerr.BadRequest, "converting an agentgate.lock needs the tools (%s or %s): its hashes cannot be turned into crawlcheck tool hashes", rd.Field("tools"), rd.Field("pages"))
	}
	obs := toolSource(rd)
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	if d := diff.Against(base, obs.Tools); !d.Same() || obs.Truncated != "" {
		return canon.Value{}, cerr.New(cerr.BadRequest, "the tools given do not match servers.%s of the agentgate.lock (added %v, removed %v, %d modified): approve them first", base.AgentgateName, d.Added, d.Removed, len(d.Modified))
	}
	srv := serverOf(rd)
	at := a.GeneratedAt
	if rd.Has("approved_at") {
		at = rd.Time("approved_at")
	}
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	l := lock.NewCrawlcheck(srv, at, obs.Tools, lock.NewCoverage(obs.Tools, false, canon.NullValue(), canon.NullValue()))
	l.Seal(nil)
	lost := []string{"annotations were not pinned by the agentgate.lock: they are taken from the tools given"}
	return canon.Obj(canon.M("lock", canon.Str(string(l.Bytes()))), canon.M("lost", canon.Strs(lost))), nil
}
