// Package tools turns raw tools/list pages into hashed tools.
//
// It hashes the tool objects exactly as they arrived on the wire: a client
// SDK's typed Tool drops unknown fields and invents defaults, so the core is
// handed raw page bytes and parses them itself, strictly (core/canon).
//
// Three hashes are computed per tool (docs/hashing.md):
//
//   - sha256: the crawlcheck v1 tool hash, SHA-256 of the canonical JSON of
//     {name, description, inputSchema, annotations} with absent parts as null;
//   - parts: SHA-256 of the canonical JSON of each of those four parts alone
//     (absent as null), so that a change can be named;
//   - agentgate: nameHash, descriptionHash and inputSchemaHash of agentgate.lock v1.
//
// A list the hashing rules cannot hash unambiguously — a null entry, a
// non-object tool, a missing, empty or non-string name, a duplicate name, a
// non-string description, a non-object inputSchema or annotations — is
// refused with cerr.ToolsMalformed; it is never hashed.
package tools

import (
	"slices"

	"github.com/crawlcheck/verifier/core/internal/sorting"
	"strings"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/digest"
	"github.com/crawlcheck/verifier/core/internal/canon"
)

// The four parts of a tool, by their wire names, in canonical key order.
const (
	PartAnnotations = "annotations"
	PartDescription = "description"
	PartInputSchema = "inputSchema"
	PartName        = "name"
)

// Parts holds one hash per part of a tool.
type Parts struct {
	Name, Description, InputSchema, Annotations string
}

// Get returns the hash of the named part.
func (p Parts) Get(part string) string {
	switch part {
	case PartName:
		return p.Name
	case PartDescription:
		return p.Description
	case PartInputSchema:
		return p.InputSchema
	}
	return p.Annotations
}

// Value is the parts as a JSON object.
func (p Parts) Value() canon.Value {
	return canon.Obj(
		canon.M(PartName, canon.Str(p.Name)),
		canon.M(PartDescription, canon.Str(p.Description)),
		canon.M(PartInputSchema, canon.Str(p.InputSchema)),
		canon.M(PartAnnotations, canon.Str(p.Annotations)),
	)
}

// Tool is one hashed tool.
type Tool struct {
	Name           string
	Description    string // "" when absent or null
	HasDescription bool
	InputSchema    canon.Value // null when absent
	Annotations    canon.Value // null when absent
	SHA256         string
	parts          *Parts      // computed on first use: a check needs them only for changed tools
	raw            canon.Value // the tool object as parsed: its other members are covered and handed over (surface.go)
}

// Agentgate holds the per-tool hashes of agentgate.lock v1.
type Agentgate struct {
	NameHash, DescriptionHash, InputSchemaHash string
}

// Agentgate computes the agentgate.lock v1 hashes of the tool
// (AgentgateHashes).
func (t *Tool) Agentgate() Agentgate {
	return AgentgateHashes(t.Name, t.Description, canon.SHA256Hex(t.InputSchema))
}

// The part hashes of an absent part and of what agentgate puts in its place.
var (
	nullPartHash = hashHex([]byte("null"))
	emptyObjHash = hashHex([]byte("{}"))
)

// AgentgateHashes is the one rule of agentgate.lock v1 tool hashes, taken
// from what a crawlcheck lockfile also keeps: SHA-256 of the UTF-8 name, of
// the UTF-8 description ("" when absent or null), and the inputSchema part
// hash (SHA-256 of its canonical JSON), with an absent schema (the part hash
// of null) hashed as {}. Hashing tools, reading an agentgate.lock and
// converting a crawlcheck lockfile all call it, so the three cannot drift.
func AgentgateHashes(name, description, inputSchemaPart string) Agentgate {
	if inputSchemaPart == nullPartHash {
		inputSchemaPart = emptyObjHash
	}
	return Agentgate{
		NameHash:        hashHex([]byte(name)),
		DescriptionHash: hashHex([]byte(description)),
		InputSchemaHash: inputSchemaPart,
	}
}

// IsAbsentPart reports whether a part hash is that of an absent (null) part.
func IsAbsentPart(partHash string) bool { return partHash == nullPartHash }

func hashHex(b []byte) string {
	sum := digest.Sum256(b)
	return digest.Encode(sum[:])
}

// Hash validates and hashes a JSON array of tool objects, in order. A list
// the parser's container memo keeps (a request's tools sent again: an
// issuer's checks) keeps its tools beside it, so its tools are hashed once
// (canon.Derived); the caller gets its own copy, whose part hashes it may
// compute.
func Hash(list canon.Value) ([]Tool, error) {
	obs, err := Read(list)
	return obs.Tools, err
}

// Read is Hash as an Observed list of one page, with its list digest when
// the list is one the container memo keeps (computed once, beside it).
func Read(list canon.Value) (Observed, error) {
	if kept, ok := canon.Derived(list, hashedKey); ok {
		obs := kept.(Observed)
		obs.Tools = slices.Clone(obs.Tools)
		return obs, nil
	}
	ts, err := hash(list)
	if err != nil {
		return Observed{}, err
	}
	obs := Observed{Tools: ts, Pages: 1}
	if canon.Kept(list) {
		obs.listSHA256 = ListSHA256(ts)
		if canon.KeepDerived(list, hashedKey, obs, hashedCost(ts)) {
			obs.Tools = slices.Clone(ts)
		}
	}
	return obs, nil
}

// hashedKey names what Read keeps beside a list (canon.KeepDerived): the
// Observed it read, with its list digest.
const hashedKey = "tools.Read"

func hash(list canon.Value) ([]Tool, error) {
	if list.Kind() != canon.Array {
		return nil, cerr.New(cerr.ToolsMalformed, "the tool list is %s, not an array", list.Kind())
	}
	out := make([]Tool, 0, len(list.Elems()))
	var buf []byte
	for i, v := range list.Elems() {
		t, b, err := hashOne(i, v, buf)
		if err != nil {
			return nil, err
		}
		buf = b
		out = append(out, t)
	}
	if err := checkUnique(out); err != nil {
		return nil, err
	}
	return out, nil
}

func checkUnique(ts []Tool) error {
	seen := make(map[string]int, len(ts))
	for i, t := range ts {
		if j, dup := seen[t.Name]; dup {
			return cerr.New(cerr.ToolsMalformed, "tools[%d] and tools[%d] are both named %q", j, i, t.Name)
		}
		seen[t.Name] = i
	}
	return nil
}

// hashOne validates one tool and hashes its canonical form, written into buf.
func hashOne(i int, v canon.Value, buf []byte) (Tool, []byte, error) {
	bad := func(format string, args ...any) (Tool, []byte, error) {
		return Tool{}, buf, cerr.New(cerr.ToolsMalformed, "tools[%d]: "+format, append([]any{i}, args...)...)
	}
	if v.Kind() != canon.Object {
		return bad("is %s, not a tool object", v.Kind())
	}
	t := Tool{raw: v}
	nameV, ok := v.Get(PartName)
	if !ok {
		return bad("has no name")
	}
	if t.Name, ok = nameV.Str(); !ok {
		return bad("name is %s, not a string", nameV.Kind())
	}
	if t.Name == "" {
		return bad("name is empty")
	}
	if desc, hasDesc := v.Get(PartDescription); hasDesc && !desc.IsNull() {
		if t.Description, ok = desc.Str(); !ok {
			return bad("(%q) description is %s, not a string", t.Name, desc.Kind())
		}
		t.HasDescription = true
	}
	if s, ok := v.Get(PartInputSchema); ok {
		if s.Kind() != canon.Object {
			return bad("(%q) inputSchema is %s, not an object", t.Name, s.Kind())
		}
		t.InputSchema = s
	}
	if a, ok := v.Get(PartAnnotations); ok && !a.IsNull() {
		if a.Kind() != canon.Object {
			return bad("(%q) annotations is %s, not an object", t.Name, a.Kind())
		}
		t.Annotations = a
	}

	b := append(buf[:0], `{"annotations":`...)
	b = canon.AppendCanonical(b, t.Annotations)
	b = append(b, `,"description":`...)
	b = canon.AppendCanonical(b, t.descriptionValue())
	b = append(b, `,"inputSchema":`...)
	b = canon.AppendCanonical(b, t.InputSchema)
	b = append(b, `,"name":`...)
	b = canon.AppendString(b, t.Name)
	b = append(b, '}')
	t.SHA256 = hashHex(b)
	return t, b, nil
}

func (t *Tool) descriptionValue() canon.Value {
	if !t.HasDescription {
		return canon.NullValue()
	}
	return canon.Str(t.Description)
}

// Parts returns the per-part hashes. They are computed on first use: the
// tool hash alone tells an unchanged tool, and hashing every part of every
// tool would double the hashing of a check (dearest in WebAssembly, which
// has no SHA instructions).
func (t *Tool) Parts() Parts {
	if t.parts == nil {
		t.parts = &Parts{
			Name:        canon.SHA256Hex(canon.Str(t.Name)),
			Description: canon.SHA256Hex(t.descriptionValue()),
			InputSchema: canon.SHA256Hex(t.InputSchema),
			Annotations: canon.SHA256Hex(t.Annotations),
		}
	}
	return *t.parts
}

// ToolsSHA256 is the list hash of the lockfile spec: the tool hashes sorted,
// joined with "\n", hashed. Order of the tools does not matter.
func ToolsSHA256(hashes []string) string {
	sorted := slices.Clone(hashes)
	sorting.Strings(sorted)
	return hashHex([]byte(strings.Join(sorted, "\n")))
}

// ListSHA256 is ToolsSHA256 over hashed tools.
func ListSHA256(ts []Tool) string {
	hs := make([]string, len(ts))
	for i := range ts {
		hs[i] = ts[i].SHA256
	}
	return ToolsSHA256(hs)
}

// SurfaceHash is agentgate's whole-server hash: SHA-256 of the canonical
// JSON array of [nameHash, descriptionHash, inputSchemaHash] triples, sorted
// by tool name (UTF-16 code unit order, as canon.CompareKeys).
func SurfaceHash(names []string, hashes []Agentgate) string {
	idx := make([]int, len(names))
	for i := range idx {
		idx[i] = i
	}
	sorting.Func(idx, func(a, b int) int { return canon.CompareKeys(names[a], names[b]) })
	triples := make([]canon.Value, len(idx))
	for k, i := range idx {
		h := hashes[i]
		triples[k] = canon.Strs([]string{h.NameHash, h.DescriptionHash, h.InputSchemaHash})
	}
	return canon.SHA256Hex(canon.Arr(triples...))
}

// IsHexHash reports whether s is a lowercase hex SHA-256.
func IsHexHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// SortEntries sorts anything named by canonical (UTF-16) name order.
func SortEntries[T any](xs []T, name func(T) string) {
	sorting.Func(xs, func(a, b T) int { return canon.CompareKeys(name(a), name(b)) })
}
