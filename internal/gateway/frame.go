package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/crawlcheck/verifier/internal/jsonframe"
	"github.com/crawlcheck/verifier/internal/preflight"
)

// envelope is what the gateway reads of a JSON-RPC message: the members
// that route it, each exactly as it arrived. The rest of the frame is never
// parsed, and the frame is passed on as the bytes that came.
type envelope struct {
	method string          // "" for a response
	id     json.RawMessage // nil for a notification
	params json.RawMessage
	result json.RawMessage
	err    json.RawMessage
}

func (e envelope) request() bool      { return e.method != "" && hasID(e.id) }
func (e envelope) notification() bool { return e.method != "" && !hasID(e.id) }
func (e envelope) response() bool {
	return e.method == "" && hasID(e.id) && (e.result != nil || e.err != nil)
}

// hasID reports whether a message's id member is present and not null.
func hasID(id json.RawMessage) bool { return len(id) > 0 && !bytes.Equal(id, []byte("null")) }

// errNotMessage: a line that is not one JSON-RPC message.
var errNotMessage = errors.New("not a JSON-RPC message")

// parseEnvelope reads a line as one JSON-RPC message, strictly: valid
// UTF-8 and JSON, an object, no member named twice (a member name is
// compared as decoded, so "met\u0068od" is "method"), and a string method
// when there is one. Anything a lenient peer might read as something else
// (the second of two "method" members, a case variant a decoder folds) is
// refused here, so that what the gateway routes and judges is what the
// other side reads. Member names are matched exactly: "Method" is not
// "method".
//
// It is on every frame's path both ways, so after the UTF-8 scan the line
// is checked and split in one walk of its top-level members (topMembers,
// with jsonframe's checking steps), with no map and no reflection:
// docs/gateway.md, Speed.
func parseEnvelope(line []byte) (envelope, error) {
	var env envelope
	if !utf8.Valid(line) {
		return env, errNotMessage
	}
	var arr [8]member
	ms, ok := topMembers(line, arr[:0])
	if !ok {
		return env, errNotMessage
	}
	for _, m := range ms {
		switch string(m.key) {
		case "method":
			s, ok := jsonString(m.val)
			if !ok || s == "" {
				return env, errNotMessage
			}
			env.method = s
		case "id":
			env.id = m.val
		case "params":
			env.params = m.val
		case "result":
			env.result = m.val
		case "error":
			env.err = m.val
		}
	}
	if env.method == "" && !hasID(env.id) && env.result == nil && env.err == nil {
		return env, errNotMessage
	}
	return env, nil
}

// member is one member of a JSON object: its name as decoded and its
// value's bytes as they lie in the object.
type member struct{ key, val []byte }

// topMembers checks that obj is one JSON object (white space around it
// allowed) and splits it into its members, appended to dst (a caller's
// array: no allocation for a message's few members), refusing invalid JSON
// (json.Valid's grammar: jsonframe.SkipValue) and an object that names a
// member twice. A name with an escape is decoded; any other is its bytes.
// Names are compared pairwise up to 16 members and through a map past
// that, so a line of many members costs linear time.
func topMembers(obj []byte, dst []member) ([]member, bool) {
	i := jsonframe.SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return dst, false
	}
	if i = jsonframe.SkipSpace(obj, i+1); i < len(obj) && obj[i] == '}' {
		return dst, jsonframe.SkipSpace(obj, i+1) == len(obj)
	}
	var seen map[string]struct{}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return dst, false
		}
		end := jsonframe.SkipString(obj, i)
		if end < 0 {
			return dst, false
		}
		key := obj[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var k string
			if json.Unmarshal(obj[i:end], &k) != nil {
				return dst, false
			}
			key = []byte(k)
		}
		if i = jsonframe.SkipSpace(obj, end); i >= len(obj) || obj[i] != ':' {
			return dst, false
		}
		i = jsonframe.SkipSpace(obj, i+1)
		vend := jsonframe.SkipValue(obj, i, 1)
		if vend < 0 {
			return dst, false
		}
		switch {
		case seen != nil:
			if _, dup := seen[string(key)]; dup {
				return dst, false
			}
			seen[string(key)] = struct{}{}
		case len(dst) < 16:
			for _, m := range dst {
				if bytes.Equal(m.key, key) {
					return dst, false
				}
			}
		default:
			seen = make(map[string]struct{}, 2*len(dst))
			for _, m := range dst {
				seen[string(m.key)] = struct{}{}
			}
			if _, dup := seen[string(key)]; dup {
				return dst, false
			}
			seen[string(key)] = struct{}{}
		}
		dst = append(dst, member{key, obj[i:vend]})
		if i = jsonframe.SkipSpace(obj, vend); i >= len(obj) {
			return dst, false
		}
		switch obj[i] {
		case ',':
			i = jsonframe.SkipSpace(obj, i+1)
		case '}':
			return dst, jsonframe.SkipSpace(obj, i+1) == len(obj)
		default:
			return dst, false
		}
	}
}

// jsonString is the text of a JSON string value (one that came in a valid
// frame): its bytes when it has no escape, else decoded.
func jsonString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), true
	}
	var s string
	return s, json.Unmarshal(v, &s) == nil
}

// strictMembers returns an object's members, refusing one named twice
// (and anything that is not a valid JSON object).
func strictMembers(obj json.RawMessage) (map[string]json.RawMessage, bool) {
	if !json.Valid(obj) {
		return nil, false
	}
	m, err := preflight.MembersOfValid(bytes.TrimSpace(obj))
	return m, err == nil
}

// lineReader reads newline-delimited frames of at most max bytes. A longer
// line is read to its end and discarded (too long): the stream goes on at
// the next line, and nothing past the cap is held in memory.
type lineReader struct {
	r   *bufio.Reader
	max int
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its newline (and a trailing \r);
// tooLong when it was longer than max (line is then nil). At the end of
// the stream a last line without a newline is returned before io.EOF.
func (l *lineReader) next() (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := l.r.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > l.max+2 { // the newline and a \r are not the frame's
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && tooLong:
			return nil, true, nil
		case err == io.EOF && len(buf) > 0:
			if line = trimEOL(buf); len(line) > l.max {
				return nil, true, nil
			}
			return line, false, nil
		case err != nil:
			return nil, false, err
		}
		if tooLong {
			return nil, true, nil
		}
		line = trimEOL(buf)
		if len(line) > l.max {
			return nil, true, nil
		}
		return line, false, nil
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}
