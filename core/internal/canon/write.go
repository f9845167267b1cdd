package canon

import (
	"cmp"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/crawlcheck/verifier/core/digest"
)

// CompareKeys orders strings by their UTF-16 code units, the order RFC 8785
// sorts object members in (and the order of a JavaScript sort). It differs
// from byte order only between characters above U+FFFF and those in
// U+E000..U+FFFF. It is also the order the core sorts tool names in.
func CompareKeys(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return cmp.Compare(len(a), len(b))
	}
	if a[i] < utf8.RuneSelf || b[i] < utf8.RuneSelf {
		return cmp.Compare(a[i], b[i])
	}
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	return cmp.Compare(utf16Key(ra), utf16Key(rb))
}

// utf16Key maps a rune to its UTF-16 code units packed high-first.
func utf16Key(r rune) uint32 {
	if r < 0x10000 {
		return uint32(r) << 16
	}
	r -= 0x10000
	return (0xD800+uint32(r)>>10)<<16 | (0xDC00 + uint32(r)&0x3FF)
}

// Canonical returns the RFC 8785 bytes of v.
func Canonical(v Value) []byte { return AppendCanonical(nil, v) }

// scratch holds serialization buffers between hashes: a lockfile's
// canonical form is hashed on every check and need not be reallocated.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

// SHA256Hex is the lowercase hex SHA-256 of the canonical bytes of v.
func SHA256Hex(v Value) string {
	buf := scratch.Get().(*[]byte)
	*buf = AppendCanonical(slices.Grow((*buf)[:0], Size(v)), v)
	sum := digest.Sum256(*buf)
	scratch.Put(buf)
	return digest.Encode(sum[:])
}

// Size is the length of v's canonical bytes, but for the escapes its
// strings need: what a buffer is sized to before a large value is written
// into it. Grown by append instead (a quarter at a time), a 1.2 MB
// lockfile's digest allocated and copied five times its size, and in a
// fresh process every new page is a fault: most of crawlcheck check's
// digest of its lockfile (issue 23). The walk touches no string's bytes.
func Size(v Value) int {
	switch v.kind {
	case Null:
		return len("null")
	case Bool:
		return len("false")
	case Number:
		return len(v.s)
	case String:
		return len(v.s) + 2
	}
	if v.n != 0 {
		return int(v.n) // its text, copied as it is
	}
	n := 1 // the bracket, or the brace, that closes it; each item adds its opening or comma
	if v.kind == Array {
		for _, e := range v.arr() {
			n += 1 + Size(e)
		}
		return max(n, 2)
	}
	for _, m := range v.obj() {
		n += 1 + len(m.Key) + 3 + Size(m.Value)
	}
	return max(n, 2)
}

// AppendCanonical appends the RFC 8785 bytes of v to dst.
func AppendCanonical(dst []byte, v Value) []byte {
	switch v.kind {
	case Null:
		return append(dst, "null"...)
	case Bool:
		if v.n != 0 {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case Number:
		return append(dst, v.s...)
	case String:
		return AppendString(dst, v.s)
	case Array:
		if v.n != 0 {
			return append(dst, rawText(v)...)
		}
		elems := v.arr()
		// Each element takes a byte and a comma at least: growing to that
		// once spares a long array of small values the chain of ever larger
		// copies append would make, most of a hash's memory.
		dst = slices.Grow(dst, 2*len(elems)+1)
		dst = append(dst, '[')
		for i, e := range elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendCanonical(dst, e)
		}
		return append(dst, ']')
	}
	if v.n != 0 {
		return append(dst, rawText(v)...)
	}
	members := v.obj()
	if !membersSorted(members) {
		members = slices.Clone(members)
		slices.SortFunc(members, func(a, b Member) int { return CompareKeys(a.Key, b.Key) })
	}
	dst = slices.Grow(dst, 5*len(members)+1) // `"":0,` at least, as for arrays
	dst = append(dst, '{')
	for i := range members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, members[i].Key)
		dst = append(dst, ':')
		dst = AppendCanonical(dst, members[i].Value)
	}
	return append(dst, '}')
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as an RFC 8785 string: only '"', '\\' and control
// characters are escaped (the short forms where JSON has them, else \u00xx
// in lowercase hex); everything else is written as UTF-8.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		// Eight bytes at a time while none needs an escape (see plainWord;
		// bytes from 0x80 up need none here).
		for i+8 <= len(s) {
			x := load8(s, i)
			if hasLess(x, 0x20) || hasByte(x, '"') || hasByte(x, '\\') {
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Indent returns v as indented JSON (two spaces, members in their stored
// order, strings and numbers as in the canonical form) with a trailing
// newline: the layout of every file the core writes.
func Indent(v Value) []byte {
	return append(appendIndent(nil, v, 0), '\n')
}

func appendIndent(dst []byte, v Value, depth int) []byte {
	switch v.kind {
	case Array:
		elems := v.arr()
		if len(elems) == 0 {
			return append(dst, "[]"...)
		}
		dst = append(dst, '[')
		for i, e := range elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = newline(dst, depth+1)
			dst = appendIndent(dst, e, depth+1)
		}
		return append(newline(dst, depth), ']')
	case Object:
		members := v.obj()
		if len(members) == 0 {
			return append(dst, "{}"...)
		}
		dst = append(dst, '{')
		for i, m := range members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = newline(dst, depth+1)
			dst = AppendString(dst, m.Key)
			dst = append(dst, ':', ' ')
			dst = appendIndent(dst, m.Value, depth+1)
		}
		return append(newline(dst, depth), '}')
	}
	return AppendCanonical(dst, v)
}

func newline(dst []byte, depth int) []byte {
	dst = append(dst, '\n')
	for range depth {
		dst = append(dst, ' ', ' ')
	}
	return dst
}
