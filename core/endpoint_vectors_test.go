package core_test

import (
	"encoding/json"
	"testing"
)

// endpointVectors pin what counts as the same server (issue 32, item 4):
// a lockfile pins the canonical form of its URL, identity compares the
// canonical forms of both sides (so a lockfile of before, spelled
// otherwise, still matches), and a refusal shows the forms compared.
func endpointVectors(t testing.TB) []opVector {
	h := newHostFacts(t)
	var vs []opVector
	add := func(op, name string, request any) { vs = append(vs, opVector{Op: op, Name: name, Request: request}) }

	add("endpoint", "a url spelled otherwise written in its canonical form", obj{"url": "HTTPS://MCP.Example.COM:443/mcp#top"})
	add("endpoint", "a url path kept exactly", obj{"url": "http://Example.com:80/A%2fb/?Q=1"})
	add("endpoint", "a url with a punycode host", obj{"url": "https://xn--bcher-kva.example/mcp"})
	add("endpoint", "a url with a non-ASCII host refused", obj{"url": "https://bücher.example/mcp"})
	add("endpoint", "a url with a percent-encoded host refused", obj{"url": "https://b%C3%BCcher.example/mcp"})
	add("make_lock", "a server url pinned in its canonical form", obj{"tools": baseTools(), "approved_at": approvedAt, "server": obj{"url": "HTTPS://MCP.Example.COM:443/mcp"}})
	add("make_lock", "a server url with a non-ASCII host refused", obj{"tools": baseTools(), "approved_at": approvedAt, "server": obj{"url": "https://bücher.example/mcp"}})
	observed := deepCopy(h.observed)
	observed["endpoint"] = "HTTPS://MCP.EXAMPLE.COM:443/mcp"
	add("make_lock", "from observed at a url spelled otherwise", obj{"observed": observed, "approved_at": approvedAt})

	// A lockfile of before this rule pins the URL as it was typed.
	lockAt := func(url string) obj {
		var l obj
		if err := json.Unmarshal([]byte(resultField(t, call(t, "make_lock", obj{"tools": baseTools(), "approved_at": approvedAt}), "lock")), &l); err != nil {
			t.Fatal(err)
		}
		l["server"] = obj{"url": url}
		delete(l, "sha256") // edited here: as a lockfile of before its digest
		return l
	}
	good := with(continuityRequest(h.lock, nil, "enforce"), "observed", h.observed)
	at := func(lockURL, observedURL string) obj {
		r := withObserved(good, "endpoint", observedURL)
		r["lock"] = lockAt(lockURL)
		return r
	}
	add("continuity_check", "a lockfile spelling its url otherwise matches the same server", at("HTTPS://MCP.Example.COM:443/mcp#top", fixtureURL))
	add("continuity_check", "localhost and 127.0.0.1 are different servers", at("http://localhost:3000/mcp", "http://127.0.0.1:3000/mcp"))
	add("continuity_check", "a trailing slash is another path", at("https://mcp.example.com/mcp", "https://mcp.example.com/mcp/"))
	add("continuity_check", "a punycode host against its unicode spelling is another server", at("https://xn--bcher-kva.example/mcp", "https://bücher.example/mcp"))
	shown := at("HTTP://LocalHost:80/mcp#x", "http://127.0.0.1:80/mcp")
	add("continuity_check", "a mismatch shows the canonical forms compared", shown)
	var rec obj
	if err := json.Unmarshal(call(t, "continuity_check", shown), &rec); err != nil {
		t.Fatal(err)
	}
	add("refusal", "identity mismatch shows the canonical forms compared", obj{"record": rec})
	return vs
}
