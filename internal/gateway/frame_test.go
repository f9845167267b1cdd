package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/crawlcheck/verifier/internal/preflight"
)

// TestParseEnvelope: the one-walk envelope reads what the map-building
// reader read, and refuses what it refused: a member named twice (also
// through an escape, also past the 16 compared pairwise), a method that
// is not a string, what is not one JSON object.
func TestParseEnvelope(t *testing.T) {
	many := func(extra string) string {
		var b strings.Builder
		b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"m"`)
		for i := range 40 {
			fmt.Fprintf(&b, `,"k%d":%d`, i, i)
		}
		return b.String() + extra + "}"
	}
	for _, c := range []struct {
		line          string
		ok            bool
		method, id    string
		params, res   string
		toolName      string
		toolNameValid bool
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a","arguments":{"name":"b","x":[1,{"y":"}"}]}}}`, true, "tools/call", "7", `{"name":"a","arguments":{"name":"b","x":[1,{"y":"}"}]}}`, "", "a", true},
		{` { "id" : "x" , "result" : { } } `, true, "", `"x"`, "", "{ }", "", false},
		{`{"jsonrpc":"2.0","method":"met\u0068od","params":{"n\u0061me":"t\u00e9"}}`, true, "met\u0068od", "", `{"n\u0061me":"t\u00e9"}`, "", "té", true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":1}}`, true, "tools/call", "1", `{"name":1}`, "", "", false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}`, true, "tools/call", "1", `{"name":"a","name":"b"}`, "", "", false},
		{many(""), true, "m", "1", "", "", "", false},
		{`{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`, false, "", "", "", "", "", false},
		{`{"jsonrpc":"2.0","id":1,"method":"a","m\u0065thod":"b"}`, false, "", "", "", "", "", false},
		{many(`,"k3":0`), false, "", "", "", "", "", false},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, false, "", "", "", "", "", false},
		{`{"jsonrpc":"2.0","id":1,"method":""}`, false, "", "", "", "", "", false},
		{`{"jsonrpc":"2.0"}`, false, "", "", "", "", "", false},
		{`[{"jsonrpc":"2.0","id":1,"method":"a"}]`, false, "", "", "", "", "", false},
		{`{"jsonrpc":"2.0","id":1,"method":"a"`, false, "", "", "", "", "", false},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", false, "", "", "", "", "", false},
		// Invalid JSON anywhere in the line, which the walk checks as it
		// splits (json.Valid did it before, in a pass of its own).
		{`{"jsonrpc":"2.0","id":1,"method":"a","params":[1,]}`, false, "", "", "", "", "", false},
		{`{"jsonrpc":"2.0","id":01,"method":"a"}`, false, "", "", "", "", "", false},
		{`{"jsonrpc":"2.0","id":1,"method":"a"} {}`, false, "", "", "", "", "", false},
		{`{"jsonrpc":"2.0","id":1,"method":"a",}`, false, "", "", "", "", "", false},
		{`{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":"\q"}}`, false, "", "", "", "", "", false},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":{\"x\":\"\x01\"}}", false, "", "", "", "", "", false},
		{`{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":tru}}`, false, "", "", "", "", "", false},
		{"\t{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\r", true, "a", "1", "", "", "", false},
	} {
		env, err := parseEnvelope([]byte(c.line))
		if (err == nil) != c.ok {
			t.Errorf("%s: err %v, want ok %v", c.line, err, c.ok)
			continue
		}
		if !c.ok {
			continue
		}
		if env.method != c.method || string(env.id) != c.id || string(env.params) != c.params || string(env.result) != c.res {
			t.Errorf("%s: got method %q id %s params %s result %s", c.line, env.method, env.id, env.params, env.result)
		}
		if env.params != nil {
			name, ok := toolName(env.params)
			if name != c.toolName || ok != c.toolNameValid {
				t.Errorf("%s: toolName %q %v, want %q %v", c.line, name, ok, c.toolName, c.toolNameValid)
			}
		}
	}
}

// FuzzEnvelope: a line is read as a message only when it is valid UTF-8
// and one JSON object by json.Valid's grammar.
func FuzzEnvelope(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"a","params":{"n":[1,2.5e3,true,null,"\u00e9"]}}`, `{"id":"x","result":{}}`, `{"id":1,"method":"a"} x`, `{"id":1,"method":"a","params":[1,]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		_, err := parseEnvelope(line)
		if err == nil && (!utf8.Valid(line) || !json.Valid(line) || bytes.TrimLeft(line, " \t\r\n")[0] != '{') {
			t.Fatalf("parseEnvelope read %q as a message", line)
		}
	})
}

// BenchmarkRoute is a call's routing both ways: the client's tools/call
// (envelope, tool name) and the server's answer (envelope, id).
func BenchmarkRoute(b *testing.B) {
	call := []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"tool_00001","arguments":{"id":"a"}}}`)
	answer := []byte(`{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"tool_00001 called with a"}],"isError":false}}`)
	b.ReportAllocs()
	for b.Loop() {
		env, _ := parseEnvelope(call)
		toolName(env.params)
		idKey(env.id)
		env, _ = parseEnvelope(answer)
		idKey(env.id)
	}
}

// TestListTTL: the shortest ttlMs of a listing's pages, on a 2026-07-28
// session only; none when a page has none, a bad one, or 0.
func TestListTTL(t *testing.T) {
	g := &Gateway{}
	obs := func(version string, pages ...string) preflight.Observation {
		o := preflight.Observation{ProtocolVersion: version}
		for _, p := range pages {
			o.Pages = append(o.Pages, []byte(p))
		}
		return o
	}
	for _, c := range []struct {
		obs  preflight.Observation
		want time.Duration
	}{
		{obs("2026-07-28", `{"tools":[],"ttlMs":300}`), 300 * time.Millisecond},
		{obs("2026-07-28", `{"tools":[],"nextCursor":"2","ttlMs":900}`, `{"tools":[],"ttlMs":250}`), 250 * time.Millisecond},
		{obs("2026-07-28", `{"tools":[],"ttlMs":900}`, `{"tools":[]}`), 0},
		{obs("2026-07-28", `{"tools":[],"ttlMs":0}`), 0},
		{obs("2026-07-28", `{"tools":[],"ttlMs":-5}`), 0},
		{obs("2026-07-28", `{"tools":[],"ttlMs":1.5}`), 0},
		{obs("2026-07-28", `{"tools":[],"ttlMs":"300"}`), 0},
		{obs("2026-07-28", `{"tools":[],"ttlMs":99999999999999999}`), maxTTL},
		{obs("2025-11-25", `{"tools":[],"ttlMs":300}`), 0},
		{preflight.Observation{ProtocolVersion: "2026-07-28", Pages: [][]byte{[]byte(`{"tools":[],"ttlMs":300}`)}, Failure: preflight.FaultTimeout}, 0},
	} {
		if got := g.listTTL(c.obs); got != c.want {
			t.Errorf("%s %q: %v, want %v", c.obs.ProtocolVersion, c.obs.Pages, got, c.want)
		}
	}
}
