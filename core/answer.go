package core

import (
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/req"
)

// Answer is an op's result for a native Go host, read member by member:
// no envelope written and parsed again, and no reading of its bytes by
// their layout. A member's JSON is its canonical bytes, the very bytes the
// envelope of Call carries for it (docs/abi.md).
type Answer struct{ v canon.Value }

// JSON answers the canonical JSON of the result's member name.
func (a Answer) JSON(name string) ([]byte, bool) {
	m, ok := a.v.Get(name)
	if !ok {
		return nil, false
	}
	// Sized as envelope sizes its buffer (canon.Size leaves out strings'
	// escapes): a 116 KB receipt written without it grew its buffer by
	// doubling, copying it over and again.
	const escapeRoom = 512
	return canon.AppendCanonical(make([]byte, 0, canon.Size(m)+escapeRoom), m), true
}

// Str answers the result's member name when it is a string.
func (a Answer) Str(name string) (string, bool) {
	m, ok := a.v.Get(name)
	if !ok {
		return "", false
	}
	return m.Str()
}

// Error is an op's refusal: its code (the closed list of docs/abi.md) and
// message, as Call's error envelope words them.
type Error struct{ Code, Message string }

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// CallAnswer is Call for a native Go host: the result, or the refusal as an
// *Error, for the same request.
func CallAnswer(op string, request []byte) (Answer, error) {
	return callAnswer(op, request, func() (req.Obj, error) { return req.Parse(request) })
}

// CallAnswer is Keyring.Call as CallAnswer answers.
func (k *Keyring) CallAnswer(op string, request []byte) (Answer, error) {
	return callAnswer(op, request, func() (req.Obj, error) {
		o, err := req.Parse(request)
		o.Keys = k.key
		return o, err
	})
}

// callAnswer runs op as call does, answering the result or the error its
// envelope would carry.
func callAnswer(op string, request []byte, parse func() (req.Obj, error)) (a Answer, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = answerError(cerr.New(cerr.Internal, "panic in op %q: %v", op, r))
		}
	}()
	fn, ok := ops[op]
	switch {
	case !ok:
		return a, answerError(cerr.New(cerr.UnknownOp, "unknown op %s", clip(op)))
	case uint64(len(request)) > MaxRequestBytes:
		return a, answerError(cerr.New(cerr.InputTooLarge, "request of %d bytes exceeds the limit of %d", len(request), MaxRequestBytes))
	}
	r, err := parse()
	if err != nil {
		return a, answerError(err)
	}
	v, err := run(op, fn, r)
	if err != nil {
		return a, answerError(err)
	}
	return Answer{v}, nil
}

func answerError(err error) *Error {
	return &Error{Code: string(cerr.CodeOf(err)), Message: cerr.Message(err)}
}
