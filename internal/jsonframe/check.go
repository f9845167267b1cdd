package jsonframe

// The steps below walk a document not known to be valid and check it as
// they go, with encoding/json's grammar (json.Valid's: RFC 8259, nesting at
// most maxDepth deep, any byte from 0x80 up inside a string; UTF-8 is the
// caller's to check, as it is json.Valid's). They allocate nothing. A frame's
// path (the gateway's envelope of every message both ways) checks and splits
// a line in one walk with them, where json.Valid's scanner, one indirect
// call per byte, was most of a frame's parse: 3.0 of 3.8 ms for a 1,000-tool
// page, 105 against some 600 MB/s (docs/gateway.md, Speed).

// maxDepth is encoding/json's maxNestingDepth: a document nested deeper is
// not valid to json.Valid.
const maxDepth = 10000

// SkipValue returns the index after the JSON value that begins at b[i]
// (white space before it is not skipped), or -1 when no valid value begins
// there. depth is the nesting the value lies in (0 for a document's top).
func SkipValue(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		return SkipString(b, i)
	case c == '{':
		if depth >= maxDepth {
			return -1
		}
		i = SkipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return -1
			}
			if i = SkipString(b, i); i < 0 {
				return -1
			}
			if i = SkipSpace(b, i); i >= len(b) || b[i] != ':' {
				return -1
			}
			if i = SkipValue(b, SkipSpace(b, i+1), depth+1); i < 0 {
				return -1
			}
			if i = SkipSpace(b, i); i >= len(b) {
				return -1
			}
			switch b[i] {
			case ',':
				i = SkipSpace(b, i+1)
			case '}':
				return i + 1
			default:
				return -1
			}
		}
	case c == '[':
		if depth >= maxDepth {
			return -1
		}
		i = SkipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1
		}
		for {
			if i = SkipValue(b, i, depth+1); i < 0 {
				return -1
			}
			if i = SkipSpace(b, i); i >= len(b) {
				return -1
			}
			switch b[i] {
			case ',':
				i = SkipSpace(b, i+1)
			case ']':
				return i + 1
			default:
				return -1
			}
		}
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return number(b, i)
	}
	return -1
}

// SkipString returns the index after the JSON string that opens at b[i]
// (a '"'), or -1 when it is not a valid one: unclosed, a control byte in
// it, or an escape JSON does not have.
func SkipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		if !stringStop[b[i]] {
			continue // most of a string: one table lookup a byte
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			if i++; i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return -1
				}
				for _, h := range b[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

// stringStop marks the bytes a string's walk must look at: its end, an
// escape, and the control bytes JSON refuses in it.
var stringStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func literal(b []byte, i int, word string) int {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}

// number steps over -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func number(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if j := digits(b, i); j > i {
			i = j
		} else {
			return -1
		}
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// Valid reports whether b is one valid JSON value with only white space
// around it: json.Valid, in one walk that allocates nothing.
func Valid(b []byte) bool {
	i := SkipValue(b, SkipSpace(b, 0), 0)
	return i >= 0 && SkipSpace(b, i) == len(b)
}
