package core_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// pilotVectors: what an issuer answers a pilot's upload (issue 20, item 3):
// each line accepted, duplicate, edited or a chain gap against the pilot's
// head, the batch stopping at the first gap, and the log entry committing
// to the new head.
func pilotVectors(t testing.TB) []opVector {
	base := baseTools()
	lock := lockDoc(t, base, approvedAt)
	one := func(ts []obj) []string { return []string{page(t, ts, "")} }
	var recs, sums []string
	for i := 0; i < 4; i++ {
		r := continuityRequest(lock, one(base), "enforce")
		if i > 0 {
			r["prev_record_sha256"] = sums[i-1]
		}
		raw := call(t, "continuity_check", r)
		var rec struct {
			SHA string `json:"record_sha256"`
		}
		json.Unmarshal(raw, &rec)
		recs, sums = append(recs, string(raw)), append(sums, rec.SHA)
	}
	lines := func(rs ...string) string { return strings.Join(rs, "\n") + "\n" }
	edited := strings.Replace(recs[1], `"mode":"enforce"`, `"mode":"observe"`, 1)

	var vs []opVector
	add := func(name string, request obj) {
		vs = append(vs, opVector{Op: "pilot_batch", Name: name, Request: request})
	}
	add("first upload", obj{"records": lines(recs[0], recs[1])})
	add("first upload of a log begun before the pilot", obj{"records": lines(recs[2], recs[3])})
	add("continues the head", obj{"records": lines(recs[2], recs[3]), "head": sums[1], "logged_head": sums[1]})
	add("retried after the answer was lost", obj{"records": lines(recs[0], recs[1], recs[2]), "head": sums[1], "logged_head": sums[1], "known": []string{sums[0], sums[1]}})
	add("all held already", obj{"records": lines(recs[0], recs[1]), "head": sums[1], "logged_head": sums[1], "known": []string{sums[0], sums[1]}})
	add("held, but the log missed the head", obj{"records": lines(recs[1]), "head": sums[1], "logged_head": sums[0], "known": []string{sums[1]}})
	add("the same record twice in a batch", obj{"records": lines(recs[0], recs[0], recs[1])})
	add("gap stops the batch", obj{"records": lines(recs[0], recs[2], recs[3]), "head": sums[0], "logged_head": sums[0]})
	add("a new chain after the head", obj{"records": lines(recs[0]), "head": sums[3], "logged_head": sums[3]})
	add("edited record, then its successor", obj{"records": lines(edited, recs[2]), "head": sums[0], "logged_head": sums[0]})
	add("edited record first of a new pilot", obj{"records": lines(edited, recs[2])})
	add("not canonical", obj{"records": lines(strings.Replace(recs[0], `{"`, `{ "`, 1))})
	add("not JSON", obj{"records": "{\"kind\":\n"})
	add("not a record", obj{"records": lines(`{"kind":"crawlcheck-mcp-lock"}`)})
	add("crlf line", obj{"records": recs[0] + "\r\n"})
	add("empty", obj{"records": ""})
	add("head not a hash", obj{"records": lines(recs[0]), "head": "HEAD"})
	add("records missing", obj{})
	return vs
}
