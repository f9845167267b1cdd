package tools

import (
	"testing"
	"unicode/utf8"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
)

// FuzzFromPages: whatever two pages a server sends, the walk either fails
// with a coded, UTF-8 error or yields uniquely named tools whose hashes are
// the spec's, and a page that is not strict JSON never yields a list.
func FuzzFromPages(f *testing.F) {
	for _, s := range [][2]string{
		{`{"tools":[{"name":"a","description":"A","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}],"nextCursor":"c"}`, `{"tools":[{"name":"b"}]}`},
		{`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}],"nextCursor":"c"}}`, `{"jsonrpc":"2.0","id":2,"result":{"tools":[],"nextCursor":"c"}}`},
		{`[{"name":"a"},{"name":"a"}]`, ``},
		{`{"tools":[{"name":"a"}],"nextCursor":""}`, `{"tools":[]}`},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope é"}}`, `[]`},
		{`{"tools":[{"name":"\ud83d\ude00","description":null,"annotations":null}]}`, `{"tools":[{"name":"x","inputSchema":null}]}`},
		{`{"tools":[{"name":"a","name":"b"}]}`, "[\"\xff\"]"},
		{`{"tools":[{"name":"a","inputSchema":{"properties":{"n":{"type":"number","maximum":1e400}}}}]}`, `{"tools":[{"name":"a"}]}`},
	} {
		f.Add(s[0], s[1], false)
		f.Add(s[0], s[1], true)
	}
	f.Fuzz(func(t *testing.T, p1, p2 string, capped bool) {
		pages := []string{p1}
		if p2 != "" {
			pages = append(pages, p2)
		}
		obs, err := FromPages(pages, capped)
		if err != nil {
			switch cerr.CodeOf(err) {
			case cerr.ToolsMalformed, cerr.InputTooLarge, cerr.BadRequest:
			default:
				t.Fatalf("error with code %s: %v", cerr.CodeOf(err), err)
			}
			if !utf8.ValidString(cerr.Message(err)) {
				t.Fatalf("error message is not UTF-8: %q", cerr.Message(err))
			}
			return
		}
		for i, raw := range pages[:obs.Pages] {
			if _, err := canon.ParseString(raw); err != nil {
				t.Fatalf("page %d does not parse (%v), yet the walk succeeded", i, err)
			}
		}
		switch obs.Truncated {
		case "", TruncatedUnfollowed, TruncatedRepeated, TruncatedPageCap:
		default:
			t.Fatalf("truncation reason %q", obs.Truncated)
		}
		if capped && obs.Truncated == "" {
			t.Fatal("a capped walk is not truncated")
		}
		if obs.Truncated == "" {
			if _, _, has, _ := ParsePage(pages[len(pages)-1]); has {
				t.Fatal("the last page has a nextCursor, yet the list is complete")
			}
		}
		seen := map[string]bool{}
		for _, tl := range obs.Tools {
			if tl.Name == "" || seen[tl.Name] {
				t.Fatalf("name %q empty or repeated", tl.Name)
			}
			seen[tl.Name] = true
			desc := canon.NullValue()
			if tl.HasDescription {
				desc = canon.Str(tl.Description)
			}
			whole := canon.Obj(
				canon.M("name", canon.Str(tl.Name)),
				canon.M("inputSchema", tl.InputSchema),
				canon.M("description", desc),
				canon.M("annotations", tl.Annotations),
			)
			if got := canon.SHA256Hex(whole); got != tl.SHA256 {
				t.Fatalf("%q: sha256 %s, recomputed %s", tl.Name, tl.SHA256, got)
			}
			if tl.Parts().InputSchema != canon.SHA256Hex(tl.InputSchema) || tl.Parts().Description != canon.SHA256Hex(desc) {
				t.Fatalf("%q: part hashes differ from the parts", tl.Name)
			}
		}
	})
}
