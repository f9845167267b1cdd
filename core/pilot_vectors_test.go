package core_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// pilotVectors: what an issuer answers a pilot's upload (issue 20, item 3):
// each line accepted, duplicate, edited or a chain gap against the pilot's
// head, the batch stopping at the first gap, and the log entry committing
// to the new head.
func pilotVectors(t testing.TB) []opVector {
	recs, sums := pilotRecords(t, 4)
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
	return append(vs, pilotQueueVectors(t)...)
}

// pilotRecords are n chained records, each as continuity_check wrote it,
// and their record_sha256.
func pilotRecords(t testing.TB, n int) (recs, sums []string) {
	base := baseTools()
	lock := lockDoc(t, base, approvedAt)
	for i := 0; i < n; i++ {
		r := continuityRequest(lock, []string{page(t, base, "")}, "enforce")
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
	return recs, sums
}

// pilotQueueVectors: a host's upload pass, step by step (pilot_queue):
// what to read, what to post, and the ack file each issuer answer leaves,
// from every state an ack file and a log can be in.
func pilotQueueVectors(t testing.TB) []opVector {
	recs, sums := pilotRecords(t, 3)
	log := strings.Join(recs, "\n") + "\n"
	size := len(log)
	end0, end1 := len(recs[0])+1, len(recs[0])+len(recs[1])+2
	ack := func(start, end int, digest string) string { return fmt.Sprintf("%d %s %d\n", end, digest, start) }
	acked1 := ack(0, end0, sums[0])
	result := func(i int, status string) obj {
		return obj{"record_sha256": sums[i], "status": status, "reason": nil, "expected_prev_record_sha256": nil}
	}
	answer := func(rs ...obj) obj {
		return obj{"status": 200, "body": string(mustJSON(t, obj{"pilot_id": "pilot-00000000000000000000000000000000", "accepted": 0, "head": nil, "results": rs}))}
	}
	fresh := obj{"log_size": size, "window_offset": 0, "window": log}
	after1 := obj{"ack": acked1, "log_size": size, "window_offset": 0, "window": log}

	var vs []opVector
	add := func(name string, request obj) {
		vs = append(vs, opVector{Op: "pilot_queue", Name: name, Request: request})
	}
	// After a failed pass: the wait's bounds, d = min(max, min·2^(n−1))
	// and [d/2, d]; the doubling stops at 20 and at the max.
	add("first failed pass: wait 0.5 to 1 s", obj{"failed_passes": 1})
	add("third failed pass: wait 2 to 4 s", obj{"failed_passes": 3})
	add("failed passes past the max: wait 2.5 to 5 min", obj{"failed_passes": 40})
	add("failed passes with the deployment's bounds", obj{"failed_passes": 4, "backoff_ms": obj{"min": 20, "max": 100}})
	add("failed passes of an odd bound", obj{"failed_passes": 1, "backoff_ms": obj{"min": 3, "max": 3}})
	add("failed passes with the max alone", obj{"failed_passes": 2, "backoff_ms": obj{"max": 1500}})
	add("failed passes with a max alone under the default min", obj{"failed_passes": 3, "backoff_ms": obj{"max": 200}})
	add("failed passes with a min alone over the default max", obj{"failed_passes": 1, "backoff_ms": obj{"min": 600000}})
	add("failed passes with a pass's members refused", obj{"failed_passes": 1, "log_size": size})
	add("failed passes of zero refused", obj{"failed_passes": 0})
	add("backoff bounds reversed refused", obj{"failed_passes": 1, "backoff_ms": obj{"min": 100, "max": 20}})
	add("no ack file: read from the start", obj{"log_size": size})
	add("an empty ack file acknowledges nothing", obj{"ack": "", "log_size": size})
	add("an empty log: nothing to read", obj{"log_size": 0})
	add("the window gives the batch", fresh)
	add("accepted: the ack moves past them", with(fresh, "answer", answer(result(0, "accepted"), result(1, "accepted"), result(2, "accepted"))))
	add("duplicate and edited are acknowledged", with(fresh, "answer", answer(result(0, "duplicate"), result(1, "edited"), result(2, "accepted"))))
	gap := result(1, "chain_gap")
	gap["reason"] = "the record follows x, not the pilot's last record y\u001b[2J"
	add("a chain gap stops there", with(fresh, "answer", answer(result(0, "accepted"), gap)))
	add("issuer down: nothing moves", with(fresh, "answer", obj{"status": 503, "body": `{"code":"unavailable","message":"down"}`}))
	add("an error page that is not JSON", with(fresh, "answer", obj{"status": 502, "body": "<html>bad gateway</html>"}))
	add("an answer short of the batch", with(fresh, "answer", answer(result(0, "accepted"))))
	add("an answer naming another record", with(fresh, "answer", answer(result(1, "accepted"), result(0, "accepted"))))
	add("an answer with an unknown status", with(fresh, "answer", answer(result(0, "accepted"), result(1, "kept"))))
	add("an answer with more results than records", with(fresh, "answer", answer(result(0, "accepted"), result(1, "accepted"), result(2, "accepted"), result(2, "accepted"))))
	add("an answer that is not JSON", with(fresh, "answer", obj{"status": 200, "body": "{\"results\":"}))
	add("an answer without results", with(fresh, "answer", obj{"status": 200, "body": "{}"}))
	add("ack kept: read from its line", obj{"ack": acked1, "log_size": size})
	add("ack kept: the batch follows it", after1)
	add("ack kept: answered", with(after1, "answer", answer(result(1, "accepted"), result(2, "duplicate"))))
	add("caught up", obj{"ack": ack(end1, size, sums[2]), "log_size": size, "window_offset": end1, "window": log[end1:]})
	add("a line still being written is not sent", obj{"log_size": end0 + 10, "window_offset": 0, "window": log[:end0+10]})
	add("a line the issuer refused as not a record", obj{"ack": ack(0, 4, "-"), "log_size": 4 + size, "window_offset": 0, "window": "{x}\n" + log})
	add("a refused line acknowledged, the log rewritten", obj{"ack": ack(0, 4, "-"), "log_size": size, "window_offset": 0, "window": log})
	add("the old two-field ack file is corrupt", obj{"ack": fmt.Sprintf("%d %s\n", end0, sums[0]), "log_size": size})
	add("ack not ASCII digits", obj{"ack": "1e3 - 0\n", "log_size": size})
	add("ack with a leading zero", obj{"ack": "0" + acked1, "log_size": size})
	add("ack without its newline", obj{"ack": strings.TrimSuffix(acked1, "\n"), "log_size": size})
	add("ack over its bound", obj{"ack": acked1 + strings.Repeat(" ", 128), "log_size": size})
	add("ack not UTF-8", obj{"ack": obj{"base64": "/w=="}, "log_size": size})
	add("ack past the end: the log was truncated", obj{"ack": ack(end1, size+1, sums[2]), "log_size": size})
	add("ack's line replaced: the log was rewritten", obj{"ack": ack(0, end0, sums[1]), "log_size": size, "window_offset": 0, "window": log})
	add("ack's line no longer ends there", obj{"ack": ack(0, end0-1, sums[0]), "log_size": size, "window_offset": 0, "window": log})
	many := strings.Repeat("{}\n", 501)
	add("a batch is at most 500 lines", obj{"log_size": len(many), "window_offset": 0, "window": many})
	add("the window not where read answered", obj{"ack": acked1, "log_size": size, "window_offset": end0, "window": log[end0:]})
	add("a window longer than read answered", obj{"log_size": 3, "window_offset": 0, "window": "{}\n{}\n"})
	add("an answer without a window", obj{"log_size": size, "answer": answer()})
	add("log_size missing", obj{"ack": acked1})
	add("log_size negative", obj{"log_size": -1})
	return vs
}

// TestPilotWaitNearInt64Range: a deployment's bounds near the int64 range
// (a vector cannot carry them: JSON numbers past 2^53 do not replay alike
// in JS) double to the max, never past the range into a wait that wraps
// around (it had answered a max of 150994944 ms). The core reads numbers
// as canonical JSON writes them, so the bounds read are 6917529027641082000
// and 9223372036854775000.
func TestPilotWaitNearInt64Range(t *testing.T) {
	res := call(t, "pilot_queue", json.RawMessage(`{"failed_passes":30,"backoff_ms":{"min":6917529027641081856,"max":9223372036854774784}}`))
	var a struct {
		Wait struct{ Min, Max json.Number }
	}
	d := json.NewDecoder(bytes.NewReader(res))
	d.UseNumber()
	if err := d.Decode(&a); err != nil || a.Wait.Max != "9223372036854775000" || a.Wait.Min != "4611686018427387500" {
		t.Fatalf("wait %+v (%v) in %s", a.Wait, err, res)
	}
}
