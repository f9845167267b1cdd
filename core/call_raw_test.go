package core

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core/internal/canon"
)

// frames is the attachments encoding of docs/abi.md.
func frames(docs ...string) []byte {
	var b []byte
	for _, d := range docs {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(d)))
		b = append(b, d...)
	}
	return b
}

const rawPage = `{"tools":[{"name":"echo","description":"Echo.","inputSchema":{"type":"object"}}]}`

// TestCallRawSameAnswer: a document sent as an attachment gets the answer
// it gets as a JSON string, in every document position.
func TestCallRawSameAnswer(t *testing.T) {
	lock := gjson(t, Call("make_lock", []byte(`{"pages":[`+quote(rawPage)+`],"approved_at":"2026-10-01T00:00:00Z"}`)), "lock")
	for _, c := range []struct {
		op, asString, asRef string
		docs                []string
	}{
		{"canonicalize", `{"json":` + quote(`{"b":1,"a":[2.50]}`) + `}`, `{"json":{"$raw":0}}`, []string{`{"b":1,"a":[2.50]}`}},
		{"hash_tools", `{"pages":[` + quote(rawPage) + `]}`, `{"pages":[{"$raw":0}]}`, []string{rawPage}},
		{"lock_check", `{"lock":` + quote(lock) + `,"pages":[` + quote(rawPage) + `]}`, `{"pages":[{"$raw":1}],"lock":{"$raw":0}}`, []string{lock, rawPage}},
		{"continuity_check", `{"now":"2026-10-07T10:45:00Z","lock":` + quote(lock) + `,"observed":{"pages":[` + quote(rawPage) + `]}}`,
			`{"now":"2026-10-07T10:45:00Z","lock":{"$raw":1},"observed":{"pages":[{"$raw":0}]}}`, []string{rawPage, lock}},
		// The same attachment may serve two fields.
		{"diff", `{"old":` + quote(rawPage) + `,"new":` + quote(rawPage) + `}`, `{"old":{"$raw":0},"new":{"$raw":0}}`, []string{rawPage}},
		// A document that fails to parse fails the same way.
		{"verify_lock", `{"lock":"{\"a\":1,\"a\":2}","now":"2026-10-07T10:45:00Z"}`, `{"lock":{"$raw":0},"now":"2026-10-07T10:45:00Z"}`, []string{`{"a":1,"a":2}`}},
	} {
		want := Call(c.op, []byte(c.asString))
		got := CallRaw(c.op, []byte(c.asRef), frames(c.docs...))
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n  CallRaw %s\n  Call    %s", c.op, got, want)
		}
		var parts [][]byte
		for _, d := range c.docs {
			parts = append(parts, []byte(d))
		}
		if got := CallParts(c.op, []byte(c.asRef), parts); !bytes.Equal(got, want) {
			t.Errorf("%s:\n  CallParts %s\n  Call      %s", c.op, got, want)
		}
	}
}

// TestCallRawRefusals: framing, references and attachments that do not
// add up are bad_request, naming the problem; bytes that are not UTF-8
// are refused as the strict parser refuses them.
func TestCallRawRefusals(t *testing.T) {
	for _, c := range []struct {
		name, op, req string
		att           []byte
		code, msg     string
	}{
		{"truncated length", "canonicalize", `{"json":{"$raw":0}}`, []byte{1, 0}, "bad_request", "attachments: frame 0 has 2 bytes where a 4-byte length belongs"},
		{"frame longer than what follows", "canonicalize", `{"json":{"$raw":0}}`, []byte{9, 0, 0, 0, '1'}, "bad_request", "attachments: frame 0 declares 9 bytes, 1 follow"},
		{"index out of range", "diff", `{"old":{"$raw":0},"new":{"$raw":1}}`, frames(rawPage), "bad_request", "request.new names an attachment the request does not have (it has 1)"},
		{"huge index", "canonicalize", `{"json":{"$raw":99999999999999999999999}}`, nil, "bad_request", "request.json is a reference"},
		{"negative index", "canonicalize", `{"json":{"$raw":-1}}`, nil, "bad_request", "request.json is a reference: {\"$raw\": <attachment index>}, a non-negative integer"},
		{"fractional index", "canonicalize", `{"json":{"$raw":0.5}}`, nil, "bad_request", "non-negative integer"},
		{"string index", "canonicalize", `{"json":{"$raw":"0"}}`, nil, "bad_request", "non-negative integer"},
		{"unreferenced attachment", "canonicalize", `{"json":{"$raw":0}}`, frames("1", "2"), "bad_request", "attachment 1 of 2 is not referenced by any field"},
		{"attachments without a reference", "canonicalize", `{"json":"1"}`, frames("1"), "bad_request", "attachment 0 of 1 is not referenced"},
		{"bad page index", "hash_tools", `{"pages":[{"$raw":3},{"$raw":0}]}`, frames(rawPage), "bad_request", "request.pages[0] names an attachment the request does not have"},
		// Only the request's own members are refused unknown; an attachment
		// named only inside content still counts as named.
		{"named only in content", "hash_tools", `{"tools":[{"name":"a","inputSchema":{"default":{"$raw":0}}}]}`, frames(rawPage), "", ""},
		{"not UTF-8 in a string field", "canonicalize", `{"json":{"$raw":0}}`, frames("\"\xff\""), "json_invalid_utf8", "request.json: attachment is not valid UTF-8"},
		{"not UTF-8 in a document", "verify_record", `{"record":{"$raw":0}}`, frames("{\"a\":\"\xff\"}"), "json_invalid_utf8", "request.record"},
		{"references in signed inputs", "sign_receipt", `{"private_key":"g20VqcUs5xf4OjdOqtiSp3q50rQ9pP6kouSPvusl0j8=","issuer":"i","issued_at":"2026-11-30T11:59:00Z","expires_at":"2026-11-30T12:04:00Z","nonce":"n","subject":"s","inputs":{"lock":{"$raw":0},"pages":[]}}`,
			frames("{}"), "bad_request", "request.inputs is kept as given"},
		{"over the cap together", "canonicalize", `{"json":{"$raw":0}}`, frames(strings.Repeat(" ", MaxRequestBytes)), "input_too_large", "request with its attachments of"},
	} {
		resp := CallRaw(c.op, []byte(c.req), c.att)
		if code := gjson(t, resp, "error.code"); code != c.code || !strings.Contains(gjson(t, resp, "error.message"), c.msg) {
			t.Errorf("%s: %s\n  want %s containing %q", c.name, resp, c.code, c.msg)
		}
		// The same attachments one by one: the same answer, the cap and
		// its message included.
		if parts, ok := unframe(c.att); ok {
			if got := CallParts(c.op, []byte(c.req), parts); !bytes.Equal(got, resp) {
				t.Errorf("%s: CallParts %s\n  CallRaw %s", c.name, got, resp)
			}
		}
	}
}

// unframe splits attachments into their documents; false when they are
// not well framed.
func unframe(b []byte) ([][]byte, bool) {
	var parts [][]byte
	for len(b) > 0 {
		if len(b) < 4 || int(binary.LittleEndian.Uint32(b)) > len(b)-4 {
			return nil, false
		}
		n := int(binary.LittleEndian.Uint32(b))
		parts = append(parts, b[4:4+n])
		b = b[4+n:]
	}
	return parts, true
}

// TestCallRawPageNotUTF8: a page that is not UTF-8 arrives and is the
// server's fault, response_malformed, as the same bytes in base64 are.
func TestCallRawPageNotUTF8(t *testing.T) {
	page := "{\"tools\":[{\"name\":\"\xff\"}]}"
	lock := gjson(t, Call("make_lock", []byte(`{"pages":[`+quote(rawPage)+`],"approved_at":"2026-10-01T00:00:00Z"}`)), "lock")
	req := func(p string) string {
		return `{"now":"2026-10-07T10:45:00Z","lock":` + quote(lock) + `,"observed":{"pages":[` + p + `]}}`
	}
	got := CallRaw("continuity_check", []byte(req(`{"$raw":0}`)), frames(page))
	want := Call("continuity_check", []byte(req(`{"base64":"eyJ0b29scyI6W3sibmFtZSI6Iv8ifV19"}`)))
	if !bytes.Equal(got, want) || !bytes.Contains(got, []byte(`"response_malformed"`)) {
		t.Errorf("CallRaw %s\nbase64  %s", got, want)
	}
}

// TestCallRawContentNotResolved: {"$raw": i} inside content (a server's
// serverInfo) is data, kept as it is, and under ABI 1 a reference is just
// an object.
func TestCallRawContentNotResolved(t *testing.T) {
	lock := gjson(t, Call("make_lock", []byte(`{"pages":[`+quote(rawPage)+`],"approved_at":"2026-10-01T00:00:00Z"}`)), "lock")
	req := `{"now":"2026-10-07T10:45:00Z","lock":{"$raw":0},"observed":{"server_info":{"$raw":0},"pages":[` + quote(rawPage) + `]}}`
	resp := CallRaw("continuity_check", []byte(req), frames(lock))
	if !bytes.Contains(resp, []byte(`"info":{"$raw":0}`)) {
		t.Errorf("serverInfo was not kept as sent: %s", resp)
	}
	if got := Call("canonicalize", []byte(`{"json":{"$raw":0}}`)); !bytes.Contains(got, []byte(`request.json must be a string`)) {
		t.Errorf("ABI 1 with a reference: %s", got)
	}
}

// quote is s as a JSON string.
func quote(s string) string { return canon.Str(s).String() }

// gjson is the string at a dotted path of a JSON response ("" if none).
func gjson(t *testing.T, resp []byte, path string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(resp, &v); err != nil {
		t.Fatalf("%s: %v", resp, err)
	}
	if m, _ := v.(map[string]any); m["ok"] == true {
		v = m["result"]
	}
	for _, k := range strings.Split(path, ".") {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, _ := v.(string)
	return s
}
