package lock

import (
	"time"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/tools"
	"github.com/crawlcheck/verifier/core/timefmt"
)

// AgentgateTool is one tool of an agentgate server entry.
type AgentgateTool struct {
	Name string
	tools.Agentgate
}

// AgentgateServer is one server of an agentgate.lock.
type AgentgateServer struct {
	Name        string
	SurfaceHash string
	Tools       []AgentgateTool // sorted by name
}

// Agentgate is an agentgate.lock v1 file. generatedAt is informational and
// never part of a comparison.
type Agentgate struct {
	GeneratedBy string
	GeneratedAt time.Time
	Servers     []AgentgateServer // sorted by name
}

// Server returns the named server entry.
func (a *Agentgate) Server(name string) (*AgentgateServer, bool) {
	for i := range a.Servers {
		if a.Servers[i].Name == name {
			return &a.Servers[i], true
		}
	}
	return nil, false
}

func parseAgentgate(doc canon.Value) (*Agentgate, error) {
	bad := func(format string, args ...any) (*Agentgate, error) {
		return nil, cerr.New(cerr.LockInvalid, "agentgate.lock: "+format, args...)
	}
	if v, _ := doc.Get("lockfileVersion"); v.String() != "1" {
		return nil, cerr.New(cerr.LockUnsupported, "agentgate.lock lockfileVersion %s is not supported (this core reads 1)", v)
	}
	for _, m := range doc.Members() {
		switch m.Key {
		case "lockfileVersion", "generatedBy", "generatedAt", "servers":
		default:
			return bad("unknown member %q", m.Key)
		}
	}
	a := &Agentgate{}
	gb, _ := doc.Get("generatedBy")
	var ok bool
	if a.GeneratedBy, ok = gb.Str(); !ok {
		return bad("generatedBy must be a string")
	}
	at, err := timeMember(doc, "generatedAt")
	if err != nil {
		return nil, err
	}
	a.GeneratedAt = at
	servers, _ := doc.Get("servers")
	if servers.Kind() != canon.Object {
		return bad("servers must be an object")
	}
	for _, m := range servers.Members() {
		s := AgentgateServer{Name: m.Key}
		sh, _ := m.Value.Get("surfaceHash")
		s.SurfaceHash, _ = sh.Str()
		list, _ := m.Value.Get("tools")
		if m.Value.Kind() != canon.Object || len(m.Value.Members()) != 2 || !tools.IsHexHash(s.SurfaceHash) || list.Kind() != canon.Array {
			return bad("servers.%s must be {\"surfaceHash\": 64 hex, \"tools\": [...]}", m.Key)
		}
		seen := map[string]bool{}
		for i, tv := range list.Elems() {
			var t AgentgateTool
			str := func(k string) string { x, _ := tv.Get(k); s, _ := x.Str(); return s }
			t.Name, t.NameHash, t.DescriptionHash, t.InputSchemaHash = str("name"), str("nameHash"), str("descriptionHash"), str("inputSchemaHash")
			if tv.Kind() != canon.Object || len(tv.Members()) != 4 || t.Name == "" ||
				!tools.IsHexHash(t.NameHash) || !tools.IsHexHash(t.DescriptionHash) || !tools.IsHexHash(t.InputSchemaHash) {
				return bad("servers.%s.tools[%d] must be {name, nameHash, descriptionHash, inputSchemaHash} with 64-hex hashes", m.Key, i)
			}
			if seen[t.Name] {
				return bad("servers.%s lists tool %q twice", m.Key, t.Name)
			}
			seen[t.Name] = true
			if tools.AgentgateHashes(t.Name, "", "").NameHash != t.NameHash {
				return bad("servers.%s.tools[%d]: nameHash is not the SHA-256 of %q", m.Key, i, t.Name)
			}
			s.Tools = append(s.Tools, t)
		}
		tools.SortEntries(s.Tools, func(t AgentgateTool) string { return t.Name })
		if surface(s.Tools) != s.SurfaceHash {
			return bad("servers.%s.surfaceHash does not match its tools", m.Key)
		}
		a.Servers = append(a.Servers, s)
	}
	tools.SortEntries(a.Servers, func(s AgentgateServer) string { return s.Name })
	return a, nil
}

func surface(ts []AgentgateTool) string {
	names := make([]string, len(ts))
	hs := make([]tools.Agentgate, len(ts))
	for i, t := range ts {
		names[i], hs[i] = t.Name, t.Agentgate
	}
	return tools.SurfaceHash(names, hs)
}

// NewAgentgateServer builds a server entry from hashed tools.
func NewAgentgateServer(name string, ts []tools.Tool) AgentgateServer {
	s := AgentgateServer{Name: name}
	for i := range ts {
		s.Tools = append(s.Tools, AgentgateTool{Name: ts[i].Name, Agentgate: ts[i].Agentgate()})
	}
	return NewAgentgateServerFromHashes(s)
}

// Put adds or replaces a server entry.
func (a *Agentgate) Put(s AgentgateServer) {
	if old, ok := a.Server(s.Name); ok {
		*old = s
		return
	}
	a.Servers = append(a.Servers, s)
	tools.SortEntries(a.Servers, func(s AgentgateServer) string { return s.Name })
}

// Bytes is the agentgate.lock as written to disk.
func (a *Agentgate) Bytes() []byte {
	servers := make([]canon.Member, len(a.Servers))
	for i, s := range a.Servers {
		ts := make([]canon.Value, len(s.Tools))
		for j, t := range s.Tools {
			ts[j] = canon.Obj(
				canon.M("name", canon.Str(t.Name)),
				canon.M("nameHash", canon.Str(t.NameHash)),
				canon.M("descriptionHash", canon.Str(t.DescriptionHash)),
				canon.M("inputSchemaHash", canon.Str(t.InputSchemaHash)),
			)
		}
		servers[i] = canon.M(s.Name, canon.Obj(canon.M("surfaceHash", canon.Str(s.SurfaceHash)), canon.M("tools", canon.Arr(ts...))))
	}
	return canon.Indent(canon.Obj(
		canon.M("lockfileVersion", canon.Int(1)),
		canon.M("generatedBy", canon.Str(a.GeneratedBy)),
		canon.M("generatedAt", canon.Str(timefmt.Format(a.GeneratedAt))),
		canon.M("servers", canon.Obj(servers...)),
	))
}

// NewAgentgateServerFromHashes completes a server entry whose tool hashes are
// already known: tools sorted, surfaceHash computed.
func NewAgentgateServerFromHashes(s AgentgateServer) AgentgateServer {
	tools.SortEntries(s.Tools, func(t AgentgateTool) string { return t.Name })
	s.SurfaceHash = surface(s.Tools)
	return s
}
