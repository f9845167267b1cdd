// Package textsafe is the one rule for showing a string that came from a
// server, a lockfile or a record to a person.
//
// A terminal obeys what it prints: an ANSI sequence in a tool description
// can erase the line that shows the change being approved, a carriage return
// can overwrite a tool's name, a bidirectional control can reorder what is
// read, and zero-width or tag characters can carry text nobody sees. Every
// such character is written visibly instead, so what a person reads is what
// is there. The CLI, the op escape_text (and through it the SDKs and the
// browser page) all use Escape, so every surface shows the same.
//
// The visible form is \u{HEX}: the code point in upper-case hexadecimal,
// at least two digits ("\u{1B}", "\u{0A}", "\u{202E}", "\u{E0041}"). A byte
// that is not part of valid UTF-8 is written \x{HEX} ("\x{FF}"). These two
// are the only escapes, and they can always be told from the text: a
// backslash in the input that is followed by "u{" or "x{" is itself written
// \u{5C}, so reading the output left to right, every "\u{" or "\x{" is an
// escape and every other backslash is a backslash. Nothing else changes:
// ordinary text in any script, spaces and backslashes stay as they are.
//
// The set of escaped code points is a fixed table (not the Unicode tables of
// the Go release that built the module), so every build and every SDK shows
// the same bytes; docs/cli.md lists it.
package textsafe

import (
	"strings"
	"unicode/utf8"
)

// hidden lists the code points written as \u{HEX}, as closed ranges sorted
// by their first code point.
var hidden = [...][2]rune{
	{0x0000, 0x001F},   // C0 controls, tab and newline included
	{0x007F, 0x009F},   // DEL and C1 controls (U+009B is a one-byte CSI)
	{0x00AD, 0x00AD},   // soft hyphen
	{0x034F, 0x034F},   // combining grapheme joiner
	{0x0600, 0x0605},   // Arabic number signs (format characters)
	{0x061C, 0x061C},   // Arabic letter mark (bidi)
	{0x06DD, 0x06DD},   // Arabic end of ayah
	{0x070F, 0x070F},   // Syriac abbreviation mark
	{0x0890, 0x0891},   // Arabic pound and piastre marks above
	{0x08E2, 0x08E2},   // Arabic disputed end of ayah
	{0x115F, 0x1160},   // Hangul fillers (render blank)
	{0x17B4, 0x17B5},   // Khmer inherent vowels (invisible)
	{0x180B, 0x180F},   // Mongolian variation selectors and vowel separator
	{0x200B, 0x200F},   // zero width space, non-joiner, joiner; LRM, RLM
	{0x2028, 0x202E},   // line and paragraph separators; bidi embeddings and overrides
	{0x2060, 0x206F},   // word joiner, invisible operators, bidi isolates, deprecated format
	{0x3164, 0x3164},   // Hangul filler
	{0xFE00, 0xFE0F},   // variation selectors
	{0xFEFF, 0xFEFF},   // zero width no-break space (BOM)
	{0xFFA0, 0xFFA0},   // halfwidth Hangul filler
	{0xFFF9, 0xFFFB},   // interlinear annotation controls
	{0x110BD, 0x110BD}, // Kaithi number sign
	{0x110CD, 0x110CD}, // Kaithi number sign above
	{0x13430, 0x1343F}, // Egyptian hieroglyph format controls
	{0x1BCA0, 0x1BCA3}, // shorthand format controls
	{0x1D173, 0x1D17A}, // musical symbol format controls
	{0xE0000, 0xE007F}, // tag characters
	{0xE0100, 0xE01EF}, // variation selectors supplement
}

// Hidden reports whether Escape writes the code point r as \u{HEX}.
func Hidden(r rune) bool {
	if r >= 0x20 && r < 0x7F {
		return false
	}
	lo, hi := 0, len(hidden)
	for lo < hi {
		m := (lo + hi) / 2
		switch {
		case r < hidden[m][0]:
			hi = m
		case r > hidden[m][1]:
			lo = m + 1
		default:
			return true
		}
	}
	return false
}

// Escape returns s with every hidden code point, every byte that is not
// valid UTF-8, and every backslash that would read as the start of an escape
// written visibly (see the package comment). A string that needs nothing is
// returned as it is, without copying.
func Escape(s string) string {
	i := firstUnsafe(s)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c == '\\' {
			if startsEscape(s[i+1:]) {
				b.WriteString(`\u{5C}`)
			} else {
				b.WriteByte('\\')
			}
			i++
			continue
		}
		if c >= 0x20 && c < 0x7F {
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			writeHex(&b, 'x', uint32(c))
		case Hidden(r):
			writeHex(&b, 'u', uint32(r))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// firstUnsafe returns the index of the first byte Escape would change, or
// len(s) when there is none.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7F {
			if c == '\\' && startsEscape(s[i+1:]) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n <= 1) || Hidden(r) {
			return i
		}
		i += n
	}
	return len(s)
}

// startsEscape reports whether the text after a backslash would make it
// read as an escape.
func startsEscape(rest string) bool {
	return len(rest) >= 2 && (rest[0] == 'u' || rest[0] == 'x') && rest[1] == '{'
}

const hexDigits = "0123456789ABCDEF"

// writeHex writes \u{HEX} or \x{HEX} with at least two upper-case digits.
func writeHex(b *strings.Builder, kind byte, v uint32) {
	var digits [8]byte
	n := 0
	for v > 0 || n < 2 {
		digits[n] = hexDigits[v&0xF]
		v >>= 4
		n++
	}
	b.WriteByte('\\')
	b.WriteByte(kind)
	b.WriteByte('{')
	for n > 0 {
		n--
		b.WriteByte(digits[n])
	}
	b.WriteByte('}')
}
