package preflight

import "github.com/crawlcheck/verifier/internal/corecall"

// CoreError is the core's refusal of a request (an error envelope): which
// op refused, its code and the message naming what was wrong. Every error
// the core answers is one; branch on it with errors.As:
//
//	var ce *preflight.CoreError
//	if errors.As(err, &ce) && ce.Code == preflight.ErrLockUnsupported { ... }
type CoreError = corecall.Error

// ErrorCode is one of the core's error codes (docs/abi.md, Error codes):
// a closed list, the same in every language binding.
type ErrorCode = corecall.Code

// The core's error codes.
const (
	ErrUnknownOp            ErrorCode = "unknown_op"
	ErrBadRequest           ErrorCode = "bad_request"
	ErrInputTooLarge        ErrorCode = "input_too_large"
	ErrJSONSyntax           ErrorCode = "json_syntax"
	ErrJSONDuplicateKey     ErrorCode = "json_duplicate_key"
	ErrJSONInvalidUTF8      ErrorCode = "json_invalid_utf8"
	ErrJSONLoneSurrogate    ErrorCode = "json_lone_surrogate"
	ErrJSONTooDeep          ErrorCode = "json_too_deep"
	ErrJSONNumberOutOfRange ErrorCode = "json_number_out_of_range"
	ErrToolsMalformed       ErrorCode = "tools_malformed"
	ErrLockInvalid          ErrorCode = "lock_invalid"
	ErrLockUnsupported      ErrorCode = "lock_unsupported"
	ErrPolicyInvalid        ErrorCode = "policy_invalid"
	ErrKeyInvalid           ErrorCode = "key_invalid"
	ErrIssuerKeysInvalid    ErrorCode = "issuer_keys_invalid"
	ErrRecordInvalid        ErrorCode = "record_invalid"
	ErrInternal             ErrorCode = "internal"
	// ErrForkedProcess is answered by the C library alone, in a process
	// forked after it was loaded (crawlcheck.h); the Go binding never sees it.
	ErrForkedProcess ErrorCode = "forked_process"
)

// ErrorCodes lists the codes in the order docs/abi.md documents them.
var ErrorCodes = []ErrorCode{ErrUnknownOp, ErrBadRequest, ErrInputTooLarge, ErrJSONSyntax,
	ErrJSONDuplicateKey, ErrJSONInvalidUTF8, ErrJSONLoneSurrogate, ErrJSONTooDeep,
	ErrJSONNumberOutOfRange, ErrToolsMalformed, ErrLockInvalid, ErrLockUnsupported,
	ErrPolicyInvalid, ErrKeyInvalid, ErrIssuerKeysInvalid, ErrRecordInvalid, ErrInternal, ErrForkedProcess}
