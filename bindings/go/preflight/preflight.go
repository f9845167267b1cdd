package preflight

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	impl "github.com/crawlcheck/verifier/internal/preflight"
)

// The session and its configuration.
type (
	// Session is an MCP client session whose tools pass a continuity check
	// before the model sees them (see Open).
	Session = impl.Session
	// Config configures a Session.
	Config = impl.Config
	// Settings are the deployment's settings of a check: mode, policy,
	// baseline trust, the entry of an agentgate.lock.
	Settings = impl.Settings
	// Issuer configures the service path (Config.Issuer).
	Issuer = impl.Issuer
	// Pilot names an issuer's pilot the record log is uploaded to in the
	// background (Config.Pilot).
	Pilot = impl.Pilot
	// PinnedKey is an issuer key the deployment pins.
	PinnedKey = impl.PinnedKey
	// Consultation is what asking the issuer gave one check
	// (Session.Consultation).
	Consultation = impl.Consultation
	// Evidence is an observation the service path hands the check.
	Evidence = impl.Evidence
)

// The record and what the session does with it.
type (
	// Record is a continuity record the core wrote: Raw holds its canonical
	// bytes, the other fields its members.
	Record = impl.Record
	// Finding is one entry of the record's observations.
	Finding = impl.Finding
	// Would is what enforce mode would have done, in observe and review.
	Would = impl.Would
	// ObservedSummary is the record's observed member.
	ObservedSummary = impl.ObservedSummary
	// Recheck is a storm's record's storm: the list_changed notifications
	// the re-check covers and how long the rate limit held it back.
	Recheck = impl.Recheck
	// Handoff is the core's answer of what the session does after a check
	// and which tool objects it hands the model (continuity_handoff).
	Handoff = impl.Handoff
	// HandedTool is one tool of a Handoff.
	HandedTool = impl.HandedTool
	// HandedList is one list of a Handoff's prompts, resources or resource
	// templates; HandedItem one of its items (issue 35).
	HandedList = impl.HandedList
	HandedItem = impl.HandedItem
)

// Errors.
type (
	// RefusedError is a call or a session the record refuses; it carries
	// the record that decided.
	RefusedError = impl.RefusedError
	// ApprovalRefusedError is the core's refusal of a Confirm.
	ApprovalRefusedError = impl.ApprovalRefusedError
	// ItemRefusedError is a prompt, resource, resource template or ui://
	// template the record does not let through (GetPrompt, ReadResource).
	ItemRefusedError = impl.ItemRefusedError
	// Unnamed is a change a Confirm left unnamed.
	Unnamed = impl.Unnamed
	// CoreError is the core's refusal of a request (an error envelope);
	// branch on its Code with errors.As.
	CoreError = impl.CoreError
	// ErrorCode is one of the core's error codes (docs/abi.md).
	ErrorCode = impl.ErrorCode
)

// Open connects to the server over transport, checks it against the
// lockfile, and returns the session that follows the record. It takes what
// mcp.NewClient and Client.Connect take (docs/preflight.md, A session). A
// server that cannot be connected is a *RefusedError carrying the record;
// a configuration that cannot be used (the lockfile, the log) is an error
// before anything is sent.
func Open(ctx context.Context, client *mcp.Implementation, copts *mcp.ClientOptions, transport mcp.Transport, sopts *mcp.ClientSessionOptions, cfg Config) (*Session, error) {
	return impl.Open(ctx, client, copts, transport, sopts, cfg)
}

// ParseRecord reads a record the core wrote (a line of the record log). It
// does not verify record_sha256: the core's verify_record does.
func ParseRecord(raw []byte) (Record, error) { return impl.ParseRecord(raw) }

// NonceStatePath is where the issuer replay state of a record log is kept.
func NonceStatePath(logPath string) string { return impl.NonceStatePath(logPath) }

// PilotAckPath is where the offset of a record log the pilot's issuer
// acknowledged is kept: beside the log.
func PilotAckPath(logPath string) string { return impl.PilotAckPath(logPath) }

// ProofPath is where the tlog-proof of a lockfile is kept: beside it.
func ProofPath(lockPath string) string { return impl.ProofPath(lockPath) }

// CheckpointPath is where the newest checkpoint of the issuer's log is kept
// for a record log.
func CheckpointPath(logPath string) string { return impl.CheckpointPath(logPath) }

// Defaults of a Config left at zero.
const (
	DefaultTimeout        = impl.DefaultTimeout
	DefaultPageCap        = impl.DefaultPageCap
	DefaultMaxAnswerBytes = impl.DefaultMaxAnswerBytes
	DefaultIssuerTimeout  = impl.DefaultIssuerTimeout
)

// The rate limit of background re-checks on notifications/tools/list_changed:
// the first at once, the next no sooner than RecheckMin after the one
// before, doubling to RecheckMax while a storm lasts (Record.Storm).
const (
	RecheckMin = impl.RecheckMin
	RecheckMax = impl.RecheckMax
)

// Effects, weakest to strongest, as the core's rule table orders them.
const (
	EffectProceed         = impl.EffectProceed
	EffectProceedRecorded = impl.EffectProceedRecorded
	EffectRefresh         = impl.EffectRefresh
	EffectPauseTool       = impl.EffectPauseTool
	EffectPause           = impl.EffectPause
	EffectDeny            = impl.EffectDeny
)

// What a session does after a check (Handoff.Session).
const (
	SessionProceed    = impl.SessionProceed
	SessionCheckAgain = impl.SessionCheckAgain
	SessionStop       = impl.SessionStop
)

// The core's error codes (docs/abi.md, Error codes), for CoreError.Code.
const (
	ErrUnknownOp            = impl.ErrUnknownOp
	ErrBadRequest           = impl.ErrBadRequest
	ErrInputTooLarge        = impl.ErrInputTooLarge
	ErrJSONSyntax           = impl.ErrJSONSyntax
	ErrJSONDuplicateKey     = impl.ErrJSONDuplicateKey
	ErrJSONInvalidUTF8      = impl.ErrJSONInvalidUTF8
	ErrJSONLoneSurrogate    = impl.ErrJSONLoneSurrogate
	ErrJSONTooDeep          = impl.ErrJSONTooDeep
	ErrJSONNumberOutOfRange = impl.ErrJSONNumberOutOfRange
	ErrToolsMalformed       = impl.ErrToolsMalformed
	ErrLockInvalid          = impl.ErrLockInvalid
	ErrLockUnsupported      = impl.ErrLockUnsupported
	ErrPolicyInvalid        = impl.ErrPolicyInvalid
	ErrKeyInvalid           = impl.ErrKeyInvalid
	ErrIssuerKeysInvalid    = impl.ErrIssuerKeysInvalid
	ErrRecordInvalid        = impl.ErrRecordInvalid
	ErrInternal             = impl.ErrInternal
	ErrForkedProcess        = impl.ErrForkedProcess
)
