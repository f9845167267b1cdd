// Package cerr is the closed list of error codes the core answers with.
//
// Every error that leaves an op is an *Error carrying one of these codes, so
// that a host in any language can branch on the code and show the message.
// The list is documented in docs/abi.md; adding a code is an ABI change.
package cerr

// Code names a class of error. The set is closed: see docs/abi.md.
type Code string

// The error codes. Keep in step with docs/abi.md.
const (
	UnknownOp            Code = "unknown_op"
	BadRequest           Code = "bad_request"
	InputTooLarge        Code = "input_too_large"
	JSONSyntax           Code = "json_syntax"
	JSONDuplicateKey     Code = "json_duplicate_key"
	JSONInvalidUTF8      Code = "json_invalid_utf8"
	JSONLoneSurrogate    Code = "json_lone_surrogate"
	JSONTooDeep          Code = "json_too_deep"
	JSONNumberOutOfRange Code = "json_number_out_of_range"
	ToolsMalformed       Code = "tools_malformed"
	LockInvalid          Code = "lock_invalid"
	LockUnsupported      Code = "lock_unsupported"
	PolicyInvalid        Code = "policy_invalid"
	KeyInvalid           Code = "key_invalid"
	// IssuerKeysInvalid is a key directory fetched from the issuer that
	// the core cannot read: the issuer's fault, not the deployment's, so a
	// host tells it apart by this code (never by a message's text) and
	// reports it as the issuer's step key_directory.
	IssuerKeysInvalid Code = "issuer_keys_invalid"
	RecordInvalid     Code = "record_invalid"
	Internal          Code = "internal"
	// ForkedProcess is answered by the C library itself, never by an op:
	// the call came from a process forked after the library was loaded,
	// where its Go runtime cannot run (cshared/forkguard.c).
	ForkedProcess Code = "forked_process"
)

// Codes lists every code, in the order docs/abi.md documents them.
var Codes = []Code{UnknownOp, BadRequest, InputTooLarge, JSONSyntax, JSONDuplicateKey,
	JSONInvalidUTF8, JSONLoneSurrogate, JSONTooDeep, JSONNumberOutOfRange, ToolsMalformed,
	LockInvalid, LockUnsupported, PolicyInvalid, KeyInvalid, IssuerKeysInvalid, RecordInvalid, Internal, ForkedProcess}

// Error is a coded error. Msg says what was wrong and where.
type Error struct {
	Code Code
	Msg  string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Msg }

// New makes a coded error with a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: sprintf(format, args...)}
}

// In prefixes the message of err with the place it happened ("lock: ..."),
// keeping its code. A nil err stays nil.
func In(place string, err error) error {
	if err == nil {
		return nil
	}
	if e := as(err); e != nil {
		return &Error{Code: e.Code, Msg: place + ": " + e.Msg}
	}
	return &Error{Code: Internal, Msg: place + ": " + err.Error()}
}

// CodeOf returns the code of err, Internal for an uncoded error.
func CodeOf(err error) Code {
	if e := as(err); e != nil {
		return e.Code
	}
	return Internal
}

// Message returns the message of err without its code.
func Message(err error) string {
	if e := as(err); e != nil {
		return e.Msg
	}
	return err.Error()
}

// as finds the first *Error in err's chain, as errors.As would: through
// Unwrap() error and, depth first, Unwrap() []error. Written out because
// errors.As reaches its target through internal/reflectlite, which is
// otherwise not linked into the wasm module (28 KB of code).
func as(err error) *Error {
	for err != nil {
		switch u := err.(type) {
		case *Error:
			return u
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				if e := as(x); e != nil {
					return e
				}
			}
			return nil
		default:
			return nil
		}
	}
	return nil
}
