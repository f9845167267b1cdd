package core_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// chainVectors: a log is a valid chain only from an anchor (its first
// record starts the chain, or names the record given as after), the last
// record is the head when one was kept elsewhere, and every line is one
// record in its canonical form (issue 10, item 8).
func chainVectors(t testing.TB) []opVector {
	base := baseTools()
	lock := lockDoc(t, base, approvedAt)
	one := func(ts []obj) []string { return []string{page(t, ts, "")} }
	var recs []string
	prev := ""
	for i := 0; i < 3; i++ {
		r := continuityRequest(lock, one(base), "enforce")
		if prev != "" {
			r["prev_record_sha256"] = prev
		}
		raw := call(t, "continuity_check", r)
		recs = append(recs, string(raw))
		var rec struct {
			SHA string `json:"record_sha256"`
		}
		json.Unmarshal(raw, &rec)
		prev = rec.SHA
	}
	hashOf := func(i int) string {
		var rec struct {
			SHA string `json:"record_sha256"`
		}
		json.Unmarshal([]byte(recs[i]), &rec)
		return rec.SHA
	}
	lines := func(rs ...string) string { return strings.Join(rs, "\n") + "\n" }

	var vs []opVector
	add := func(name string, request obj) {
		vs = append(vs, opVector{Op: "verify_chain", Name: name, Request: request})
	}
	add("start cut", obj{"records": lines(recs[1], recs[2])})
	add("continued after", obj{"records": lines(recs[1], recs[2]), "after": hashOf(0)})
	add("continued after another record", obj{"records": lines(recs[1], recs[2]), "after": hashOf(2)})
	add("head kept", obj{"records": lines(recs...), "head": hashOf(2)})
	add("end cut", obj{"records": lines(recs[0], recs[1]), "head": hashOf(2)})
	add("emptied with a head kept", obj{"records": "", "head": hashOf(2)})
	add("blank line", obj{"records": recs[0] + "\n\n" + lines(recs[1])})
	add("non-canonical line", obj{"records": lines(recs[0], strings.Replace(recs[1], `{"`, `{ "`, 1))})
	add("crlf line", obj{"records": recs[0] + "\r\n" + lines(recs[1])})
	add("head not a hash", obj{"records": lines(recs[0]), "head": "HEAD"})
	return vs
}
