package service

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/crawlcheck/verifier/core"
)

// inputError is a request the service refuses before the core or the store
// sees it (400 with its code): what the core would refuse anyway, found
// before the service's own parsing of the request could fail on it in a
// worse way (a panic, a store's refusal quoted as a 503).
type inputError struct{ code, detail string }

func (e *inputError) Error() string { return e.code + ": " + e.detail }

// checkBody refuses a request body that is not UTF-8 (RFC 8259: JSON
// exchanged between systems is; a decoder would silently put U+FFFD in its
// place, and the store would keep another text than the one sent) or that
// nests arrays and objects deeper than the core parses (core.MaxDepth):
// encoding/json's own limit is 10,000, and past it the re-encoding of a
// member was a panic answered as 500 (issue 37, F14). The depth is counted
// in one pass over the bytes, strings skipped; the body's well-formedness
// is judged afterwards by whoever parses it.
func checkBody(body []byte) *inputError {
	if !utf8.Valid(body) {
		return &inputError{"json_invalid_utf8", "the request body is not UTF-8"}
	}
	depth, inString, escaped := 0, false, false
	for _, c := range body {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > core.MaxDepth {
				return &inputError{"json_too_deep", fmt.Sprintf("the request nests arrays and objects deeper than %d", core.MaxDepth)}
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return nil
}

// storable refuses a string the store would keep as text (a document's
// subject: an endpoint) when it holds a NUL: PostgreSQL's text refuses it
// (SQLSTATE 22021, which was a 503 quoting the store), SQLite keeps it, so
// the two stores would disagree about one request (issue 37, F13). Strings
// reach here decoded from a body checkBody found UTF-8, so NUL is the one
// character left that a text column cannot hold.
func storable(what, s string) *inputError {
	if strings.IndexByte(s, 0) >= 0 {
		return &inputError{"bad_request", what + " holds a NUL character"}
	}
	if !utf8.ValidString(s) {
		return &inputError{"json_invalid_utf8", what + " is not UTF-8"}
	}
	return nil
}
