package lock

import (
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/scan"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

// Coverage is the additive extension of crawlcheck-mcp-lock v1 that pins
// everything a model or client reads beyond the four hashed parts
// (docs/hashing.md, "coverage"): per tool the hashes of its other members
// (tools.Members), and per server its instructions and serverInfo. It sits
// in the signed part of the lockfile; the tool hashes and tools_sha256 are
// the seed's rule, unchanged. A lockfile without it is read as before, and
// a record says which members were not compared.
type Coverage struct {
	Tools map[string]tools.MemberHashes
	// Instructions is the server's instructions as approved; HasInstructions
	// false means none were recorded (the lockfile was made without a
	// handshake), not that the server gave none: then nothing is compared.
	Instructions     canon.Value // a string, or null when the server gave none
	HasInstructions  bool
	ServerInfoSHA256 string // SHA-256 of serverInfo's canonical JSON (null when the server sent none); "" when not recorded
}

// CoverageMember is the lockfile's member name of the extension.
const CoverageMember = "coverage"

// scanServer is what the approval scan reads of the server beside its
// tools: the instructions approved with them, when the handshake was seen.
func (c *Coverage) scanServer() scan.Server {
	if c == nil || !c.HasInstructions {
		return scan.Server{}
	}
	return scan.Server{Instructions: c.InstructionsText(), HasInstructions: true}
}

// InstructionsText is the approved instructions ("" when none).
func (c *Coverage) InstructionsText() string { s, _ := c.Instructions.Str(); return s }

// NewCoverage pins the members of ts and what the handshake said: its
// instructions and serverInfo, when it was observed (handshake false: the
// lockfile is made from a list alone, and neither is recorded).
func NewCoverage(ts []tools.Tool, handshake bool, instructions, serverInfo canon.Value) *Coverage {
	c := &Coverage{Tools: make(map[string]tools.MemberHashes, len(ts))}
	for i := range ts {
		c.Tools[ts[i].Name] = ts[i].MemberHashes()
	}
	if handshake {
		c.Instructions, c.HasInstructions = instructions, true
		c.ServerInfoSHA256 = canon.SHA256Hex(serverInfo)
	}
	return c
}

func (c *Coverage) value(order []Entry) canon.Value {
	ts := make([]canon.Member, 0, len(order))
	for _, e := range order {
		ts = append(ts, canon.M(e.Name, c.Tools[e.Name].Value()))
	}
	ms := []canon.Member{canon.M("tools", canon.Obj(ts...))}
	if c.HasInstructions {
		ms = append(ms, canon.M("instructions", c.Instructions))
	}
	if c.ServerInfoSHA256 != "" {
		ms = append(ms, canon.M("server_info_sha256", canon.Str(c.ServerInfoSHA256)))
	}
	return canon.Obj(ms...)
}

// parseCoverage reads the extension of a lockfile whose tools are names.
func parseCoverage(v canon.Value, names map[string]bool) (*Coverage, error) {
	bad := func(format string, args ...any) (*Coverage, error) {
		return nil, cerr.New(cerr.LockInvalid, "crawlcheck lockfile: coverage"+format, args...)
	}
	if v.Kind() != canon.Object {
		return bad(" must be an object")
	}
	c := &Coverage{Tools: map[string]tools.MemberHashes{}}
	for _, m := range v.Members() {
		switch m.Key {
		case "tools":
			if m.Value.Kind() != canon.Object || len(m.Value.Members()) != len(names) {
				return bad(".tools must be an object with one member per tool")
			}
			for _, t := range m.Value.Members() {
				if !names[t.Key] {
					return bad(".tools names %q, which is not a locked tool", t.Key)
				}
				h, ok := parseMemberHashes(t.Value)
				if !ok {
					return bad(".tools.%s must hold exactly %v, each 64 lowercase hex", t.Key, tools.Members)
				}
				c.Tools[t.Key] = h
			}
		case "instructions":
			if _, ok := m.Value.Str(); !ok && !m.Value.IsNull() {
				return bad(".instructions must be a string or null")
			}
			c.Instructions, c.HasInstructions = m.Value, true
		case "server_info_sha256":
			s, ok := m.Value.Str()
			if !ok || !tools.IsHexHash(s) {
				return bad(".server_info_sha256 must be 64 lowercase hex")
			}
			c.ServerInfoSHA256 = s
		default:
			return bad(": unknown member %q", m.Key)
		}
	}
	if !v.Has("tools") {
		return bad(".tools is required")
	}
	return c, nil
}

func parseMemberHashes(v canon.Value) (tools.MemberHashes, bool) {
	if v.Kind() != canon.Object || len(v.Members()) != len(tools.Members) {
		return nil, false
	}
	h := tools.MemberHashes{}
	for _, m := range tools.Members {
		x, _ := v.Get(m)
		s, ok := x.Str()
		if !ok || !tools.IsHexHash(s) {
			return nil, false
		}
		h[m] = s
	}
	return h, true
}
