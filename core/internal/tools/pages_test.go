package tools

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/crawlcheck/verifier/core/cerr"
)

func names(ts []Tool) string {
	ns := make([]string, len(ts))
	for i, t := range ts {
		ns[i] = t.Name
	}
	return strings.Join(ns, ",")
}

func TestFromPages(t *testing.T) {
	const (
		pA      = `{"tools":[{"name":"a"}],"nextCursor":"c1"}`
		pB      = `{"tools":[{"name":"b"}],"nextCursor":"c2"}`
		pBEnd   = `{"tools":[{"name":"b"}]}`
		pBAgain = `{"tools":[{"name":"b"}],"nextCursor":"c1"}`
	)
	for _, c := range []struct {
		name      string
		pages     []string
		capped    bool
		tools     string
		pagesRead int
		truncated string
	}{
		{"one result page", []string{`{"tools":[{"name":"a"},{"name":"b"}]}`}, false, "a,b", 1, ""},
		{"null nextCursor ends the list", []string{`{"tools":[{"name":"a"}],"nextCursor":null}`}, false, "a", 1, ""},
		{"bare array", []string{`[{"name":"a"}]`}, false, "a", 1, ""},
		{"JSON-RPC response", []string{`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}],"_meta":{}}}`}, false, "a", 1, ""},
		{"JSON-RPC pages with cursors", []string{
			`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}],"nextCursor":"x"}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"b"}]}}`}, false, "a,b", 2, ""},
		{"cursor followed to the end", []string{pA, pBEnd}, false, "a,b", 2, ""},
		{"empty tools", []string{`{"tools":[]}`}, false, "", 1, ""},
		{"nextCursor unfollowed", []string{pA}, false, "a", 1, TruncatedUnfollowed},
		{"nextCursor unfollowed after two pages", []string{pA, pB}, false, "a,b", 2, TruncatedUnfollowed},
		{"repeated cursor: the repeating page is not taken", []string{pA, pBAgain}, false, "a", 2, TruncatedRepeated},
		{"page cap reached", []string{pA, pB}, true, "a,b", 2, TruncatedPageCap},
		{"page cap reached on a last page", []string{pBEnd}, true, "b", 1, TruncatedPageCap},
		{"repeated cursor wins over the cap", []string{pA, pBAgain}, true, "a", 2, TruncatedRepeated},
	} {
		t.Run(c.name, func(t *testing.T) {
			obs, err := FromPages(c.pages, c.capped)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(obs.Tools); got != c.tools || obs.Pages != c.pagesRead || obs.Truncated != c.truncated {
				t.Errorf("got tools %q pages %d truncated %q, want %q %d %q", got, obs.Pages, obs.Truncated, c.tools, c.pagesRead, c.truncated)
			}
		})
	}
}

func TestFromPagesRefuses(t *testing.T) {
	many := make([]string, MaxPages+1)
	for i := range many {
		many[i] = `{"tools":[],"nextCursor":"` + strconv.Itoa(i) + `"}`
	}
	for _, c := range []struct {
		name  string
		pages []string
		code  cerr.Code
		msg   string
	}{
		{"no pages: nothing was read", nil, cerr.ToolsMalformed, "no tools/list page was read"},
		{"empty-string cursor", []string{`{"tools":[{"name":"a"}],"nextCursor":""}`}, cerr.ToolsMalformed, "nextCursor is an empty string"},
		{"non-string cursor", []string{`{"tools":[],"nextCursor":1}`}, cerr.ToolsMalformed, "nextCursor is a number"},
		{"JSON-RPC error", []string{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`}, cerr.ToolsMalformed, "JSON-RPC error: {\"code\":-32601"},
		{"JSON-RPC without result", []string{`{"jsonrpc":"2.0","id":1}`}, cerr.ToolsMalformed, "without a result object"},
		{"JSON-RPC result not an object", []string{`{"jsonrpc":"2.0","id":1,"result":[]}`}, cerr.ToolsMalformed, "without a result object"},
		{"no tools member", []string{`{"nextCursor":"x"}`}, cerr.ToolsMalformed, `without "tools"`},
		{"tools not an array", []string{`{"tools":{}}`}, cerr.ToolsMalformed, `"tools" is an object`},
		{"page is a string", []string{`"tools"`}, cerr.ToolsMalformed, "a page is a string"},
		{"page is not JSON", []string{`{"tools":[`}, cerr.ToolsMalformed, "(json_syntax)"},
		{"duplicate key", []string{`{"tools":[{"name":"a","name":"b"}]}`}, cerr.ToolsMalformed, "(json_duplicate_key)"},
		{"invalid UTF-8", []string{"{\"tools\":[{\"name\":\"\xff\"}]}"}, cerr.ToolsMalformed, "(json_invalid_utf8)"},
		{"lone surrogate", []string{`{"tools":[{"name":"\ud800"}]}`}, cerr.ToolsMalformed, "(json_lone_surrogate)"},
		{"too deep", []string{strings.Repeat("[", 200) + strings.Repeat("]", 200)}, cerr.ToolsMalformed, "(json_too_deep)"},
		{"second page malformed", []string{`{"tools":[],"nextCursor":"x"}`, `{"tools":[null]}`}, cerr.ToolsMalformed, "tools[0]: is null"},
		{"second page unparsable names the page", []string{`{"tools":[],"nextCursor":"x"}`, `nope`}, cerr.ToolsMalformed, "page 2: "},
		{"duplicate names across pages", []string{`{"tools":[{"name":"a"}],"nextCursor":"x"}`, `{"tools":[{"name":"a"}]}`}, cerr.ToolsMalformed, `both named "a"`},
		{"malformed tool on a page", []string{`{"tools":[{"name":"a","description":7}]}`}, cerr.ToolsMalformed, "description is a number"},
		{"pages after the last", []string{`{"tools":[]}`, `{"tools":[]}`}, cerr.ToolsMalformed, "no nextCursor, yet 1 more pages follow"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := FromPages(c.pages, false)
			if cerr.CodeOf(err) != c.code || !strings.Contains(cerr.Message(err), c.msg) {
				t.Errorf("got %v, want %s containing %q", err, c.code, c.msg)
			}
		})
	}
}

// TestFromPagesBeyondTheCap: more pages than a check compares are not an
// error (it was bad_request, and the host had no record): the first
// MaxPages are read and the list is truncated at the page cap.
func TestFromPagesBeyondTheCap(t *testing.T) {
	many := make([]string, MaxPages+1)
	for i := range many {
		many[i] = `{"tools":[{"name":"t` + strconv.Itoa(i) + `"}],"nextCursor":"` + strconv.Itoa(i) + `"}`
	}
	obs, err := FromPages(many, false)
	if err != nil || obs.Truncated != TruncatedPageCap || obs.Pages != MaxPages || len(obs.Tools) != MaxPages {
		t.Fatalf("got %+v (%d tools), %v; want %d pages, truncated at the page cap", obs.Truncated, len(obs.Tools), err, MaxPages)
	}
}

// A JSON-RPC error's text is clipped into the message; the clip must never
// cut a character in half, or the message (and the record or answer that
// carries it) would not be UTF-8.
func TestJSONRPCErrorMessageStaysUTF8(t *testing.T) {
	for n := 0; n < 8; n++ {
		page := `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"` + strings.Repeat("x", n) + strings.Repeat("é€😀", 80) + `"}}`
		_, _, _, err := ParsePage(page)
		if cerr.CodeOf(err) != cerr.ToolsMalformed {
			t.Fatalf("got %v", err)
		}
		if msg := cerr.Message(err); !utf8.ValidString(msg) {
			t.Errorf("prefix %d: message is not UTF-8: %q", n, msg)
		}
	}
}
