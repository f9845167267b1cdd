package canon

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestWordAtATime: the eight-bytes-at-a-time scans in the parser's string
// loop and in AppendString find every byte that needs a look, wherever it
// sits in or across a word: one odd byte (every value) at every offset of
// plain runs of every length up to 24, alone and after a second odd byte.
// Parsing must succeed exactly for valid strings and give the bytes back;
// AppendString must write what encoding/json's rules for the same escapes
// give (checked by decoding it again).
func TestWordAtATime(t *testing.T) {
	for n := 0; n <= 24; n++ {
		for at := 0; at < n; at++ {
			for c := 0; c < 256; c++ {
				b := []byte(strings.Repeat("a", n))
				b[at] = byte(c)
				check(t, string(b))
				if at > 0 {
					b[at-1] = 0x7f
					check(t, string(b))
					b[0] = '\\'
					check(t, string(b))
				}
			}
		}
	}
	check(t, strings.Repeat("é", 9)+"\"")
	check(t, strings.Repeat("x", 15)+"\xff")
}

func check(t *testing.T, s string) {
	t.Helper()
	// Parse: the raw bytes between quotes.
	v, err := ParseString(`"` + s + `"`)
	valid := utf8.ValidString(s) && !strings.ContainsAny(s, "\"\\") && !hasControl(s)
	switch {
	case valid && err != nil:
		t.Fatalf("ParseString(%q): %v", s, err)
	case !valid && err == nil && !strings.ContainsAny(s, "\"\\"):
		t.Fatalf("ParseString(%q) accepted it", s)
	}
	if got, _ := v.Str(); valid && got != s {
		t.Fatalf("ParseString(%q) = %q", s, got)
	}
	// AppendString: decodes back to s (when s is valid UTF-8), and
	// escapes exactly '"', '\\' and control characters.
	out := AppendString(nil, s)
	if utf8.ValidString(s) {
		var back string
		if err := json.Unmarshal(out, &back); err != nil || back != s {
			t.Fatalf("AppendString(%q) = %q, which decodes to %q (%v)", s, out, back, err)
		}
	}
	want := len(s) + 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
			want++
		case c < 0x20:
			want += 5
		}
	}
	if len(out) != want {
		t.Fatalf("AppendString(%q) = %q: %d bytes, want %d", s, out, len(out), want)
	}
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 {
			return true
		}
	}
	return false
}

// TestSame: the word-at-a-time comparison is ==.
func TestSame(t *testing.T) {
	base := "0123456789abcdefghijklmnopqrstuvwxyz"
	for n := 0; n <= len(base); n++ {
		a := base[:n]
		if !Same(a, string([]byte(a))) {
			t.Fatalf("%q differs from itself", a)
		}
		for i := 0; i < n; i++ {
			b := []byte(a)
			b[i] ^= 0x40
			if Same(a, string(b)) {
				t.Fatalf("%q equals %q", a, b)
			}
		}
		if n > 0 && Same(a, a[:n-1]) {
			t.Fatalf("%q equals its prefix", a)
		}
	}
}
