package lock

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/core/internal/coretest"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

var approved = time.Date(2026, 10, 7, 10, 45, 0, 0, time.UTC)

const toolList = `[
	{"name":"list_issues","description":"List issues.","inputSchema":{"type":"object","properties":{"repo":{"type":"string"}}},"annotations":{"readOnlyHint":true}},
	{"name":"create_issue","description":"Create an issue.","inputSchema":{"type":"object"}},
	{"name":"ping"},
	{"name":"\ud83d\ude00 smile","description":""}
]`

func parseBytes(t testing.TB, b []byte) (File, error) {
	t.Helper()
	v, err := canon.Parse(b)
	if err != nil {
		t.Fatalf("the lockfile is not strict JSON: %v\n%s", err, b)
	}
	return Parse(v)
}

func mustParse(t testing.TB, b []byte) File {
	t.Helper()
	f, err := parseBytes(t, b)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, b)
	}
	return f
}

func server() Server {
	info, _ := canon.ParseString(`{"version":"1.4.0","name":"issues"}`)
	return Server{URL: "https://mcp.example.com/mcp", ProtocolVersion: "2025-06-18", Info: info}
}

func newLock(t testing.TB) *Crawlcheck {
	l := NewCrawlcheck(server(), approved, coretest.Hashed(t, toolList), nil)
	l.Seal(nil)
	return l
}

func fileBytes(f File) []byte {
	if f.Agentgate != nil {
		return f.Agentgate.Bytes()
	}
	return f.Crawlcheck.Bytes()
}

func TestCrawlcheckWrittenLayout(t *testing.T) {
	l := newLock(t)
	b := l.Bytes()
	if !bytes.HasSuffix(b, []byte("}\n")) || !bytes.HasPrefix(b, []byte("{\n  \"kind\": \"crawlcheck-mcp-lock\",\n  \"v\": 1,\n  \"server\": {\n    \"url\": ")) {
		t.Errorf("layout:\n%s", b)
	}
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	want := "kind v server approved_at tools_sha256 count tools parts descriptions scan_at_approval sha256"
	if strings.Join(keys, " ") != want {
		t.Errorf("member order %v, want %s", keys, want)
	}
	var doc struct {
		ApprovedAt   string            `json:"approved_at"`
		ToolsSHA256  string            `json:"tools_sha256"`
		Count        int               `json:"count"`
		Tools        []Entry           `json:"tools"`
		Descriptions map[string]string `json:"descriptions"`
		SHA256       string            `json:"sha256"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.ApprovedAt != "2026-10-07T10:45:00.000Z" || doc.Count != 4 {
		t.Errorf("approved_at %s count %d", doc.ApprovedAt, doc.Count)
	}
	var order []string
	var hs []string
	for _, e := range doc.Tools {
		order = append(order, e.Name)
		hs = append(hs, e.SHA256)
	}
	if strings.Join(order, ",") != "create_issue,list_issues,ping,\U0001F600 smile" {
		t.Errorf("tools not sorted by name: %v", order)
	}
	if doc.ToolsSHA256 != tools.ToolsSHA256(hs) {
		t.Error("tools_sha256")
	}
	// Descriptions are kept for the tools that have one, "" included.
	if len(doc.Descriptions) != 3 || doc.Descriptions["\U0001F600 smile"] != "" || doc.Descriptions["create_issue"] != "Create an issue." {
		t.Errorf("descriptions %v", doc.Descriptions)
	}
	// sha256 is the digest of the canonical document without itself.
	v, _ := canon.Parse(b)
	if doc.SHA256 != canon.SHA256Hex(v.Without("sha256")) {
		t.Error("sha256 is not the digest of the content")
	}
}

func TestRoundTripIsByteIdentical(t *testing.T) {
	unsealed := NewCrawlcheck(Server{URL: "stdio:npx server"}, approved, coretest.Hashed(t, toolList), nil)
	signed := newLock(t)
	signed.Seal(func(d string) string { return "ed25519:op_0123456789abcdef:" + strings.Repeat("A", 86) })
	legacy := newLock(t)
	legacy.Parts = nil
	legacy.Seal(nil)
	withScan := newLock(t)
	withScan.ScanAtApproval, _ = canon.ParseString(`{"severity":"none","kinds":{},"findings":[]}`)
	withScan.Seal(nil)
	empty := NewCrawlcheck(Server{}, approved, nil, nil)

	ag := &Agentgate{GeneratedBy: "agentgate@0.4.1", GeneratedAt: approved}
	ag.Put(NewAgentgateServer("filesystem", coretest.Hashed(t, toolList)))
	ag.Put(NewAgentgateServer("empty", nil))
	ag.Put(NewAgentgateServer("\u00e9", coretest.Hashed(t, `[{"name":"b"},{"name":"a"}]`)))

	for name, b := range map[string][]byte{
		"unsealed": unsealed.Bytes(), "signed": signed.Bytes(), "legacy": legacy.Bytes(),
		"scan": withScan.Bytes(), "no tools": empty.Bytes(), "agentgate": ag.Bytes(),
	} {
		t.Run(name, func(t *testing.T) {
			f := mustParse(t, b)
			if again := fileBytes(f); !bytes.Equal(again, b) {
				t.Errorf("written:\n%s\nrewritten:\n%s", b, again)
			}
		})
	}
}

func TestParseRefusesUnsupported(t *testing.T) {
	for _, c := range []struct{ doc, name string }{
		{`{"kind":"crawlcheck-mcp-lock-check","v":1}`, `"crawlcheck-mcp-lock-check"`},
		{`{"kind":"other-lock"}`, `"other-lock"`},
		{`{"kind":5}`, "kind 5"},
		{`{"kind":"crawlcheck-mcp-lock","v":2}`, "v=2"},
		{`{"kind":"crawlcheck-mcp-lock","v":"1"}`, `v="1"`},
		{`{"kind":"crawlcheck-mcp-lock"}`, "v=null"},
		{`{"lockfileVersion":2}`, "lockfileVersion 2"},
		{`{"lockfileVersion":"1"}`, `lockfileVersion "1"`},
		{`{"lockfileVersion":null}`, "lockfileVersion null"},
	} {
		_, err := parseBytes(t, []byte(c.doc))
		if cerr.CodeOf(err) != cerr.LockUnsupported || !strings.Contains(cerr.Message(err), c.name) {
			t.Errorf("%s: got %v, want lock_unsupported naming %s", c.doc, err, c.name)
		}
	}
}

// edit returns the lockfile b with one change made to its JSON.
func edit(t testing.TB, b []byte, change func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	change(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type jm = map[string]any

func TestCrawlcheckRefusesBadFields(t *testing.T) {
	base := newLock(t).Bytes()
	tool0 := func(m jm) jm { return m["tools"].([]any)[0].(jm) }
	parts := func(m jm) jm { return m["parts"].(jm) }
	for _, c := range []struct {
		name   string
		change func(jm)
		msg    string
	}{
		{"unknown member", func(m jm) { m["note"] = "x" }, `unknown member "note"`},
		{"server missing", func(m jm) { delete(m, "server") }, `"server" must be an object`},
		{"server a string", func(m jm) { m["server"] = "https://x" }, `"server" must be an object`},
		{"server.url empty", func(m jm) { m["server"].(jm)["url"] = "" }, "server.url"},
		{"server.url a number", func(m jm) { m["server"].(jm)["url"] = 1 }, "server.url"},
		{"server.protocol_version a number", func(m jm) { m["server"].(jm)["protocol_version"] = 20250618 }, "server.protocol_version"},
		{"server.info a string", func(m jm) { m["server"].(jm)["info"] = "issues" }, "server.info"},
		{"server unknown member", func(m jm) { m["server"].(jm)["headers"] = jm{} }, "server.headers"},
		{"approved_at missing", func(m jm) { delete(m, "approved_at") }, "approved_at"},
		{"approved_at not RFC 3339", func(m jm) { m["approved_at"] = "2026-10-07 10:45" }, "approved_at"},
		{"approved_at a number", func(m jm) { m["approved_at"] = 1791369900 }, "approved_at"},
		{"tools missing", func(m jm) { delete(m, "tools") }, `"tools" must be an array`},
		{"tools an object", func(m jm) { m["tools"] = jm{} }, `"tools" must be an array`},
		{"tool null", func(m jm) { m["tools"].([]any)[0] = nil }, "tools[0]"},
		{"tool extra member", func(m jm) { tool0(m)["description"] = "x" }, "tools[0]"},
		{"tool empty name", func(m jm) { tool0(m)["name"] = "" }, "tools[0]"},
		{"tool uppercase hash", func(m jm) { tool0(m)["sha256"] = strings.ToUpper(tool0(m)["sha256"].(string)) }, "tools[0]"},
		{"tool short hash", func(m jm) { tool0(m)["sha256"] = "abc" }, "tools[0]"},
		{"tool listed twice", func(m jm) { m["tools"] = append(m["tools"].([]any), tool0(m)) }, "listed twice"},
		{"count off by one", func(m jm) { m["count"] = 5 }, "count is 5"},
		{"count a string", func(m jm) { m["count"] = "4" }, "count is \"4\""},
		{"count missing", func(m jm) { delete(m, "count") }, "count is null"},
		{"tools_sha256 wrong", func(m jm) { m["tools_sha256"] = sum("x") }, "tools_sha256"},
		{"tools_sha256 missing", func(m jm) { delete(m, "tools_sha256") }, "tools_sha256"},
		{"parts not an object", func(m jm) { m["parts"] = []any{} }, `"parts" must be an object`},
		{"parts missing a tool", func(m jm) { delete(parts(m), "ping") }, `"parts" must be an object`},
		{"parts of an unknown tool", func(m jm) { parts(m)["other"] = parts(m)["ping"]; delete(parts(m), "ping") }, `"other"`},
		{"part missing", func(m jm) { delete(parts(m)["ping"].(jm), "annotations") }, "parts.ping"},
		{"part extra", func(m jm) { parts(m)["ping"].(jm)["title"] = sum("x") }, "parts.ping"},
		{"part not hex", func(m jm) { parts(m)["ping"].(jm)["name"] = "x" }, "parts.ping"},
		{"part not an object", func(m jm) { parts(m)["ping"] = "x" }, "parts.ping"},
		{"descriptions not an object", func(m jm) { m["descriptions"] = []any{} }, `"descriptions" must be an object`},
		{"description of an unknown tool", func(m jm) { m["descriptions"].(jm)["other"] = "x" }, "descriptions.other"},
		{"description not a string", func(m jm) { m["descriptions"].(jm)["ping"] = 1 }, "descriptions.ping"},
		{"scan_at_approval not an object", func(m jm) { m["scan_at_approval"] = "none" }, "scan_at_approval"},
		{"sha256 empty", func(m jm) { m["sha256"] = "" }, "sha256 must be a non-empty string"},
		{"sha256 a number", func(m jm) { m["sha256"] = 1 }, "sha256 must be a non-empty string"},
		{"sha256 not hex", func(m jm) { m["sha256"] = "Z" }, "sha256 must be 64 lowercase hex"},
		{"signature empty", func(m jm) { m["signature"] = "" }, "signature must be a non-empty string"},
		{"signature null", func(m jm) { m["signature"] = nil }, "signature must be a non-empty string"},
		{"both formats", func(m jm) { m["lockfileVersion"] = 1 }, `unknown member "lockfileVersion"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseBytes(t, edit(t, base, c.change))
			if cerr.CodeOf(err) != cerr.LockInvalid || !strings.Contains(cerr.Message(err), c.msg) {
				t.Errorf("got %v, want lock_invalid containing %q", err, c.msg)
			}
		})
	}
	for _, doc := range []string{`[]`, `"lock"`, `null`, `{}`, `{"tools":[]}`} {
		if _, err := parseBytes(t, []byte(doc)); cerr.CodeOf(err) != cerr.LockInvalid {
			t.Errorf("%s: got %v, want lock_invalid", doc, err)
		}
	}
}

func TestCrawlcheckAccepts(t *testing.T) {
	base := newLock(t).Bytes()
	for _, c := range []struct {
		name   string
		change func(jm)
	}{
		{"no server url", func(m jm) { m["server"] = jm{} }},
		{"no parts (legacy)", func(m jm) { delete(m, "parts") }},
		{"no descriptions", func(m jm) { delete(m, "descriptions") }},
		{"no sha256", func(m jm) { delete(m, "sha256") }},
		{"tools in any order", func(m jm) {
			ts := m["tools"].([]any)
			ts[0], ts[3] = ts[3], ts[0]
		}},
		{"approved_at with an offset", func(m jm) { m["approved_at"] = "2026-10-07T12:45:00+02:00" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := mustParse(t, edit(t, base, c.change))
			l := f.Crawlcheck
			if !l.ApprovedAt.Equal(approved) || len(l.Tools) != 4 || l.Tools[0].Name != "create_issue" {
				t.Errorf("read %+v", l)
			}
		})
	}
}

func TestDigests(t *testing.T) {
	l := newLock(t)
	l.Seal(func(string) string { return "sig" })
	content, withoutParts := l.Digest(), l.DigestWithoutParts()
	v, _ := canon.Parse(l.Bytes())
	if content != l.SHA256 || content != canon.SHA256Hex(v.Without("sha256", "signature")) {
		t.Error("content digest")
	}
	if withoutParts != canon.SHA256Hex(v.Without("sha256", "signature", "parts")) || withoutParts == content {
		t.Error("digest without parts")
	}
	l.Parts = nil
	l.Seal(nil)
	if wp := l.DigestWithoutParts(); wp != "" {
		t.Error("a lock without parts has a digest without parts")
	}
	if l.Signature != "" {
		t.Error("Seal(nil) kept a signature")
	}
}

func TestCrawlcheckBaseline(t *testing.T) {
	ts := coretest.Hashed(t, toolList)
	l := NewCrawlcheck(server(), approved, ts, nil)
	b := l.Baseline(true)
	if b.Format != FormatCrawlcheck || b.URL != "https://mcp.example.com/mcp" || b.PartsAbsent || len(b.BlindParts) != 0 || b.ToolsSHA256 != tools.ListSHA256(ts) {
		t.Errorf("baseline %+v", b)
	}
	bt, ok := b.Lookup("ping")
	if !ok || bt.Parts == nil || *bt.Parts != ts[2].Parts() || bt.SHA256 != ts[2].SHA256 || bt.Agentgate != nil {
		t.Errorf("ping: %+v", bt)
	}
	if _, ok := b.Lookup("nope"); ok {
		t.Error("Lookup found a tool that is not there")
	}
	for _, nb := range []Baseline{l.Baseline(false), func() Baseline { l2 := *l; l2.Parts = nil; return l2.Baseline(true) }()} {
		if !nb.PartsAbsent || nb.Tools[0].Parts != nil {
			t.Errorf("parts used: %+v", nb)
		}
	}
}

// The agentgate.lock hashes of the spec, computed here from literal strings.
func TestAgentgateHashes(t *testing.T) {
	ag := &Agentgate{GeneratedBy: "crawlcheck-core/1.0.0", GeneratedAt: approved}
	ag.Put(NewAgentgateServer("fs", coretest.Hashed(t, `[
		{"name":"write_file","description":"Write a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}},"annotations":{"destructiveHint":true}},
		{"name":"read_file"}]`)))
	var doc struct {
		LockfileVersion int    `json:"lockfileVersion"`
		GeneratedBy     string `json:"generatedBy"`
		GeneratedAt     string `json:"generatedAt"`
		Servers         map[string]struct {
			SurfaceHash string `json:"surfaceHash"`
			Tools       []struct{ Name, NameHash, DescriptionHash, InputSchemaHash string }
		} `json:"servers"`
	}
	b := ag.Bytes()
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	fs := doc.Servers["fs"]
	if doc.LockfileVersion != 1 || doc.GeneratedAt != "2026-10-07T10:45:00.000Z" || len(fs.Tools) != 2 {
		t.Fatalf("%s", b)
	}
	read, write := fs.Tools[0], fs.Tools[1]
	if read.Name != "read_file" || write.Name != "write_file" {
		t.Fatalf("tools not sorted: %s", b)
	}
	checks := []struct{ got, want, what string }{
		{read.NameHash, sum("read_file"), "read nameHash"},
		{read.DescriptionHash, sum(""), "absent description hashes as \"\""},
		{read.InputSchemaHash, sum("{}"), "absent schema hashes as {}"},
		{write.NameHash, sum("write_file"), "write nameHash"},
		{write.DescriptionHash, sum("Write a file."), "write descriptionHash"},
		{write.InputSchemaHash, sum(`{"properties":{"path":{"type":"string"}},"type":"object"}`), "write inputSchemaHash"},
		{fs.SurfaceHash, sum(`[["` + read.NameHash + `","` + read.DescriptionHash + `","` + read.InputSchemaHash + `"],["` +
			write.NameHash + `","` + write.DescriptionHash + `","` + write.InputSchemaHash + `"]]`), "surfaceHash"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.what, c.got, c.want)
		}
	}
	want := "{\n  \"lockfileVersion\": 1,\n  \"generatedBy\": \"crawlcheck-core/1.0.0\",\n  \"generatedAt\": \"2026-10-07T10:45:00.000Z\",\n  \"servers\": {\n    \"fs\": {\n      \"surfaceHash\": \"" + fs.SurfaceHash + "\",\n      \"tools\": [\n        {\n          \"name\": \"read_file\",\n          \"nameHash\": \"" + read.NameHash + "\","
	if !strings.HasPrefix(string(b), want) {
		t.Errorf("layout:\n%s", b)
	}
}

func TestAgentgateParse(t *testing.T) {
	ag := &Agentgate{GeneratedBy: "agentgate@0.4.1", GeneratedAt: approved}
	ag.Put(NewAgentgateServer("b", coretest.Hashed(t, toolList)))
	ag.Put(NewAgentgateServer("a", coretest.Hashed(t, `[{"name":"x"}]`)))
	b := ag.Bytes()
	f := mustParse(t, b)
	if f.Format() != FormatAgentgate || f.Crawlcheck != nil {
		t.Fatal("format")
	}
	a := f.Agentgate
	if len(a.Servers) != 2 || a.Servers[0].Name != "a" || a.GeneratedBy != "agentgate@0.4.1" {
		t.Errorf("%+v", a)
	}
	// Tools listed out of order are read sorted; the surfaceHash is over the sorted list.
	shuffled := edit(t, b, func(m jm) {
		ts := m["servers"].(jm)["b"].(jm)["tools"].([]any)
		ts[0], ts[3] = ts[3], ts[0]
	})
	if g := mustParse(t, shuffled); !bytes.Equal(g.Agentgate.Bytes(), b) {
		t.Error("a shuffled tool list does not read back to the sorted one")
	}

	// Put replaces a server entry of the same name.
	a.Put(NewAgentgateServer("a", coretest.Hashed(t, `[{"name":"y"}]`)))
	if s, _ := a.Server("a"); len(a.Servers) != 2 || s.Tools[0].Name != "y" {
		t.Errorf("Put did not replace: %+v", a.Servers)
	}
}

func TestAgentgateRefusesBadFields(t *testing.T) {
	ag := &Agentgate{GeneratedBy: "agentgate@0.4.1", GeneratedAt: approved}
	ag.Put(NewAgentgateServer("fs", coretest.Hashed(t, toolList)))
	base := ag.Bytes()
	fs := func(m jm) jm { return m["servers"].(jm)["fs"].(jm) }
	tool0 := func(m jm) jm { return fs(m)["tools"].([]any)[0].(jm) }
	for _, c := range []struct {
		name   string
		change func(jm)
		msg    string
	}{
		{"unknown member", func(m jm) { m["comment"] = "x" }, `unknown member "comment"`},
		{"generatedBy missing", func(m jm) { delete(m, "generatedBy") }, "generatedBy"},
		{"generatedBy a number", func(m jm) { m["generatedBy"] = 1 }, "generatedBy"},
		{"generatedAt missing", func(m jm) { delete(m, "generatedAt") }, "generatedAt"},
		{"generatedAt not a time", func(m jm) { m["generatedAt"] = "yesterday" }, "generatedAt"},
		{"servers missing", func(m jm) { delete(m, "servers") }, "servers must be an object"},
		{"servers an array", func(m jm) { m["servers"] = []any{} }, "servers must be an object"},
		{"server extra member", func(m jm) { fs(m)["url"] = "x" }, "servers.fs must be"},
		{"server without tools", func(m jm) { delete(fs(m), "tools") }, "servers.fs must be"},
		{"surfaceHash not hex", func(m jm) { fs(m)["surfaceHash"] = "9f2c" }, "servers.fs must be"},
		{"surfaceHash wrong", func(m jm) { fs(m)["surfaceHash"] = sum("x") }, "surfaceHash does not match"},
		{"tool extra member", func(m jm) { tool0(m)["annotationsHash"] = sum("x") }, "servers.fs.tools[0]"},
		{"tool empty name", func(m jm) { tool0(m)["name"] = "" }, "servers.fs.tools[0]"},
		{"tool hash not hex", func(m jm) { tool0(m)["descriptionHash"] = "x" }, "servers.fs.tools[0]"},
		{"tool not an object", func(m jm) { fs(m)["tools"].([]any)[0] = "x" }, "servers.fs.tools[0]"},
		{"tool listed twice", func(m jm) { fs(m)["tools"] = append(fs(m)["tools"].([]any), tool0(m)) }, "twice"},
		{"nameHash of another name", func(m jm) { tool0(m)["nameHash"] = sum("other") }, "nameHash is not the SHA-256"},
		{"descriptionHash edited", func(m jm) { tool0(m)["descriptionHash"] = sum("other") }, "surfaceHash does not match"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseBytes(t, edit(t, base, c.change))
			if cerr.CodeOf(err) != cerr.LockInvalid || !strings.Contains(cerr.Message(err), c.msg) {
				t.Errorf("got %v, want lock_invalid containing %q", err, c.msg)
			}
		})
	}
}

func TestAgentgateBaseline(t *testing.T) {
	ag := &Agentgate{GeneratedBy: "x", GeneratedAt: approved}
	ag.Put(NewAgentgateServer("fs", coretest.Hashed(t, toolList)))
	b, err := ag.Baseline("")
	if err != nil {
		t.Fatal(err)
	}
	if b.Format != FormatAgentgate || b.AgentgateName != "fs" || b.URL != "" || b.ToolsSHA256 != "" ||
		strings.Join(b.BlindParts, ",") != "annotations" || !b.ApprovedAt.Equal(approved) || len(b.Tools) != 4 {
		t.Errorf("baseline %+v", b)
	}
	if bt, _ := b.Lookup("ping"); bt.Agentgate == nil || bt.SHA256 != "" || bt.Parts != nil {
		t.Errorf("ping %+v", bt)
	}
	ag.Put(NewAgentgateServer("db", nil))
	if _, err := ag.Baseline(""); cerr.CodeOf(err) != cerr.BadRequest || !strings.Contains(cerr.Message(err), "[db fs]") {
		t.Errorf("two servers, none named: %v", err)
	}
	if _, err := ag.Baseline("nope"); cerr.CodeOf(err) != cerr.BadRequest {
		t.Errorf("unknown server: %v", err)
	}
	if b, err := ag.Baseline("db"); err != nil || len(b.Tools) != 0 || b.AgentgateName != "db" {
		t.Errorf("db: %+v %v", b, err)
	}
}
