// Package jsonframe splits a JSON object into its top-level members
// without decoding the values: for the issuer's requests and the core's
// answers (100 KB of lockfile and tools the core parses strictly anyway),
// and for make load's client reading a receipt's nonce.
package jsonframe

import (
	"bytes"
	"encoding/json"
)

// Members splits a JSON object into its top-level members, each value as
// the bytes received, without decoding the values: encoding/json's two
// passes over a check's body (validate, then decode) were a tenth of the
// issuer's CPU per check. It is a framing, not a parser of values: it finds
// where each value ends (strings with their escapes, nesting), and refuses
// what is not one object of members — trailing bytes, a repeated name
// (encoding/json would keep the last, and the core would never see the
// first), unbalanced brackets, a small value that is not valid JSON. A
// large value it passes on that is not valid JSON is refused by the core,
// which parses every member it is given.
//
// known are values Members framed before (a lockfile a host sends with
// every check): a value that begins with the bytes of a known string,
// object or array ends where that one ended, found without scanning it
// again, because where such a value ends depends only on its bytes up to
// there.
func Members(body []byte, known ...[]byte) (map[string]json.RawMessage, bool) {
	return members(body, known, nil)
}

// members is Members; seen, when not nil, is called with each value framed
// and the index in known of the known value it was framed as, or -1, and
// answers the bytes to put in the map (the same bytes).
func members(body []byte, known [][]byte, seen func(v []byte, k int) []byte) (map[string]json.RawMessage, bool) {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, false
	}
	q := map[string]json.RawMessage{}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		return q, skipSpace(body, i+1) == len(body)
	}
	for {
		if i >= len(body) || body[i] != '"' {
			return nil, false
		}
		end := stringEnd(body, i)
		if end < 0 {
			return nil, false
		}
		var name string
		if bytes.IndexByte(body[i:end], '\\') < 0 {
			name = string(body[i+1 : end-1])
		} else if json.Unmarshal(body[i:end], &name) != nil {
			return nil, false
		}
		if _, dup := q[name]; dup {
			return nil, false
		}
		i = skipSpace(body, end)
		if i >= len(body) || body[i] != ':' {
			return nil, false
		}
		i = skipSpace(body, i+1)
		vend, k := knownEnd(body, i, known)
		if vend < 0 {
			vend = valueEnd(body, i)
		}
		if vend <= i {
			return nil, false
		}
		// A small value is validated here: the service reads some of those
		// itself (url, subject), and one it cannot read must be refused, not
		// taken for absent. A large one (a lockfile, the tools) the core parses.
		if vend-i <= smallValue && !json.Valid(body[i:vend]) {
			return nil, false
		}
		v := body[i:vend]
		if seen != nil {
			v = seen(v, k)
		}
		q[name] = json.RawMessage(v)
		i = skipSpace(body, vend)
		if i >= len(body) {
			return nil, false
		}
		switch body[i] {
		case ',':
			i = skipSpace(body, i+1)
		case '}':
			return q, skipSpace(body, i+1) == len(body)
		default:
			return nil, false
		}
	}
}

// knownEnd is the index after the value at b[i] and the index in known of
// the known value it is (see Members), or -1.
func knownEnd(b []byte, i int, known [][]byte) (int, int) {
	for n, k := range known {
		if len(k) > 0 && (k[0] == '"' || k[0] == '{' || k[0] == '[') && bytes.HasPrefix(b[i:], k) {
			return i + len(k), n
		}
	}
	return -1, -1
}

// smallValue is the size up to which Members validates a value itself.
const smallValue = 16 << 10

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index after the string starting at b[i] == '"', or -1:
// the next quote not escaped, that is with an even run of backslashes
// before it (found with IndexByte, which is fast where a set of bytes is not).
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
	return -1
}

// valueEnd is the index after the value starting at b[i], or -1: a string,
// an object or array with its nesting balanced (strings inside skipped), or
// a literal up to the next delimiter.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		var stack []byte
		for j := i; j < len(b); {
			switch c := b[j]; c {
			case '"':
				if j = stringEnd(b, j); j < 0 {
					return -1
				}
				continue
			case '{', '[':
				stack = append(stack, c)
			case '}', ']':
				if len(stack) == 0 || (c == '}') != (stack[len(stack)-1] == '{') {
					return -1
				}
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return j + 1
				}
			}
			j++
		}
		return -1
	case '}', ']', ',', ':':
		return -1
	}
	j := i
	for j < len(b) && bytes.IndexByte([]byte(",}] \t\r\n"), b[j]) < 0 {
		j++
	}
	return j
}
