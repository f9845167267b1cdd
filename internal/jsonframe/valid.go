package jsonframe

// The steps below walk a document already known to be valid JSON (the
// caller ran json.Valid, or decoded it): they check nothing and allocate
// nothing, which is what a frame's path wants. The Go preflight reads its
// pages' members with them and the gateway every frame's envelope; a
// document not known to be valid goes through Members, which checks.

// SkipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// SkipValidString returns the index after the string that opens at b[i]
// (len(b) when it is not closed, which valid JSON rules out).
func SkipValidString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// SkipValidValue returns the index after the valid JSON value at b[i]: a
// string, an object or array (nesting counted, strings stepped over), or a
// literal up to the next delimiter.
func SkipValidValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return SkipValidString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = SkipValidString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}
