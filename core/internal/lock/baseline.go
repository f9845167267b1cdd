package lock

import (
	"time"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

// Format names.
const (
	FormatCrawlcheck = "crawlcheck-mcp-lock"
	FormatAgentgate  = "agentgate.lock"
)

// File is a parsed lockfile of either format; exactly one field is set.
type File struct {
	Crawlcheck *Crawlcheck
	Agentgate  *Agentgate
}

// Parse recognises and validates a lockfile: a "kind" member makes it a
// crawlcheck lockfile, a "lockfileVersion" member an agentgate.lock.
func Parse(doc canon.Value) (File, error) {
	if doc.Kind() != canon.Object {
		return File{}, cerr.New(cerr.LockInvalid, "a lockfile is a JSON object, got %s", doc.Kind())
	}
	if k, ok := doc.Get("kind"); ok {
		if s, _ := k.Str(); s != Kind {
			return File{}, cerr.New(cerr.LockUnsupported, "lockfile kind %s is not supported (this core reads %q and agentgate.lock)", k, Kind)
		}
		l, err := parseCrawlcheck(doc)
		return File{Crawlcheck: l}, err
	}
	if doc.Has("lockfileVersion") {
		a, err := parseAgentgate(doc)
		return File{Agentgate: a}, err
	}
	return File{}, cerr.New(cerr.LockInvalid, "not a lockfile: neither \"kind\" nor \"lockfileVersion\" is present")
}

// Format names the file's format.
func (f File) Format() string {
	if f.Agentgate != nil {
		return FormatAgentgate
	}
	return FormatCrawlcheck
}

// BaselineTool is one approved tool as a baseline knows it.
type BaselineTool struct {
	Name      string
	SHA256    string           // crawlcheck v1 tool hash; "" for agentgate
	Parts     *tools.Parts     // per-part hashes; nil when the baseline has none it may use
	Agentgate *tools.Agentgate // agentgate hashes; nil for crawlcheck
}

// Baseline is what observed tools are compared against, whichever format it
// came from.
type Baseline struct {
	Format        string
	URL           string // "" when the lockfile pins no endpoint
	ApprovedAt    time.Time
	ToolsSHA256   string // "" for agentgate
	Tools         []BaselineTool
	Descriptions  map[string]string
	BlindParts    []string // parts of a tool this baseline cannot see
	PartsAbsent   bool     // a crawlcheck lock without usable per-part hashes
	AgentgateName string
}

// Lookup finds a baseline tool by name.
func (b *Baseline) Lookup(name string) (*BaselineTool, bool) {
	for i := range b.Tools {
		if b.Tools[i].Name == name {
			return &b.Tools[i], true
		}
	}
	return nil, false
}

// Baseline presents a crawlcheck lockfile for comparison; with useParts
// false its per-part hashes are set aside (parts added after signing).
func (l *Crawlcheck) Baseline(useParts bool) Baseline {
	b := Baseline{Format: FormatCrawlcheck, URL: l.Server.URL, ApprovedAt: l.ApprovedAt,
		ToolsSHA256: l.ToolsSHA256, Descriptions: l.Descriptions}
	b.PartsAbsent = l.Parts == nil || !useParts
	for _, e := range l.Tools {
		t := BaselineTool{Name: e.Name, SHA256: e.SHA256}
		if !b.PartsAbsent {
			p := l.Parts[e.Name]
			t.Parts = &p
		}
		b.Tools = append(b.Tools, t)
	}
	return b
}

// Baseline presents one server of an agentgate.lock. It cannot see
// annotations: the record says so.
func (a *Agentgate) Baseline(server string) (Baseline, error) {
	s, err := a.Choose(server)
	if err != nil {
		return Baseline{}, err
	}
	b := Baseline{Format: FormatAgentgate, ApprovedAt: a.GeneratedAt, Descriptions: map[string]string{},
		BlindParts: []string{tools.PartAnnotations}, AgentgateName: s.Name}
	for i := range s.Tools {
		b.Tools = append(b.Tools, BaselineTool{Name: s.Tools[i].Name, Agentgate: &s.Tools[i].Agentgate})
	}
	return b, nil
}

// ServerNames lists the servers of an agentgate.lock, in canonical order.
func (a *Agentgate) ServerNames() []string {
	names := make([]string, len(a.Servers))
	for i := range a.Servers {
		names[i] = a.Servers[i].Name
	}
	return names
}

// Choose is the one rule for which server of an agentgate.lock a check, a
// diff or an approval applies to: the one named, or, when none is named,
// the file's only server. Any other case is an error naming the servers, so
// that no host picks one by its own rule.
func (a *Agentgate) Choose(name string) (*AgentgateServer, error) {
	if s, ok := a.Server(name); ok {
		return s, nil
	}
	if name == "" && len(a.Servers) == 1 {
		return &a.Servers[0], nil
	}
	return nil, cerr.New(cerr.BadRequest, "agentgate.lock has no server %q (it has %v); name one with server_name", name, a.ServerNames())
}
