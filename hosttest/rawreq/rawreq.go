// Package rawreq turns an ABI-1 request into the ABI-2 request a host
// sends (docs/abi.md): each document field that holds a JSON string is
// replaced by {"$raw": i} and its bytes become attachment i. The tests send
// every vector both ways and require the same answer; the benchmarks use it
// to build raw requests.
//
// A document field that holds the document as a JSON value (a lockfile
// object) is moved too, as the exact text of that value: the core parses a
// document given as text into the value it would have read in place.
//
// The rewrite is textual: everything but the moved documents keeps its
// bytes (key order, escapes, number spellings), so the two requests differ
// only where ABI 2 says they may.
package rawreq

import (
	"encoding/binary"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/crawlcheck/verifier/core"
)

// docFields are the request members that hold a document (docs/abi.md).
var docFields = map[string]bool{
	"json": true, "lock": true, "into": true, "policy": true, "old": true, "new": true,
	"record": true, "records": true, "key_directory": true, "receipt": true, "text": true,
}

// valueDocs are the document fields whose value may be a JSON value, read
// by the core as a document either way (req.Obj.Doc).
var valueDocs = map[string]bool{
	"lock": true, "into": true, "policy": true, "old": true, "new": true,
	"record": true, "key_directory": true, "receipt": true,
}

// isDoc reports whether a string at path is a document: a top-level
// document field, or an element of a tool source's pages.
func isDoc(path []string) bool {
	switch len(path) {
	case 1:
		return docFields[path[0]]
	case 2:
		return path[0] == "pages" && path[1] == "[]"
	case 3:
		return path[0] == "observed" && path[1] == "pages" && path[2] == "[]"
	}
	return false
}

// Split returns the ABI-2 form of request: the rewritten request and its
// attachments, framed. A request the core would refuse to parse, or one
// without a document given as a string, comes back unchanged with no
// attachments.
func Split(request []byte) (req, attachments []byte) {
	if !parses(request) {
		return request, nil
	}
	s := &scanner{in: request}
	s.value(nil)
	if len(s.docs) == 0 {
		return request, nil
	}
	return append(s.out, request[s.copied:]...), Frame(s.docs...)
}

// Frame concatenates documents as attachments: each a 4-byte little-endian
// length, then its bytes.
func Frame(docs ...[]byte) []byte {
	n := 0
	for _, d := range docs {
		n += 4 + len(d)
	}
	out := make([]byte, 0, n)
	for _, d := range docs {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(d)))
		out = append(out, d...)
	}
	return out
}

// scanner walks a request the core has already accepted as JSON, so it
// need not check syntax.
type scanner struct {
	in     []byte
	pos    int
	out    []byte // rewritten request up to copied
	copied int    // bytes of in already in out
	docs   [][]byte
	inert  int // > 0 inside a document being moved whole
}

func (s *scanner) space() {
	for s.pos < len(s.in) && (s.in[s.pos] == ' ' || s.in[s.pos] == '\t' || s.in[s.pos] == '\n' || s.in[s.pos] == '\r') {
		s.pos++
	}
}

func (s *scanner) value(path []string) {
	s.space()
	if c := s.in[s.pos]; (c == '{' || c == '[') && s.inert == 0 && len(path) == 1 && valueDocs[path[0]] {
		start := s.pos
		s.inert++ // past it, moving nothing inside
		s.value(nil)
		s.inert--
		s.move(start, s.in[start:s.pos])
		return
	}
	switch s.in[s.pos] {
	case '{':
		s.pos++
		for {
			s.space()
			if s.in[s.pos] == '}' {
				s.pos++
				return
			}
			if s.in[s.pos] == ',' {
				s.pos++
				s.space()
			}
			start := s.pos
			s.str()
			name := unquote(s.in[start:s.pos])
			s.space()
			s.pos++ // ':'
			s.value(append(path[:len(path):len(path)], name))
		}
	case '[':
		s.pos++
		for {
			s.space()
			if s.in[s.pos] == ']' {
				s.pos++
				return
			}
			if s.in[s.pos] == ',' {
				s.pos++
			}
			s.value(append(path[:len(path):len(path)], "[]"))
		}
	case '"':
		start := s.pos
		s.str()
		if s.inert > 0 || !isDoc(path) {
			return
		}
		s.move(start, []byte(unquote(s.in[start:s.pos])))
	default: // number, true, false, null
		for s.pos < len(s.in) && !isDelim(s.in[s.pos]) {
			s.pos++
		}
	}
}

// parses reports whether the core's strict parser reads request, asking
// the core itself (its parser is internal to it): the answer of version,
// an op whose request names no member, is a json_* error or
// input_too_large exactly when the request cannot be parsed.
func parses(request []byte) bool {
	var answer struct {
		Error struct{ Code string }
	}
	if err := json.Unmarshal(core.Call("version", request), &answer); err != nil {
		panic("rawreq: the core's envelope does not decode: " + err.Error())
	}
	c := answer.Error.Code
	return !strings.HasPrefix(c, "json_") && c != "input_too_large"
}

// unquote is the text of a JSON string token from a request the core
// parsed: valid UTF-8, no lone surrogate, so encoding/json's decoding of it
// is exact (it repairs only what the core already refused).
func unquote(token []byte) string {
	var s string
	if err := json.Unmarshal(token, &s); err != nil {
		panic("rawreq: a string the core parsed does not decode: " + err.Error())
	}
	return s
}

// move replaces in[start:pos] by a reference to a new attachment, doc.
func (s *scanner) move(start int, doc []byte) {
	s.out = append(s.out, s.in[s.copied:start]...)
	s.out = append(s.out, `{"$raw":`...)
	s.out = append(s.out, strconv.Itoa(len(s.docs))...)
	s.out = append(s.out, '}')
	s.copied = s.pos
	s.docs = append(s.docs, doc)
}

// str moves past a string token.
func (s *scanner) str() {
	s.pos++ // '"'
	for s.in[s.pos] != '"' {
		if s.in[s.pos] == '\\' {
			s.pos++
		}
		s.pos++
	}
	s.pos++
}

func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}
