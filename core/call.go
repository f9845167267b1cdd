package core

import (
	"github.com/crawlcheck/verifier/core/internal/sorting"
	"strings"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

// ABIVersion is the version of the binary interface (docs/abi.md): 2 added
// CallRaw (call_raw, crawlcheck_call_raw); Call answers as under 1.
const ABIVersion = 2

// MaxRequestBytes caps a request; hosts refuse larger input before copying it.
const MaxRequestBytes = canon.MaxBytes

// MaxPages caps the tools/list pages one check compares; hosts stop reading
// a server at this many pages (a list longer than that is truncated).
const MaxPages = tools.MaxPages

type opFunc func(req.Obj) (canon.Value, error)

// ops is the op table: the whole surface of the core.
var ops = map[string]opFunc{}

func init() {
	for name, fn := range map[string]opFunc{
		"version":             opVersion,
		"rules":               opRules,
		"canonicalize":        opCanonicalize,
		"hash_tools":          opHashTools,
		"make_lock":           opMakeLock,
		"verify_lock":         opVerifyLock,
		"sign_lock":           opSignLock,
		"public_key":          opPublicKey,
		"convert_lock":        opConvertLock,
		"diff":                opDiff,
		"lock_check":          opLockCheck,
		"continuity_check":    opContinuityCheck,
		"continuity_handoff":  opContinuityHandoff,
		"verify_record":       opVerifyRecord,
		"verify_chain":        opVerifyChain,
		"guard":               opGuard,
		"replay_decision":     opReplayDecision,
		"replay_state":        opReplayState,
		"sign_receipt":        opSignReceipt,
		"scan":                opScan,
		"instructions_diff":   opInstructionsDiff,
		"escape_text":         opEscapeText,
		"next_page":           opNextPage,
		"ui_templates":        opUITemplates,
		"ui_template_check":   opUITemplateCheck,
		"scan_items":          opScanItems,
		"refusal":             opRefusal,
		"session_step":        opSessionStep,
		"document_kind":       opDocumentKind,
		"approve":             opApprove,
		"endpoint":            opEndpoint,
		"ci_plan":             opCIPlan,
		"ci_verdict":          opCIVerdict,
		"log_entry":           opLogEntry,
		"log_verify":          opLogVerify,
		"log_consistency":     opLogConsistency,
		"pilot_batch":         opPilotBatch,
		"sign_pilot_upload":   opSignPilotUpload,
		"verify_pilot_upload": opVerifyPilotUpload,
		"pilot_queue":         opPilotQueue,
		"sign_correction":     opSignCorrection,
		"corrections_apply":   opCorrectionsApply,
		"resign_correction":   opResignCorrection,
		"resource_metadata":   opResourceMetadata,
	} {
		ops[name] = fn
	}
}

// Ops lists the op names, sorted.
func Ops() []string {
	names := make([]string, 0, len(ops))
	for n := range ops {
		names = append(names, n)
	}
	sorting.Strings(names)
	return names
}

// Call runs one op on a JSON request and returns the JSON envelope
// (docs/abi.md). It never panics: a panic inside an op is recovered into an
// "internal" error envelope.
func Call(op string, request []byte) []byte {
	return call(op, request, uint64(len(request)), false, func() (req.Obj, error) { return req.Parse(request) })
}

// CallRaw is Call with attachments (ABI 2): documents travel as raw bytes
// beside the request, each a frame of a 4-byte little-endian length and that
// many bytes, and a document field of the request names one by its index,
// {"$raw": i}. The answer is the one Call gives when each such field holds
// the attachment's bytes as a JSON string; an attachment no field references
// is a bad_request.
func CallRaw(op string, request, attachments []byte) []byte {
	size := uint64(len(request)) + uint64(len(attachments))
	return call(op, request, size, true, func() (req.Obj, error) { return req.ParseRaw(request, attachments) })
}

// CallParts is CallRaw for a Go host, with the attachments one by one
// instead of framed in one buffer: the documents it read are not copied
// into frames (a 1,000-tool check's page and lockfile, with the lockfile
// sent twice, verify_lock's and the check's, were a tenth of crawlcheck
// check --tools). The answer is CallRaw's for the same documents framed,
// each frame's 4-byte length counted in the request's size.
func CallParts(op string, request []byte, parts [][]byte) []byte {
	size := uint64(len(request))
	for _, p := range parts {
		size += 4 + uint64(len(p))
	}
	return call(op, request, size, true, func() (req.Obj, error) { return req.ParseParts(request, parts) })
}

// call runs op on the request parse reads, after refusing an unknown op or
// a request of size bytes over the cap; raw says it has attachments.
func call(op string, request []byte, size uint64, raw bool, parse func() (req.Obj, error)) (response []byte) {
	defer func() {
		if r := recover(); r != nil {
			response = envelope(canon.Value{}, cerr.New(cerr.Internal, "panic in op %q: %v", op, r))
		}
	}()
	if fn, ok := testOps[op]; ok {
		return fn(request)
	}
	fn, ok := ops[op]
	if !ok || size > MaxRequestBytes {
		return Oversized(op, size, raw)
	}
	r, err := parse()
	if err != nil {
		return envelope(canon.Value{}, err)
	}
	return envelope(run(op, fn, r))
}

// run runs an op on a request object after refusing the fields its
// declaration (opSpecs) does not name: a misspelt "operator_keys" silently
// ignored would turn a signed-baseline requirement off.
func run(op string, fn opFunc, r req.Obj) (canon.Value, error) {
	if s := specOf[op]; s != nil {
		if err := r.Only(s.RequestNames()...); err != nil {
			return canon.Value{}, err
		}
	}
	return fn(r)
}

// Oversized is Call's (raw: CallRaw's) answer to a request of n bytes over
// the cap, attachments included, or to an unknown op, without the request:
// a C host may pass a length no Go slice can hold (size_t near SIZE_MAX),
// and must still get exactly the envelope every other host gets,
// input_too_large, never a panic.
func Oversized(op string, n uint64, raw bool) []byte {
	if _, ok := ops[op]; !ok {
		return envelope(canon.Value{}, cerr.New(cerr.UnknownOp, "unknown op %s", clip(op)))
	}
	what := "request"
	if raw {
		what = "request with its attachments"
	}
	return envelope(canon.Value{}, cerr.New(cerr.InputTooLarge, what+" of %d bytes exceeds the limit of %d", n, MaxRequestBytes))
}

func envelope(result canon.Value, err error) []byte {
	if err != nil {
		return canon.Canonical(canon.Obj(
			canon.M("ok", canon.BoolOf(false)),
			canon.M("error", canon.Obj(
				canon.M("code", canon.Str(string(cerr.CodeOf(err)))),
				canon.M("message", canon.Str(cerr.Message(err))),
			)),
		))
	}
	const ok = `{"ok":true,"result":`
	// canon.Size leaves out the escapes strings need (it reads no string's
	// bytes), and a few of them (sign_receipt's log entry, a short JSON
	// text with twenty quotes) made append copy a whole 116 KB receipt into
	// a buffer a quarter larger: room for escapeRoom of them is kept.
	const escapeRoom = 512
	out := append(make([]byte, 0, len(ok)+canon.Size(result)+1+escapeRoom), ok...)
	out = canon.AppendCanonical(out, result)
	return append(out, '}')
}

// clip shortens an op name for a message and makes it valid UTF-8: the op
// name is the one input that reaches a message without going through the
// strict parser.
func clip(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return canon.Str(strings.ToValidUTF8(s, "\uFFFD")).String()
}

// testOps holds ops that only test builds register (see testpanic.go).
var testOps = map[string]func([]byte) []byte{}

// registerTestOp adds an op for a test build; production builds register none.
func registerTestOp(name string, fn func([]byte) []byte) { testOps[name] = fn }

// ErrorEnvelope is the canonical (RFC 8785) error envelope of docs/abi.md,
// for the failures an ABI layer (wasm/, cshared/) answers itself, outside
// Call: a NULL buffer, a panic it recovered. It is here, not in each layer,
// so that both write the same bytes and neither needs the JSON writer
// (core/internal/canon). The message is made valid UTF-8 first: a panic
// value may carry any bytes.
func ErrorEnvelope(code cerr.Code, msg string) []byte {
	b := append([]byte(`{"error":{"code":"`), code...)
	b = append(b, `","message":`...)
	b = canon.AppendString(b, strings.ToValidUTF8(msg, "\uFFFD"))
	return append(b, `},"ok":false}`...)
}
