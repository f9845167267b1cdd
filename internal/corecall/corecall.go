// Package corecall calls the core's op table with Go values: it marshals a
// request, runs core.Call and unwraps the envelope (docs/abi.md). It exists so
// that the Go preflight and the CLI hand the core the same bytes the other
// hosts do, and read its answers the same way, without each writing its own
// envelope handling.
package corecall

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/crawlcheck/verifier/core"
)

// Code is one of the core's error codes, the closed list of docs/abi.md.
type Code string

// Error is an error envelope of the core: a request the op refused. Code is
// one of the closed list in docs/abi.md. The Go preflight exports both
// types (preflight.CoreError, preflight.ErrorCode).
type Error struct {
	Op      string
	Code    Code
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s (%s)", e.Op, e.Message, e.Code) }

// Call runs op on req (marshalled with encoding/json) and returns the result
// member verbatim: its bytes are canonical JSON (RFC 8785), exactly as every
// other host receives them.
//
// The documents in req (every Text in its maps and slices) travel as ABI 2
// attachments (core.CallRaw, docs/abi.md), not as JSON strings: a
// json.Marshaler's output is scanned and compacted by encoding/json, and the
// core would unescape the string again, which for a 1,000-tool check was a
// third of the CLI's time (docs/benchmarks.md). The answer is the one the
// same request with strings gets, by the ABI's contract.
func Call(op string, req any) (json.RawMessage, error) {
	// The documents are handed over one by one (core.CallParts), in place:
	// framed in one buffer, the page and lockfile of a 1,000-tool check
	// (2.5 MB, the lockfile twice with verify_lock) were copied each call,
	// 9% of crawlcheck check --tools.
	var att attachments
	body, err := json.Marshal(att.replace(req))
	if err != nil {
		return nil, fmt.Errorf("%s: encoding the request: %w", op, err)
	}
	out := core.CallParts(op, body, att.parts)
	// A success is canonical JSON, so it is {"ok":true,"result":…} in
	// these bytes (RFC 8785 sorts "ok" before "result"): the result is
	// sliced out, where decoding scanned a 1,000-tool check's answer twice
	// (7% of crawlcheck check --server's CPU). Errors are decoded.
	if bytes.HasPrefix(out, okPrefix) && bytes.HasSuffix(out, []byte("}")) {
		return json.RawMessage(out[len(okPrefix) : len(out)-1]), nil
	}
	var env struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(out, &env); err != nil {
		return nil, fmt.Errorf("%s: reading the core's answer: %w", op, err)
	}
	if !env.OK {
		if env.Error == nil {
			return nil, &Error{Op: op, Code: "internal", Message: "an error envelope without an error"}
		}
		return nil, &Error{Op: op, Code: Code(env.Error.Code), Message: env.Error.Message}
	}
	return env.Result, nil
}

// okPrefix begins every success envelope of the core (docs/abi.md).
var okPrefix = []byte(`{"ok":true,"result":`)

// attachments collects a request's documents, the ABI 2 attachments.
type attachments struct {
	parts [][]byte
}

// reference is a request field's {"$raw": i}.
type reference struct {
	Raw int `json:"$raw"`
}

// replace returns v with every Text in its maps and slices ([]any, []Text)
// replaced by a reference to a new attachment holding its bytes. Other values, and
// anything inside a struct, are left as they are (a Text there still
// marshals as a string).
func (a *attachments) replace(v any) any {
	switch v := v.(type) {
	case Text:
		a.parts = append(a.parts, v)
		return reference{len(a.parts) - 1}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = a.replace(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = a.replace(e)
		}
		return out
	case []Text:
		// An array of documents (coreops' []corecall.Text members).
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = a.replace(e)
		}
		return out
	}
	return v
}

// Into runs op and decodes its result into out.
func Into(op string, req, out any) error {
	res, err := Call(op, req)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(res, out); err != nil {
		return fmt.Errorf("%s: decoding the result: %w", op, err)
	}
	return nil
}

// Text is a document's bytes carried into a request as a JSON string
// exactly: encoding/json would replace each invalid UTF-8 byte of a Go
// string with U+FFFD, silently changing a user's file before the core sees
// it. Text escapes only what JSON requires ('"', '\' and control
// characters) and writes every other byte as it is, so valid UTF-8 arrives
// unchanged and invalid UTF-8 reaches the core's strict parser, which
// refuses it (json_invalid_utf8) as every other host's core does.
type Text []byte

// MarshalJSON writes the bytes as a JSON string, losslessly.
func (t Text) MarshalJSON() ([]byte, error) {
	const hex = "0123456789abcdef"
	out := make([]byte, 0, len(t)+2)
	out = append(out, '"')
	for _, c := range t {
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c < 0x20:
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			out = append(out, c)
		}
	}
	return append(out, '"'), nil
}

// Page is a page's bytes in a request, in the form the core's pages take:
// a string when they are valid UTF-8, else {"base64": ...}, so that bytes
// a server sent reach the core as they were and invalid UTF-8 becomes the
// core's observation (response_malformed), not a changed page.
func Page(b []byte) any {
	if utf8.Valid(b) {
		return Text(b)
	}
	return map[string]string{"base64": base64.StdEncoding.EncodeToString(b)}
}
