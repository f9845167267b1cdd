package core

import (
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/lock"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

// opDocumentKind says what a document a person gave is, as the core reads
// it: a lockfile (one that says it is, by diff's rule: claimsLockfile),
// one page of a tools/list, or other JSON. A page that takes documents
// without saying which is which (the offline checker) asks here instead
// of trying ops and reading their failures, so that the rule is the
// core's and a lockfile that fails its own checks is still a lockfile.
// Validity beyond the kind (the lockfile's checks, its signature and
// keys) is the ops' that judge it: verify_lock, lock_check.
func opDocumentKind(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	doc := rd.RequiredDoc("document")
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	kind, format := "other", canon.NullValue()
	if claimsLockfile(doc) {
		kind = "lockfile"
		k, _ := doc.Get("kind")
		if s, _ := k.Str(); s == lock.Kind {
			format = canon.Str(lock.FormatCrawlcheck)
		} else if doc.Has("lockfileVersion") {
			format = canon.Str(lock.FormatAgentgate)
		}
	} else if _, err := tools.FromPages([]string{string(canon.Canonical(doc))}, false); err == nil {
		kind = "tool_list"
	}
	return canon.Obj(canon.M("kind", canon.Str(kind)), canon.M("format", format)), nil
}

// documentKindSpec declares document_kind.
var documentKindSpec = OpSpec{Name: "document_kind", Summary: "What a document is, as the core reads it: `lockfile` (a JSON object with `kind` or an agentgate.lock's `lockfileVersion`, `diff`'s rule; whether it is a valid one, its signature and keys are `verify_lock`'s to judge), `tool_list` (one page of a tools/list result, as `hash_tools` reads a page), or `other` (JSON that is neither). A document that is not one JSON value is the reader's error, as for `canonicalize`. For a host given documents without their kinds (the offline checker page), instead of trying ops.",
	Request: []Field{
		need("document", "document", "the document as given (a string of its bytes, or an attachment)"),
	},
	Result: []Field{
		need("kind", "string", "`lockfile`, `tool_list` or `other`"),
		need("format", "string or null", "the lockfile's format (`crawlcheck-mcp-lock`, `agentgate.lock`); null for another kind, and for a `kind` this core does not read (`verify_lock`: `lock_unsupported`)"),
	},
}

// claimsLockfile is the rule by which a document is a lockfile rather than
// a tool list (diff's sides, document_kind): an object with a kind or an
// agentgate.lock's lockfileVersion. Valid or not: a broken lockfile's
// faults are lock.Parse's to name, where reading its tools member as a
// tools/list page would compare a lockfile as a list.
func claimsLockfile(doc canon.Value) bool {
	return doc.Kind() == canon.Object && (doc.Has("kind") || doc.Has("lockfileVersion"))
}
