package core_test

import (
	"encoding/json"
	"testing"
)

// newUserVectors pin what a new user tripped on (issue 34): a stdio
// server's stray stdout lines are a fact on the record, never a block.
func newUserVectors(t testing.TB) []opVector {
	h := newHostFacts(t)
	var vs []opVector
	add := func(op, name string, request any) { vs = append(vs, opVector{Op: op, Name: name, Request: request}) }
	stray := func(n any) obj { o := deepCopy(h.observed); o["stray_lines"] = n; return o }

	add("continuity_check", "stray lines on the record", with(continuityRequest(h.lock, nil, "enforce"), "observed", stray(2)))
	add("continuity_check", "no stray lines leave the record as it was", with(continuityRequest(h.lock, nil, "enforce"), "observed", stray(0)))
	add("continuity_check", "stray lines negative refused", with(continuityRequest(h.lock, nil, "enforce"), "observed", stray(-1)))
	add("continuity_check", "stray lines not a number refused", with(continuityRequest(h.lock, nil, "enforce"), "observed", stray("2")))
	add("make_lock", "from observed with stray lines", obj{"observed": stray(3), "approved_at": approvedAt})

	// Every identity refusal names both endpoints: from the detail, from
	// the record's server when signed evidence names another subject, and
	// behind a tool observation that decided first.
	recordOf := func(r obj) obj {
		var rec obj
		if err := json.Unmarshal(call(t, "continuity_check", r), &rec); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	good := with(continuityRequest(h.lock, nil, "enforce"), "observed", h.observed)
	evidence := with(good, "evidence", []any{obj{"observation": "server_identity_mismatch", "detail": obj{"subject": "https://other.example/mcp"}}})
	add("refusal", "identity mismatch from evidence names both endpoints", obj{"record": recordOf(evidence)})
	moved := with(continuityRequest(h.lock, nil, "enforce"), "observed", h.changedObserved)
	add("refusal", "identity mismatch behind a tool change names both endpoints", obj{"record": recordOf(moved)})
	relative := withObserved(good, "endpoint", "stdio:./server --port 1")
	relative["lock"] = resultField(t, call(t, "make_lock", obj{"tools": baseTools(), "server": obj{"url": "stdio:/opt/mcp/server --port 1"}, "approved_at": approvedAt}), "lock")
	add("refusal", "identity mismatch of a path spelled differently", obj{"record": recordOf(relative)})

	// A mistyped command and an early exit, in the core's words.
	down := func(o obj) obj { return with(continuityRequest(h.lock, nil, "enforce"), "observed", o) }
	add("continuity_check", "command not found without the command refused", down(obj{"endpoint": fixtureURL, "failure": "command_not_found", "failure_at": "handshake"}))
	add("continuity_check", "command not found at tools/list refused", down(obj{"endpoint": fixtureURL, "failure": "command_not_found", "failure_at": "tools/list", "failure_page": 1, "failure_command": "srv"}))
	add("continuity_check", "failure_command with another fault refused", down(obj{"endpoint": fixtureURL, "failure": "connect_refused", "failure_at": "handshake", "failure_command": "srv"}))
	add("continuity_check", "exit status with another fault refused", down(obj{"endpoint": fixtureURL, "failure": "connect_refused", "failure_at": "handshake", "exit_status": 1}))
	add("continuity_check", "process exited with its status alone", down(obj{"endpoint": fixtureURL, "failure": "process_exited", "failure_at": "handshake", "exit_status": 127}))
	long := ""
	for i := 0; i < 40; i++ {
		long += "é0123"
	}
	add("continuity_check", "process exited with a long stderr tail clipped to its last lines", down(obj{"endpoint": fixtureURL, "failure": "process_exited", "failure_at": "handshake",
		"stderr_tail": "one\ntwo\r\n\n  three  \nfour \"quoted\" \u202e\n" + long + "\n\n"}))
	// A lockfile an issuer signed, checked without the issuer's key
	// directory: the refusal says which flag gives it.
	signedLock := signDoc(t, h.lock, loadKey(t, "test-issuer"), true)
	add("refusal", "lockfile of an issuer checked without its key directory", obj{"record": recordOf(with(good, "lock", signedLock))})
	opSigned := signDoc(t, h.lock, loadKey(t, "test-operator"), false)
	add("refusal", "lockfile of an operator checked without its key", obj{"record": recordOf(with(good, "lock", opSigned))})
	// Credentials on a command line or in a URL are never written in
	// clear (issue 34, item 10).
	add("endpoint", "credentials on a command line hidden", obj{"command": []any{"npx", "-y", "@sentry/mcp-server", "--access-token=sntrys_abc", "--api-key", "k-123",
		"--host", "sentry.example", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN=ghp_x", "--header", "Authorization: Bearer eyJ0", "Bearer tok", "--no-auth", "/data", "--apiKey=v", "--key-file", "/k.pem", "--port", "8080"}})
	add("endpoint", "credentials in a url hidden", obj{"url": "https://alice:s3cret@mcp.example.com/mcp?api_key=abc&region=eu&access_token=t#frag"})
	add("endpoint", "an endpoint written with a credential read back", obj{"endpoint": "stdio:npx -y @supabase/mcp-server-supabase --access-token=sbp_123 --read-only"})
	clearLock := resultField(t, call(t, "make_lock", obj{"tools": baseTools(), "approved_at": approvedAt}), "lock")
	var cl obj
	if err := json.Unmarshal([]byte(clearLock), &cl); err != nil {
		t.Fatal(err)
	}
	// A lockfile written before credentials were hidden pins one in clear:
	// it still matches the server answering with it hidden, and the record
	// never repeats it.
	cl["server"] = obj{"url": "stdio:npx -y @supabase/mcp-server-supabase --access-token=sbp_123"}
	delete(cl, "sha256") // edited here: as a lockfile of before its digest
	old := withObserved(good, "endpoint", "stdio:npx -y @supabase/mcp-server-supabase --access-token=REDACTED")
	old["lock"] = cl
	add("continuity_check", "a lockfile pinning a credential in clear matches it hidden", old)
	rotated := withObserved(good, "endpoint", "stdio:npx -y @supabase/mcp-server-supabase --access-token=sbp_rotated")
	rotated["lock"] = cl
	add("continuity_check", "a rotated credential is the same server", rotated)
	add("make_lock", "a server url with a credential pinned hidden", obj{"tools": baseTools(), "approved_at": approvedAt, "server": obj{"url": "stdio:srv --token abc"}})
	add("lock_check", "command not found", obj{"lock": h.lock, "failure": "command_not_found", "failure_at": "handshake", "failure_command": "no-such-mcp-server"})
	return vs
}
