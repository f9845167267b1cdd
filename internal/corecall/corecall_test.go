package corecall

import (
	"encoding/json"
	"testing"
)

// TestTextIsLossless: valid UTF-8 reaches the core unchanged, however it
// must be escaped in JSON, and invalid UTF-8 reaches it too, to be refused.
func TestTextIsLossless(t *testing.T) {
	// The document's own bytes hold a raw U+2028, HTML characters, an
	// escaped quote and escaped control characters.
	doc := "{\"a\":\"é \u2028 <&> \\\" \\t\\u0001\"}\n"
	var res struct{ Canonical string }
	if err := Into("canonicalize", map[string]any{"json": Text(doc)}, &res); err != nil {
		t.Fatal(err)
	}
	want := "{\"a\":\"é \u2028 <&> \\\" \\t\\u0001\"}"
	if res.Canonical != want {
		t.Errorf("canonical %q, want %q", res.Canonical, want)
	}
	for _, bad := range []string{"\xff", "\x80", "\xc0\xaf", "\xed\xa0\x80", "\xe2\x82"} {
		_, err := Call("canonicalize", map[string]any{"json": Text(`{"a":"` + bad + `"}`)})
		if e, ok := err.(*Error); !ok || e.Code != "json_invalid_utf8" {
			t.Errorf("%q: %v, want json_invalid_utf8", bad, err)
		}
	}
}

// TestPage: a page of invalid UTF-8 goes as base64, a valid one as text.
func TestPage(t *testing.T) {
	for page, want := range map[string]string{`{"tools":[]}`: `"{\"tools\":[]}"`, "\xff": `{"base64":"/w=="}`} {
		b, _ := json.Marshal(Page([]byte(page)))
		if string(b) != want {
			t.Errorf("Page(%q) = %s, want %s", page, b, want)
		}
	}
}

// TestTextsAreAttachments: the documents of an array of documents ([]Text,
// coreops' type for one) are attachments, as a Text in a map or a []any is.
func TestTextsAreAttachments(t *testing.T) {
	var a attachments
	got, err := json.Marshal(a.replace(map[string]any{"one": Text("x"), "many": []Text{Text("y"), Text("z")}}))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"many":[{"$raw":1},{"$raw":2}],"one":{"$raw":0}}` && string(got) != `{"many":[{"$raw":0},{"$raw":1}],"one":{"$raw":2}}` {
		t.Errorf("request %s", got)
	}
	if len(a.parts) != 3 {
		t.Errorf("%d attachments, want 3", len(a.parts))
	}
}
