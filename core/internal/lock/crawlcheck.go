// Package lock reads, validates and writes the two lockfile formats the core
// knows — crawlcheck-mcp-lock v1 (docs/spec/crawlcheck-mcp-lock.schema.json)
// and agentgate.lock v1 (docs/spec/agentgate.lock.schema.json) — and presents
// either as a Baseline to compare observed tools against.
//
// Both are written deterministically: a documented member order, tools sorted
// by name (UTF-16 code units), two-space indentation, a trailing newline. A
// lockfile of an unknown kind or version is refused with a message naming
// it, never read as something else.
package lock

import (
	"sync"
	"time"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/scan"
	"github.com/crawlcheck/verifier/core/internal/tools"
	"github.com/crawlcheck/verifier/core/timefmt"
)

// Kind is the kind of a crawlcheck lockfile.
const Kind = "crawlcheck-mcp-lock"

// Server is what a lockfile says about the server it was approved for.
type Server struct {
	URL             string      // the endpoint: an http(s) URL, or "stdio:<command line>"
	ProtocolVersion string      // "" when not recorded
	Info            canon.Value // serverInfo as the server sent it; null when not recorded
	// ClientCapabilities are the capabilities the client that read the list
	// declared in initialize (a server may offer other tools to another
	// client); null when not recorded.
	ClientCapabilities canon.Value
}

// Entry is one locked tool.
type Entry struct {
	Name   string
	SHA256 string
}

// Crawlcheck is a crawlcheck-mcp-lock v1 lockfile.
type Crawlcheck struct {
	Server         Server
	ApprovedAt     time.Time
	ToolsSHA256    string
	Tools          []Entry                // sorted by name
	Parts          map[string]tools.Parts // nil: a legacy lock without per-part hashes
	Coverage       *Coverage              // nil: a lock without the coverage extension
	Features       *Features              // nil: a lock without the features extension (prompts, resources, UI templates)
	Launched       *Launched              // nil: a lock that pins no launched package (launched.go)
	Provenance     *Provenance            // nil: a lock that states no provenance
	Descriptions   map[string]string
	ScanAtApproval canon.Value // carried verbatim when read (whatever rules made it); null when absent
	SHA256         string      // "" when absent
	Signature      string      // "" when absent

	doc     canon.Value // the document as parsed, for digests
	digests *digestMemo // the digests, once KeepDigests asked for them to be kept
}

var crawlcheckMembers = map[string]bool{"kind": true, "v": true, "server": true, "approved_at": true,
	"tools_sha256": true, "count": true, "tools": true, "parts": true, CoverageMember: true, FeaturesMember: true, LaunchedMember: true, ProvenanceMember: true, "descriptions": true,
	"scan_at_approval": true, "sha256": true, "signature": true}

// parseCrawlcheck validates a crawlcheck lockfile whose kind was checked.
func parseCrawlcheck(doc canon.Value) (*Crawlcheck, error) {
	bad := func(format string, args ...any) (*Crawlcheck, error) {
		return nil, cerr.New(cerr.LockInvalid, "crawlcheck lockfile: "+format, args...)
	}
	if v, _ := doc.Get("v"); v.String() != "1" {
		return nil, cerr.New(cerr.LockUnsupported, "crawlcheck lockfile version v=%s is not supported (this core reads v=1)", v)
	}
	for _, m := range doc.Members() {
		if !crawlcheckMembers[m.Key] {
			return bad("unknown member %q", m.Key)
		}
	}
	l := &Crawlcheck{doc: doc}

	srv, ok := doc.Get("server")
	if !ok || srv.Kind() != canon.Object {
		return bad("\"server\" must be an object")
	}
	for _, m := range srv.Members() {
		switch m.Key {
		case "url":
			if l.Server.URL, ok = m.Value.Str(); !ok || l.Server.URL == "" {
				return bad("server.url must be a non-empty string")
			}
		case "protocol_version":
			if l.Server.ProtocolVersion, ok = m.Value.Str(); !ok {
				return bad("server.protocol_version must be a string")
			}
		case "info":
			if m.Value.Kind() != canon.Object {
				return bad("server.info must be an object")
			}
			l.Server.Info = m.Value
		case "client_capabilities":
			if m.Value.Kind() != canon.Object {
				return bad("server.client_capabilities must be an object")
			}
			l.Server.ClientCapabilities = m.Value
		default:
			return bad("unknown member server.%s", m.Key)
		}
	}

	at, err := timeMember(doc, "approved_at")
	if err != nil {
		return nil, err
	}
	l.ApprovedAt = at

	list, _ := doc.Get("tools")
	if list.Kind() != canon.Array {
		return bad("\"tools\" must be an array")
	}
	names := map[string]bool{}
	hashes := make([]string, 0, len(list.Elems()))
	for i, e := range list.Elems() {
		n, _ := e.Get("name")
		h, _ := e.Get("sha256")
		name, ok1 := n.Str()
		hash, ok2 := h.Str()
		if e.Kind() != canon.Object || len(e.Members()) != 2 || !ok1 || name == "" || !ok2 || !tools.IsHexHash(hash) {
			return bad("tools[%d] must be {\"name\": non-empty string, \"sha256\": 64 lowercase hex}", i)
		}
		if names[name] {
			return bad("tool %q is listed twice", name)
		}
		names[name] = true
		l.Tools = append(l.Tools, Entry{Name: name, SHA256: hash})
		hashes = append(hashes, hash)
	}
	if c, _ := doc.Get("count"); c.String() != canon.Int(int64(len(l.Tools))).String() {
		return bad("count is %s but %d tools are listed", c, len(l.Tools))
	}
	ts, _ := doc.Get("tools_sha256")
	if l.ToolsSHA256, _ = ts.Str(); l.ToolsSHA256 != tools.ToolsSHA256(hashes) {
		return bad("tools_sha256 does not match the listed tool hashes")
	}

	if pv, ok := doc.Get("parts"); ok {
		if pv.Kind() != canon.Object || len(pv.Members()) != len(l.Tools) {
			return bad("\"parts\" must be an object with one member per tool")
		}
		l.Parts = make(map[string]tools.Parts, len(l.Tools))
		for _, m := range pv.Members() {
			if !names[m.Key] {
				return bad("parts names %q, which is not a locked tool", m.Key)
			}
			p, err := parseParts(m.Key, m.Value)
			if err != nil {
				return nil, err
			}
			l.Parts[m.Key] = p
		}
	}

	if cv, ok := doc.Get(CoverageMember); ok {
		if l.Coverage, err = parseCoverage(cv, names); err != nil {
			return nil, err
		}
	}

	if fv, ok := doc.Get(FeaturesMember); ok {
		if l.Features, err = parseFeatures(fv); err != nil {
			return nil, err
		}
	}
	if lv, ok := doc.Get(LaunchedMember); ok {
		if l.Launched, err = ParseLaunched(lv, "crawlcheck lockfile: launched"); err != nil {
			return nil, err
		}
	}

	if pv, ok := doc.Get(ProvenanceMember); ok {
		if l.Provenance, err = ParseProvenance(pv, "crawlcheck lockfile: provenance"); err != nil {
			return nil, err
		}
	}

	l.Descriptions = map[string]string{}
	if dv, ok := doc.Get("descriptions"); ok {
		if dv.Kind() != canon.Object {
			return bad("\"descriptions\" must be an object")
		}
		for _, m := range dv.Members() {
			s, ok := m.Value.Str()
			if !ok || !names[m.Key] {
				return bad("descriptions.%s must be the string description of a locked tool", m.Key)
			}
			l.Descriptions[m.Key] = s
		}
	}
	if sv, ok := doc.Get("scan_at_approval"); ok {
		if sv.Kind() != canon.Object {
			return bad("scan_at_approval must be an object")
		}
		l.ScanAtApproval = sv
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"sha256", &l.SHA256}, {"signature", &l.Signature}} {
		if v, ok := doc.Get(f.name); ok {
			if *f.dst, ok = v.Str(); !ok || *f.dst == "" {
				return bad("%s must be a non-empty string", f.name)
			}
		}
	}
	if l.SHA256 != "" && !tools.IsHexHash(l.SHA256) {
		return bad("sha256 must be 64 lowercase hex digits")
	}
	tools.SortEntries(l.Tools, func(e Entry) string { return e.Name })
	return l, nil
}

func parseParts(name string, v canon.Value) (tools.Parts, error) {
	var p tools.Parts
	get := func(k string) (string, bool) {
		x, _ := v.Get(k)
		s, ok := x.Str()
		return s, ok && tools.IsHexHash(s)
	}
	var ok1, ok2, ok3, ok4 bool
	p.Name, ok1 = get(tools.PartName)
	p.Description, ok2 = get(tools.PartDescription)
	p.InputSchema, ok3 = get(tools.PartInputSchema)
	p.Annotations, ok4 = get(tools.PartAnnotations)
	if v.Kind() != canon.Object || len(v.Members()) != 4 || !(ok1 && ok2 && ok3 && ok4) {
		return p, cerr.New(cerr.LockInvalid, "crawlcheck lockfile: parts.%s must hold exactly name, description, inputSchema and annotations, each 64 lowercase hex", name)
	}
	return p, nil
}

func timeMember(doc canon.Value, name string) (time.Time, error) {
	v, ok := doc.Get(name)
	s, isStr := v.Str()
	if !ok || !isStr {
		return time.Time{}, cerr.New(cerr.LockInvalid, "lockfile: %s must be an RFC 3339 time string", name)
	}
	t, err := timefmt.Parse(s)
	if err != nil {
		return time.Time{}, cerr.New(cerr.LockInvalid, "lockfile: %s: %s", name, cerr.Message(err))
	}
	return t, nil
}

// Digest is the digest of the document as it is, without sha256 and
// signature: what sha256 and a signature are of.
func (l *Crawlcheck) Digest() string { return l.digest(0) }

// DigestWithoutParts is the digest without the parts, coverage and
// features ("" when the lockfile has none of them): a lockfile signed
// before it had them.
func (l *Crawlcheck) DigestWithoutParts() string { return l.digest(1) }

// DigestWithoutCoverage is the digest without the coverage and features
// extensions ("" when the lockfile has no coverage): a lockfile signed with
// its parts, to which coverage was added after signing.
func (l *Crawlcheck) DigestWithoutCoverage() string { return l.digest(2) }

// DigestWithoutFeatures is the digest without the features extension alone
// ("" when the lockfile has none): a lockfile signed with its parts and
// coverage, to which features were added after signing.
func (l *Crawlcheck) DigestWithoutFeatures() string { return l.digest(3) }

// digestMemo keeps a lockfile's digests, each computed when first asked
// for: a lockfile whose sha256 is its content's (nearly every one) needs
// only the first, and each is a serialization and a hash of nearly the
// whole lockfile (computing all three was a fifth of crawlcheck check
// --tools at 1,000 tools). A cached lockfile is shared between calls, so
// each is computed once under its sync.Once.
type digestMemo struct {
	once [4]sync.Once
	v    [4]string
}

func (l *Crawlcheck) digest(i int) string {
	if l.digests == nil {
		return l.computeDigest(i)
	}
	m := l.digests
	m.once[i].Do(func() { m.v[i] = l.computeDigest(i) })
	return m.v[i]
}

func (l *Crawlcheck) computeDigest(i int) string {
	switch {
	case i == 0:
		return canon.SHA256Hex(l.doc.Without("sha256", "signature"))
	case i == 1 && (l.Parts != nil || l.Coverage != nil || l.Features != nil):
		return canon.SHA256Hex(l.doc.Without("sha256", "signature", "parts", CoverageMember, FeaturesMember))
	case i == 2 && l.Coverage != nil:
		return canon.SHA256Hex(l.doc.Without("sha256", "signature", CoverageMember, FeaturesMember))
	case i == 3 && l.Features != nil:
		return canon.SHA256Hex(l.doc.Without("sha256", "signature", FeaturesMember))
	}
	return ""
}

// KeepDigests makes the lockfile keep its digests once computed, for a
// lockfile that is read many times and never changed (core's lockfile
// cache); the content's is computed now. Seal forgets them.
func (l *Crawlcheck) KeepDigests() {
	l.digests = &digestMemo{}
	l.Digest()
}

// NewCrawlcheck builds an unsigned lockfile approving the given tools,
// covering every member of them and what the handshake said (cov), with
// this core's scan of them and of the server's approved instructions
// (scan_at_approval): whoever approves a list gets its findings pinned beside
// it, under the rules that made them. A provenance is set on the result
// before it is sealed (make_lock).
func NewCrawlcheck(server Server, approvedAt time.Time, ts []tools.Tool, cov *Coverage) *Crawlcheck {
	l := &Crawlcheck{Server: server, ApprovedAt: approvedAt, Parts: map[string]tools.Parts{}, Descriptions: map[string]string{},
		Coverage: cov, ScanAtApproval: scan.RunServer(ts, nil, cov.scanServer()).Value()}
	for i := range ts {
		t := &ts[i]
		l.Tools = append(l.Tools, Entry{Name: t.Name, SHA256: t.SHA256})
		l.Parts[t.Name] = t.Parts()
		if t.HasDescription {
			l.Descriptions[t.Name] = t.Description
		}
	}
	tools.SortEntries(l.Tools, func(e Entry) string { return e.Name })
	l.ToolsSHA256 = tools.ToolsSHA256(l.hashes())
	l.doc = l.build(false)
	return l
}

func (l *Crawlcheck) hashes() []string {
	hs := make([]string, len(l.Tools))
	for i, e := range l.Tools {
		hs[i] = e.SHA256
	}
	return hs
}

// build renders the lockfile as a JSON value in the documented member
// order; withSignature includes sha256 and signature.
func (l *Crawlcheck) build(withSignature bool) canon.Value {
	server := []canon.Member{}
	if l.Server.URL != "" {
		server = append(server, canon.M("url", canon.Str(l.Server.URL)))
	}
	if l.Server.ProtocolVersion != "" {
		server = append(server, canon.M("protocol_version", canon.Str(l.Server.ProtocolVersion)))
	}
	if !l.Server.Info.IsNull() {
		server = append(server, canon.M("info", l.Server.Info))
	}
	if !l.Server.ClientCapabilities.IsNull() {
		server = append(server, canon.M("client_capabilities", l.Server.ClientCapabilities))
	}
	entries := make([]canon.Value, len(l.Tools))
	for i, e := range l.Tools {
		entries[i] = canon.Obj(canon.M("name", canon.Str(e.Name)), canon.M("sha256", canon.Str(e.SHA256)))
	}
	ms := []canon.Member{
		canon.M("kind", canon.Str(Kind)),
		canon.M("v", canon.Int(1)),
		canon.M("server", canon.Obj(server...)),
		canon.M("approved_at", canon.Str(timefmt.Format(l.ApprovedAt))),
		canon.M("tools_sha256", canon.Str(l.ToolsSHA256)),
		canon.M("count", canon.Int(int64(len(l.Tools)))),
		canon.M("tools", canon.Arr(entries...)),
	}
	if l.Parts != nil {
		ps := make([]canon.Member, 0, len(l.Tools))
		for _, e := range l.Tools {
			ps = append(ps, canon.M(e.Name, l.Parts[e.Name].Value()))
		}
		ms = append(ms, canon.M("parts", canon.Obj(ps...)))
	}
	if l.Coverage != nil {
		ms = append(ms, canon.M(CoverageMember, l.Coverage.value(l.Tools)))
	}
	if l.Features != nil {
		ms = append(ms, canon.M(FeaturesMember, l.Features.Value()))
	}
	if l.Launched != nil {
		ms = append(ms, canon.M(LaunchedMember, l.Launched.Value()))
	}
	if l.Provenance != nil {
		ms = append(ms, canon.M(ProvenanceMember, l.Provenance.Value()))
	}
	ds := []canon.Member{}
	for _, e := range l.Tools {
		if d, ok := l.Descriptions[e.Name]; ok {
			ds = append(ds, canon.M(e.Name, canon.Str(d)))
		}
	}
	ms = append(ms, canon.M("descriptions", canon.Obj(ds...)))
	if !l.ScanAtApproval.IsNull() {
		ms = append(ms, canon.M("scan_at_approval", l.ScanAtApproval))
	}
	if withSignature && l.SHA256 != "" {
		ms = append(ms, canon.M("sha256", canon.Str(l.SHA256)))
	}
	if withSignature && l.Signature != "" {
		ms = append(ms, canon.M("signature", canon.Str(l.Signature)))
	}
	return canon.Obj(ms...)
}

// Bytes is the lockfile as written to disk.
func (l *Crawlcheck) Bytes() []byte { return canon.Indent(l.build(true)) }

// Seal sets sha256 to the digest of the content (dropping any signature,
// which would no longer match). signature, when not "", is then set.
func (l *Crawlcheck) Seal(sign func(digest string) string) {
	l.digests = nil
	l.Signature = ""
	l.doc = l.build(false)
	l.SHA256 = canon.SHA256Hex(l.doc)
	if sign != nil {
		l.Signature = sign(l.SHA256)
	}
	l.doc = l.build(true)
}
