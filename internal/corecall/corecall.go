// Package corecall calls the core's op table with Go values: it marshals a
// request, runs core.Call and unwraps the envelope (docs/abi.md). It exists so
// that the Go preflight and the CLI hand the core the same bytes the other
// hosts do, and read its answers the same way, without each writing its own
// envelope handling.
package corecall

import (
	"encoding/json"
	"fmt"

	"github.com/crawlcheck/verifier/core"
)

// Error is an error envelope of the core: a request the op refused. Code is
// one of the closed list in docs/abi.md.
type Error struct {
	Op      string
	Code    string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s (%s)", e.Op, e.Message, e.Code) }

// Call runs op on req (marshalled with encoding/json) and returns the result
// member verbatim: its bytes are canonical JSON (RFC 8785), exactly as every
// other host receives them.
func Call(op string, req any) (json.RawMessage, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding the request: %w", op, err)
	}
	var env struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(core.Call(op, body), &env); err != nil {
		return nil, fmt.Errorf("%s: reading the core's answer: %w", op, err)
	}
	if !env.OK {
		if env.Error == nil {
			return nil, &Error{Op: op, Code: "internal", Message: "an error envelope without an error"}
		}
		return nil, &Error{Op: op, Code: env.Error.Code, Message: env.Error.Message}
	}
	return env.Result, nil
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
