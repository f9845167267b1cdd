package lock

import (
	"strings"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
)

// Provenance is the additive, signed extension of crawlcheck-mcp-lock v1
// that says where a lockfile's tools came from (docs/issuer.md, "Trust
// model"): Source "observed" when the signer ran the handshake and read the
// list itself, "submitted" when the tools were handed to it; By names the
// principal that asked ("operator", "tenant:<id>", or "anonymous", which
// may only ask for an observed lockfile). It sits in the signed part of the
// lockfile, so it is vouched for exactly as far as the signature is: it
// cannot be added to, changed in or taken out of a signed lockfile without
// its signature failing (edited_after_signing), and it is never set aside
// as parts and coverage can be. Tool hashes and tools_sha256 are unchanged.
type Provenance struct {
	Source string
	By     string
}

// ProvenanceMember is the lockfile's member name of the extension.
const ProvenanceMember = "provenance"

// Provenance sources.
const (
	SourceObserved  = "observed"
	SourceSubmitted = "submitted"
)

// Principals a provenance may name besides a tenant.
const (
	ByOperator  = "operator"
	ByAnonymous = "anonymous"
)

// IsTenantBy reports whether s names a tenant: "tenant:" and an id of 1 to
// 64 characters an operator can type and a log line cannot be broken with
// (A-Z a-z 0-9 . _ -, a letter or digit first).
func IsTenantBy(s string) bool {
	id, ok := strings.CutPrefix(s, "tenant:")
	if !ok || len(id) < 1 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// ParseProvenance reads a provenance object, from a lockfile or a
// make_lock request. A submitted list names who submitted it: anonymous
// submissions are what the extension exists to tell apart from an
// observation, so the core refuses to write or read one.
func ParseProvenance(v canon.Value, where string) (*Provenance, error) {
	bad := func(format string, args ...any) (*Provenance, error) {
		return nil, cerr.New(cerr.LockInvalid, where+format, args...)
	}
	if v.Kind() != canon.Object {
		return bad(" must be an object {source, by}")
	}
	p := &Provenance{}
	for _, m := range v.Members() {
		s, ok := m.Value.Str()
		switch {
		case m.Key == "source" && ok && (s == SourceObserved || s == SourceSubmitted):
			p.Source = s
		case m.Key == "source":
			return bad(".source must be \"observed\" or \"submitted\"")
		case m.Key == "by" && ok && (s == ByOperator || s == ByAnonymous || IsTenantBy(s)):
			p.By = s
		case m.Key == "by":
			return bad(".by must be \"operator\", \"anonymous\" or \"tenant:<id>\" (1 to 64 of A-Z a-z 0-9 . _ -, a letter or digit first)")
		default:
			return bad(": unknown member %q", m.Key)
		}
	}
	if p.Source == "" || p.By == "" {
		return bad(" needs both source and by")
	}
	if p.Source == SourceSubmitted && p.By == ByAnonymous {
		return bad(": a submitted list names who submitted it (operator or tenant:<id>), never anonymous")
	}
	return p, nil
}

// Value is the extension as written in a lockfile.
func (p *Provenance) Value() canon.Value {
	return canon.Obj(canon.M("source", canon.Str(p.Source)), canon.M("by", canon.Str(p.By)))
}
