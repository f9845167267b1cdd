package core

import (
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/continuity"
)

// The hosts' default limits: one answer of the core (the version op's
// limits member), which every host reads at start instead of keeping a
// constant of its own, so that a server, an issuer or a record log meets
// the same bounds from Go, the CLI, JS and Python (issue 18). A host may
// let its caller lower or raise the answer cap and the deadlines; the
// request cap and the bound on the pages together are the core's and fixed.
const (
	// DefaultAnswerBytes bounds one frame a server sends (a handshake or
	// tools/list answer) when the host's caller sets no bound: a longer one
	// is cut off and recorded as answer_too_large.
	DefaultAnswerBytes = 16 << 20
	// MaxPagesBytes bounds the tools/list pages of one check together, as
	// the host counts them arriving: past it the host stops reading with
	// the fault pages_over_cap, since no check could carry them.
	MaxPagesBytes = continuity.MaxPagesBytes
	// MaxDepth is the deepest nesting of arrays and objects the core parses
	// (json_too_deep past it): a host that parses or re-encodes a request
	// before the core refuses deeper ones with the same code.
	MaxDepth = canon.MaxDepth
	// DefaultCheckTimeoutMS bounds one check (connect, handshake and every
	// tools/list page) when the host's caller sets no deadline.
	DefaultCheckTimeoutMS = 10_000
	// DefaultIssuerTimeoutMS bounds one consultation of the issuer (its key
	// directory and the lock check) when none is set.
	DefaultIssuerTimeoutMS = 5_000
	// MaxIssuerAnswerBytes bounds one issuer answer a host reads: the guard
	// request carries it beside the lockfile, the key directory and the
	// replay state, so half the request cap leaves them room.
	MaxIssuerAnswerBytes = continuity.IssuerAnswerBytes
	// MaxRecordLogBytes bounds a record log a host reads: its chain is
	// verified in one request, with room to spare for the rest of it.
	MaxRecordLogBytes = MaxRequestBytes / 2
	// PilotAckBytes bounds a pilot ack file (pilot_queue): a host reads at
	// most one byte more, and a longer file is corrupt.
	PilotAckBytes = continuity.PilotAckBytes
	// PilotAnswerBytes bounds the issuer's answer to one pilot upload.
	PilotAnswerBytes = continuity.PilotAnswerBytes
)

// limitsValue is the version op's limits member.
func limitsValue() canon.Value {
	return canon.Obj(
		canon.M("answer_bytes", canon.Int(DefaultAnswerBytes)),
		canon.M("check_timeout_ms", canon.Int(DefaultCheckTimeoutMS)),
		canon.M("issuer_answer_bytes", canon.Int(MaxIssuerAnswerBytes)),
		canon.M("issuer_timeout_ms", canon.Int(DefaultIssuerTimeoutMS)),
		canon.M("pages", canon.Int(MaxPages)),
		canon.M("pilot_ack_bytes", canon.Int(PilotAckBytes)),
		canon.M("pilot_answer_bytes", canon.Int(PilotAnswerBytes)),
		canon.M("pages_bytes", canon.Int(MaxPagesBytes)),
		canon.M("record_log_bytes", canon.Int(MaxRecordLogBytes)),
		canon.M("request_bytes", canon.Int(MaxRequestBytes)),
	)
}
