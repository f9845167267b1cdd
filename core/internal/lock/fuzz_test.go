package lock

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/coretest"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

// FuzzLockParse: a document either is refused with a lockfile or JSON code,
// or it is a lockfile that the core writes back in its own layout, and that
// layout reads back to the same bytes. A document that is a tool list the
// core can hash is locked in both formats, and those read back too.
func FuzzLockParse(f *testing.F) {
	ts := coretest.Hashed(f, toolList)
	cc := NewCrawlcheck(server(), approved, ts, nil)
	cc.Seal(nil)
	f.Add(cc.Bytes())
	cc.Seal(func(string) string { return "ed25519:op_0123456789abcdef:AAAA" })
	f.Add(cc.Bytes())
	legacy := NewCrawlcheck(Server{URL: "stdio:x"}, approved, ts[:1], nil)
	legacy.Parts = nil
	legacy.Seal(nil)
	f.Add(legacy.Bytes())
	ag := &Agentgate{GeneratedBy: "agentgate@0.4.1", GeneratedAt: approved}
	ag.Put(NewAgentgateServer("fs", ts))
	ag.Put(NewAgentgateServer("db", nil))
	f.Add(ag.Bytes())
	for _, s := range []string{
		`{"kind":"crawlcheck-mcp-lock","v":1,"server":{},"approved_at":"2026-10-07T10:45:00Z","tools_sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","count":0,"tools":[]}`,
		`{"lockfileVersion":1,"generatedBy":"","generatedAt":"2026-08-03T12:00:00.000Z","servers":{}}`,
		`{"kind":"crawlcheck-mcp-lock","v":1,"v":1}`,
		`{"lockfileVersion":1.0e0,"servers":{"":{"surfaceHash":"","tools":[]}}}`,
		`[]`, `"\ud800"`, "{\"kind\":\"\xff\"}", toolList,
		`[{"name":"\u0000\"\\/","description":"\ud83d\ude00","inputSchema":{"":[{"a":-0.0}]}},{"name":"\ufeff"}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := canon.Parse(data)
		if err != nil {
			return
		}
		if ts, err := tools.Hash(doc); err == nil {
			cc := NewCrawlcheck(Server{URL: "https://x/"}, approved, ts, nil)
			cc.Seal(nil)
			ag := &Agentgate{GeneratedBy: "x", GeneratedAt: approved}
			ag.Put(NewAgentgateServer("s", ts))
			for _, b := range [][]byte{cc.Bytes(), ag.Bytes()} {
				again, err := canon.Parse(b)
				if err != nil {
					t.Fatalf("a written lockfile is not JSON: %v\n%s", err, b)
				}
				f, err := Parse(again)
				if err != nil || !bytes.Equal(fileBytes(f), b) {
					t.Fatalf("a written lockfile does not read back (%v):\n%s", err, b)
				}
			}
		}
		file, err := Parse(doc)
		if err != nil {
			if c := cerr.CodeOf(err); c != cerr.LockInvalid && c != cerr.LockUnsupported {
				t.Fatalf("refused with %s: %v", c, err)
			}
			if !utf8.ValidString(cerr.Message(err)) {
				t.Fatalf("message is not UTF-8: %q", cerr.Message(err))
			}
			return
		}
		if (file.Crawlcheck == nil) == (file.Agentgate == nil) {
			t.Fatal("exactly one format must be set")
		}
		written := fileBytes(file)
		again, err := canon.Parse(written)
		if err != nil {
			t.Fatalf("the written lockfile is not JSON: %v\n%s", err, written)
		}
		file2, err := Parse(again)
		if err != nil {
			t.Fatalf("the written lockfile does not read back: %v\n%s", err, written)
		}
		if rewritten := fileBytes(file2); !bytes.Equal(rewritten, written) {
			t.Fatalf("not stable:\n%s\n%s", written, rewritten)
		}
		if l := file.Crawlcheck; l != nil {
			hs := make([]string, len(l.Tools))
			for i, e := range l.Tools {
				hs[i] = e.SHA256
			}
			if l.ToolsSHA256 != tools.ToolsSHA256(hs) {
				t.Fatal("accepted a tools_sha256 that does not match")
			}
		}
	})
}
