package core_test

import "testing"

// documentKindVectors: what the core reads a document as (document_kind),
// for the page that is given documents without their kinds.
func documentKindVectors(t testing.TB) []opVector {
	base := baseTools()
	lock := lockDoc(t, base, approvedAt)
	broken := deepCopy(lock)
	broken["count"] = 5
	otherKind := deepCopy(lock)
	otherKind["kind"] = "crawlcheck-continuity-record"
	var vs []opVector
	add := func(name string, doc any) {
		vs = append(vs, opVector{Op: "document_kind", Name: name, Request: obj{"document": doc}})
	}
	add("a crawlcheck lockfile", lock)
	add("an agentgate.lock", agentgateDoc(t, base))
	add("a tools/list page", page(t, base, ""))
	add("a tools/list page with a cursor", page(t, base, "c2"))
	add("a tools/list result of no tools", `{"tools":[]}`)
	add("a lockfile that fails its own checks is still a lockfile", broken)
	add("an object of another kind is a lockfile this core does not read", otherKind)
	add("JSON that is neither", `{"hello":"world"}`)
	add("a document that is not JSON", `{"tools":[`)
	add("a document with a repeated key", `{"tools":[],"tools":[]}`)
	vs = append(vs, opVector{Op: "document_kind", Name: "no document", Request: obj{}})
	return vs
}
