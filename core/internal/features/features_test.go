package features

import (
	"testing"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
)

// The parts are written in the order a lockfile writes them: canonical.
func TestPartsAreInCanonicalOrder(t *testing.T) {
	for _, k := range append(Kinds, Kind{Name: "ui", Parts: UIParts}) {
		for i := 1; i < len(k.Parts); i++ {
			if canon.CompareKeys(k.Parts[i-1], k.Parts[i]) >= 0 {
				t.Errorf("%s: %q before %q", k.Name, k.Parts[i-1], k.Parts[i])
			}
		}
	}
}

func TestFromPages(t *testing.T) {
	l, err := FromPages(Prompts, []string{`{"prompts":[{"name":"a","x-vendor":1}],"nextCursor":"2"}`, `{"prompts":[{"name":"b","size":3}]}`}, false)
	if err != nil || len(l.Items) != 2 || l.Truncated != "" {
		t.Fatalf("%+v %v", l, err)
	}
	// A vendor member is in unknown; a prompt's size (a resource member the
	// schema names, unpinned) is not.
	if l.Items[0].Parts[MemberUnknown] == l.Items[1].Parts[MemberUnknown] {
		t.Error("unknown does not tell a vendor member from none")
	}
	if got := l.Items[1].Parts[MemberUnknown]; got != canon.SHA256Hex(canon.NullValue()) {
		t.Errorf("size is pinned in unknown: %s", got)
	}
	if l, _ := FromPages(Prompts, []string{`{"prompts":[],"nextCursor":"2"}`}, false); l.Truncated != TruncatedUnfollowed {
		t.Errorf("truncation %q", l.Truncated)
	}
	for _, bad := range []string{
		`{"resources":[]}`,
		`{"prompts":[{"name":""}]}`,
		`{"prompts":[{"name":"a"},{"name":"a"}]}`,
		`{"prompts":[null]}`,
		`{"prompts":[],"nextCursor":""}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`,
		`[]`,
	} {
		if _, err := FromPages(Prompts, []string{bad}, false); cerr.CodeOf(err) != cerr.ToolsMalformed {
			t.Errorf("%s: %v", bad, err)
		}
	}
	if _, err := FromPages(Prompts, nil, false); err == nil {
		t.Error("no page read is not an empty list")
	}
}

func TestReadUITemplate(t *testing.T) {
	a, err := ReadUITemplate(`{"contents":[{"uri":"ui://v","text":"<p>","_meta":{"ui":{"csp":{}}}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ReadUITemplate(`{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"ui://v","text":"<p>","_meta":{"ui":{"domain":"x"}}}]}}`)
	if a[UIContents] != b[UIContents] || a[UIMeta] == b[UIMeta] {
		t.Errorf("contents and _meta are not told apart: %v %v", a, b)
	}
	for _, bad := range []string{`{}`, `{"contents":[1]}`, `{"jsonrpc":"2.0","id":2,"error":{"code":-32002,"message":"Resource not found"}}`, `"x"`} {
		if _, err := ReadUITemplate(bad); cerr.CodeOf(err) != cerr.ToolsMalformed {
			t.Errorf("%s read", bad)
		}
	}
}

// TestReadUITemplateHanded: the result handed to a renderer is the
// contents compared and nothing else of the answer, whose other members no
// part hashes (a "Contents" a case-insensitive decoder would read, the
// result's own _meta).
func TestReadUITemplateHanded(t *testing.T) {
	h, v, err := ReadUITemplateHanded(`{"jsonrpc":"2.0","id":2,"result":{"Contents":[{"text":"<script>"}],"_meta":{"x":1},"contents":[{"uri":"ui://v","text":"<p>","_meta":{"ui":{"domain":"x"}}}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"contents":[{"_meta":{"ui":{"domain":"x"}},"text":"<p>","uri":"ui://v"}]}`
	if got := string(canon.Canonical(v)); got != want {
		t.Fatalf("handed %s, want %s", got, want)
	}
	plain, _ := ReadUITemplate(`{"contents":[{"uri":"ui://v","text":"<p>","_meta":{"ui":{"domain":"x"}}}]}`)
	if h[UIContents] != plain[UIContents] || h[UIMeta] != plain[UIMeta] {
		t.Fatalf("the result's other members changed the hashes: %v, %v", h, plain)
	}
}
