package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"

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
func parseEnvelope(line []byte) (envelope, error) {
	var env envelope
	if !utf8.Valid(line) || !json.Valid(line) {
		return env, errNotMessage
	}
	m, err := preflight.MembersOfValid(bytes.TrimSpace(line))
	if err != nil {
		return env, errNotMessage
	}
	if v := m["method"]; v != nil {
		if json.Unmarshal(v, &env.method) != nil || env.method == "" {
			return env, errNotMessage
		}
	}
	env.id, env.params, env.result, env.err = m["id"], m["params"], m["result"], m["error"]
	if env.method == "" && !hasID(env.id) && env.result == nil && env.err == nil {
		return env, errNotMessage
	}
	return env, nil
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
