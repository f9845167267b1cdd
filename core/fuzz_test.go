package core_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/core/internal/canon"
)

// The property the fuzz targets below hold the core to: no page a server
// sends, however broken, turns into "proceed" (continuity_check) or
// "connect" (lock_check). The oracle is written independently of the core,
// with encoding/json, and only in one direction: whatever it finds wrong
// with the pages must not pass; the core may refuse more (duplicate keys,
// invalid UTF-8), never less.

// fuzzTools are the tools the fuzz lockfile approves.
const fuzzTools = `[{"name":"a","description":"A tool.","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}},` +
	`{"name":"b","annotations":{"readOnlyHint":true}},{"name":"c","description":""}]`

var fuzzLockNames = []string{"a", "b", "c"}

func fuzzLock(t testing.TB) string {
	t.Helper()
	resp := core.Call("make_lock", []byte(`{"tools":`+fuzzTools+`,"approved_at":"2026-10-07T10:45:00Z","server":{"url":"https://mcp.example.com/mcp"}}`))
	var env struct {
		Result struct{ Lock string }
	}
	if err := json.Unmarshal(resp, &env); err != nil || env.Result.Lock == "" {
		t.Fatalf("make_lock: %s", resp)
	}
	return env.Result.Lock
}

// fuzzSeeds are page pairs (the second may be empty: one page).
var fuzzSeeds = [][2]string{
	{`{"tools":` + fuzzTools + `}`, ``},
	{`[{"name":"a","description":"A tool.","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}}]`, ``},
	{`{"tools":[{"name":"a","description":"A tool.","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}}],"nextCursor":"p2"}`,
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"b","annotations":{"readOnlyHint":true}},{"name":"c","description":""}]}}`},
	{`{"tools":` + fuzzTools + `,"nextCursor":"more"}`, ``},
	{`{"tools":` + fuzzTools + `,"nextCursor":""}`, ``},
	{`{"tools":[],"nextCursor":"x"}`, `{"tools":` + fuzzTools + `,"nextCursor":"x"}`},
	{`{"tools":` + fuzzTools + `}`, `{"tools":[]}`},
	{`{"tools":[{"name":"a","description":"A tool.","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}},{"name":"a"}]}`, ``},
	{`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}`, ``},
	{`{"tools":[{"name":"b","annotations":{"readOnlyHint":true},"annotations":{}}]}`, ``},
	{"{\"tools\":[{\"name\":\"b\xff\"}]}", ``},
	{`{"tools":[{"name":"c","description":"","inputSchema":null}]}`, ``},
	{`{"tools":[{"name":"b","annotations":{"readOnlyHint":true}}]`, ``},
	{`<html>502 Bad Gateway</html>`, ``},
}

// oracle reads the pages with encoding/json and returns the tool names of a
// complete, well-formed walk; ok is false when it finds the walk malformed
// or incomplete.
func oracle(pages []string, capped bool) (names []string, ok bool) {
	if capped || len(pages) == 0 {
		return nil, false
	}
	seen := map[string]bool{}
	cursors := map[string]bool{}
	for i, p := range pages {
		if !utf8.ValidString(p) || !json.Valid([]byte(p)) {
			return nil, false
		}
		var v any
		json.Unmarshal([]byte(p), &v)
		var list []any
		var cursor any
		switch x := v.(type) {
		case []any:
			list = x
		case map[string]any:
			if _, rpc := x["jsonrpc"]; rpc {
				if _, isErr := x["error"]; isErr {
					return nil, false
				}
				if x, ok = x["result"].(map[string]any); !ok {
					return nil, false
				}
			}
			if list, ok = x["tools"].([]any); !ok {
				return nil, false
			}
			cursor = x["nextCursor"]
		default:
			return nil, false
		}
		last := i == len(pages)-1
		switch c := cursor.(type) {
		case nil:
			if !last {
				return nil, false
			}
		case string:
			if last || c == "" || cursors[c] {
				return nil, false
			}
			cursors[c] = true
		default:
			return nil, false
		}
		for _, e := range list {
			tool, isObj := e.(map[string]any)
			if !isObj {
				return nil, false
			}
			name, isStr := tool["name"].(string)
			if !isStr || name == "" || seen[name] {
				return nil, false
			}
			seen[name] = true
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, true
}

func fuzzRequest(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rawPages passes pages as exact bytes: encoding/json would repair invalid
// UTF-8 in a string.
func rawPages(pages []string) []any {
	out := make([]any, len(pages))
	for i, p := range pages {
		out[i] = map[string]string{"base64": base64.StdEncoding.EncodeToString([]byte(p))}
	}
	return out
}

// envelope checks that a response is a canonical JSON envelope and returns it.
func envelope(t *testing.T, resp []byte) (ok bool, result map[string]any, code string) {
	t.Helper()
	v, err := canon.Parse(resp)
	if err != nil || !bytes.Equal(canon.Canonical(v), resp) {
		t.Fatalf("the response is not canonical JSON (%v): %q", err, resp)
	}
	var env struct {
		OK     bool           `json:"ok"`
		Result map[string]any `json:"result"`
		Error  struct{ Code string }
	}
	if err := json.Unmarshal(resp, &env); err != nil {
		t.Fatal(err)
	}
	return env.OK, env.Result, env.Error.Code
}

func pagesOf(p1, p2 string) []string {
	if p2 == "" {
		return []string{p1}
	}
	return []string{p1, p2}
}

func FuzzContinuityCheckPages(f *testing.F) {
	lock := fuzzLock(f)
	for _, s := range fuzzSeeds {
		for mode := range uint8(3) {
			f.Add(s[0], s[1], mode, false)
		}
		f.Add(s[0], s[1], uint8(2), true)
	}
	modes := []string{"observe", "review", "enforce"}
	f.Fuzz(func(t *testing.T, p1, p2 string, m uint8, capped bool) {
		mode := modes[int(m)%3]
		pages := pagesOf(p1, p2)
		resp := core.Call("continuity_check", fuzzRequest(t, map[string]any{
			"now": "2026-11-30T12:00:00Z", "mode": mode, "lock": lock,
			"observed": map[string]any{"endpoint": "https://mcp.example.com/mcp", "pages": rawPages(pages), "page_cap_reached": capped},
		}))
		ok, rec, code := envelope(t, resp)
		if !ok {
			t.Fatalf("continuity_check refused a well-formed request (%s): %s", code, resp)
		}
		names, clean := oracle(pages, capped)
		effect, _ := rec["effect"].(string)
		enforced := effect
		if mode == "observe" {
			if effect != "proceed" {
				t.Fatalf("observe blocked: %s", effect)
			}
			enforced, _ = rec["would"].(map[string]any)["effect"].(string)
		}
		if enforced == "proceed" {
			if !clean {
				t.Fatalf("%s: proceed on pages the oracle refuses: %q", mode, pages)
			}
			for _, n := range names {
				if !slices.Contains(fuzzLockNames, n) {
					t.Fatalf("%s: proceed with an unapproved tool %q", mode, n)
				}
			}
			if mode == "review" && !slices.Equal(names, fuzzLockNames) {
				t.Fatalf("review: proceed with tools %v", names)
			}
		}
		observed := rec["observed"].(map[string]any)
		if (observed["malformed"] == true || observed["truncated"] == true) && enforced == "proceed" {
			t.Fatalf("%s: proceed on a malformed or truncated list: %v", mode, observed)
		}
		// The record verifies.
		vr := core.Call("verify_record", fuzzRequest(t, map[string]any{"record": rec}))
		if ok, res, _ := envelope(t, vr); !ok || res["valid"] != true {
			t.Fatalf("the record does not verify: %s", vr)
		}
	})
}

func FuzzLockCheckPages(f *testing.F) {
	lock := fuzzLock(f)
	for _, s := range fuzzSeeds {
		f.Add(s[0], s[1], false)
	}
	f.Add(fuzzSeeds[0][0], "", true)
	f.Fuzz(func(t *testing.T, p1, p2 string, capped bool) {
		pages := pagesOf(p1, p2)
		resp := core.Call("lock_check", fuzzRequest(t, map[string]any{"lock": lock, "pages": rawPages(pages), "page_cap_reached": capped}))
		ok, res, code := envelope(t, resp)
		names, clean := oracle(pages, capped)
		if !ok {
			// The one refusal of a well-formed request: pages after a page
			// that ended the list (the binding's mistake, not the server's).
			if code != "bad_request" || clean {
				t.Fatalf("lock_check refused (%s): %s", code, resp)
			}
			return
		}
		decision, verdict := res["decision"], res["verdict"]
		if (decision == "connect") != (verdict == "unchanged") {
			t.Fatalf("decision %v with verdict %v", decision, verdict)
		}
		if decision == "connect" && (!clean || !slices.Equal(names, fuzzLockNames)) {
			t.Fatalf("connect on pages %q (oracle: %v %v)", pages, names, clean)
		}
		if !clean && verdict == "unchanged" {
			t.Fatalf("unchanged on pages the oracle refuses: %q", pages)
		}
	})
}
