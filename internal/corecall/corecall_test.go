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
