package tools

import (
	"strings"

	"github.com/crawlcheck/verifier/core/internal/canon"
)

// The members of a tool beyond the four parts of the crawlcheck v1 tool
// hash: everything else a client or a model can read of a tool (MCP schema
// 2025-11-25: title, outputSchema, icons, execution, _meta; MCP Apps'
// _meta.ui, which decides what is shown and to whom, apart from the rest of
// _meta), and every member the schema does not name, as one bucket. The
// lockfile's "coverage" extension pins one hash per member (docs/hashing.md);
// the tool hash and tools_sha256 stay the seed's four-part rule.
const (
	MemberTitle        = "title"
	MemberOutputSchema = "outputSchema"
	MemberIcons        = "icons"
	MemberExecution    = "execution"
	MemberMeta         = "_meta"    // _meta without its ui member
	MemberMetaUI       = "_meta.ui" // _meta.ui alone
	MemberUnknown      = "unknown"  // every member no schema names, as one object
)

// Members lists the covered members in canonical (UTF-16) key order, the
// order a lockfile writes them.
var Members = []string{MemberMeta, MemberMetaUI, MemberExecution, MemberIcons, MemberOutputSchema, MemberTitle, MemberUnknown}

// known are the member names of a tool in the MCP schema: the four parts and
// the members covered one by one. Anything else is an unknown member.
var known = map[string]bool{PartName: true, PartDescription: true, PartInputSchema: true, PartAnnotations: true,
	MemberTitle: true, MemberOutputSchema: true, MemberIcons: true, MemberExecution: true, "_meta": true}

// foldedKnown maps a known member name, folded (spellingKey), to itself.
var foldedKnown = func() map[string]string {
	m := map[string]string{}
	for k := range known {
		m[spellingKey(k)] = k
	}
	return m
}()

// spellingKey folds a member name the ways client libraries match names
// loosely: Go's encoding/json ignores case (and folds the Kelvin sign and
// the long s), pydantic models of mcp 2.x accept snake_case aliases
// (input_schema), some decoders ignore separators. Two names with one key
// are read as one member by some client.
func spellingKey(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch r {
		case '_', '-':
			continue
		case 'K': // KELVIN SIGN, folded to k by Go's case-insensitive match
			r = 'k'
		case 'ſ': // LATIN SMALL LETTER LONG S, folded to s likewise
			r = 's'
		}
		b.WriteString(strings.ToLower(string(r)))
	}
	return b.String()
}

// IsVariantSpelling reports whether name is not itself a schema member but
// some client reads it as one ("Description", "INPUTSCHEMA", "input_schema",
// "meta"). Such a member is covered in the unknown bucket like any other,
// but never handed to a framework: what a loose decoder makes of it is not
// what was approved.
func IsVariantSpelling(name string) bool {
	if known[name] {
		return false
	}
	_, ok := foldedKnown[spellingKey(name)]
	return ok
}

// MemberHashes are the hashes of the covered members of one tool, keyed by
// the names in Members, each the SHA-256 of the canonical JSON of the member
// (null when absent).
type MemberHashes map[string]string

// Value is the hashes as a JSON object in canonical key order.
func (h MemberHashes) Value() canon.Value {
	ms := make([]canon.Member, len(Members))
	for i, m := range Members {
		ms[i] = canon.M(m, canon.Str(h[m]))
	}
	return canon.Obj(ms...)
}

// MemberValue is the value one covered member hashes: the member itself;
// for _meta the _meta object without ui (a _meta that is not an object is
// hashed whole under _meta); for _meta.ui the ui member of an object _meta;
// for unknown the object of every member no schema names (null when none).
// Absent is null.
func (t *Tool) MemberValue(member string) canon.Value {
	switch member {
	case MemberMeta:
		m, _ := t.raw.Get("_meta")
		if m.Kind() == canon.Object {
			return m.Without("ui")
		}
		return m
	case MemberMetaUI:
		m, _ := t.raw.Get("_meta")
		ui, _ := m.Get("ui")
		return ui
	case MemberUnknown:
		var ms []canon.Member
		for _, m := range t.raw.Members() {
			if !known[m.Key] {
				ms = append(ms, m)
			}
		}
		if ms == nil {
			return canon.NullValue()
		}
		return canon.Obj(ms...)
	}
	v, _ := t.raw.Get(member)
	return v
}

// MemberHashes computes the hashes of the covered members. Most tools have
// few of them, and an absent member's hash is always that of null: it is
// taken from nullPartHash, not hashed again (seven hashes a tool were most
// of make_lock's coverage, and under WebAssembly each is a call to the
// host).
func (t *Tool) MemberHashes() MemberHashes {
	h := make(MemberHashes, len(Members))
	for _, m := range Members {
		h[m] = t.MemberHash(m)
	}
	return h
}

// MemberHash is the hash of one covered member (see MemberHashes): what a
// check compares member by member, without a map made per tool.
func (t *Tool) MemberHash(member string) string {
	if v := t.MemberValue(member); !v.IsNull() {
		return canon.SHA256Hex(v)
	}
	return nullPartHash
}

// Handoff is the tool object a host hands its framework: written by the
// core from the members it parsed and hashed, in canonical JSON, so that
// what a model reads is what the record covers. It holds the four parts
// (description and annotations only when present and not null, since for
// the hash null is absent) and, when extended is set (a baseline that
// covers them), the other schema members and the unknown members. A member
// some client would read as another (IsVariantSpelling) is never written.
// Members a baseline cannot see are left out: the annotations of a tool
// compared against an agentgate.lock (annotations false), everything beyond
// the four parts against a lockfile without coverage.
func (t *Tool) Handoff(annotations, extended bool) []byte {
	var ms []canon.Member
	for _, m := range t.raw.Members() {
		switch {
		case m.Key == PartName, m.Key == PartInputSchema:
		case m.Key == PartDescription:
			if !t.HasDescription {
				continue
			}
		case m.Key == PartAnnotations:
			if !annotations || t.Annotations.IsNull() {
				continue
			}
		case !extended, IsVariantSpelling(m.Key):
			continue
		}
		ms = append(ms, m)
	}
	return canon.Canonical(canon.Obj(ms...))
}
