package textsafe

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"Get one issue by number.", "Get one issue by number."},
		{"Größe, 価格, цена, قیمت, מחיר, 😀", "Größe, 価格, цена, قیمت, מחיר, 😀"},
		{"a\x00b\tc\nd\re\x1b[2K", `a\u{00}b\u{09}c\u{0A}d\u{0D}e\u{1B}[2K`},
		{"del\x7f", `del\u{7F}`},
		{"c1 \u0085 \u009b31m", `c1 \u{85} \u{9B}31m`},
		{"bidi \u202eevil\u202c \u2066x\u2069", `bidi \u{202E}evil\u{202C} \u{2066}x\u{2069}`},
		{"zw\u200b\u200c\u200d\u2060\ufeff", `zw\u{200B}\u{200C}\u{200D}\u{2060}\u{FEFF}`},
		{"tag\U000E0041\U000E007F", `tag\u{E0041}\u{E007F}`},
		{"vs\ufe0f\U000E0100", `vs\u{FE0F}\u{E0100}`},
		{"bad \xff\xc3", `bad \x{FF}\x{C3}`},
		{`C:\Users\x`, `C:\Users\x`},
		{`a\u{41}`, `a\u{5C}u{41}`},
		{`a\x{41}`, `a\u{5C}x{41}`},
		{"\\\x1b", `\\u{1B}`},
		{`end\`, `end\`},
		{"\u2028\u2029", `\u{2028}\u{2029}`},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestEscapeReturnsSafeInputUncopied: the common case costs no allocation.
func TestEscapeReturnsSafeInputUncopied(t *testing.T) {
	s := strings.Repeat("plain text, ünïcödé ", 10)
	if n := testing.AllocsPerRun(10, func() { _ = Escape(s) }); n != 0 {
		t.Fatalf("Escape of safe text allocated %v times", n)
	}
}

// TestHiddenCoversFormatCharacters: every Unicode control and format
// character (categories Cc and Cf) known to this Go release is in the fixed
// table, so a newer Unicode can only add to it knowingly.
func TestHiddenCoversFormatCharacters(t *testing.T) {
	for _, tab := range []*unicode.RangeTable{unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp} {
		for r := rune(0); r <= unicode.MaxRune; r++ {
			if unicode.Is(tab, r) && !Hidden(r) {
				t.Errorf("U+%04X is a control or format character but not hidden", r)
			}
		}
	}
	for i := 1; i < len(hidden); i++ {
		if hidden[i][0] <= hidden[i-1][1] || hidden[i][0] > hidden[i][1] {
			t.Errorf("hidden[%d] is out of order", i)
		}
	}
}

// unescape reads Escape's output back; it exists to prove the form has one
// reading.
func unescape(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '\\' && startsEscape(s[i+1:]) {
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return "", false
			}
			v, err := strconv.ParseUint(s[i+3:i+end], 16, 32)
			if err != nil {
				return "", false
			}
			if s[i+1] == 'x' {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
			i += end + 1
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String(), true
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "a\x1b[2Kb", `\u{41}`, "\\\x1b", "\xff\\x{", "\u202e\U000E0041", "ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := Escape(s)
		back, ok := unescape(e)
		if !ok || back != s {
			t.Fatalf("Escape(%q) = %q reads back as %q", s, e, back)
		}
		if !utf8.ValidString(e) {
			t.Fatalf("Escape(%q) = %q is not valid UTF-8", s, e)
		}
		for _, r := range e {
			if Hidden(r) {
				t.Fatalf("Escape(%q) = %q still holds U+%04X", s, e, r)
			}
		}
	})
}
