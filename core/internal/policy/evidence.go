package policy

import (
	"time"

	"github.com/crawlcheck/verifier/core/internal/canon"
)

// ClockSkew is how far an issuer's clock and a host's may disagree (spec §3):
// a receipt is fresh from its issued_at minus ClockSkew until its expires_at
// plus ClockSkew.
const ClockSkew = 5 * time.Minute

// EvidenceReason is one reason a guard answer fails and the observation of
// spec §4 it becomes in a continuity check. The table is data, part of the
// rule table, so engine.rules_sha256 names how signed evidence was judged
// as well as how observations were.
type EvidenceReason struct {
	Reason      string
	Observation Observation
	Meaning     string
}

// EvidenceReasons are every reason a guard answer can fail for.
var EvidenceReasons = []EvidenceReason{
	{"malformed_receipt", SignatureInvalid, "not a receipt: not an object, an unknown kind or v, or an envelope member missing or of the wrong type"},
	{"malformed_signature", SignatureInvalid, "the signature string cannot be read"},
	{"key_id_mismatch", SignatureInvalid, "key_id names another key than the signature does"},
	{"bad_signature", SignatureInvalid, "the signature does not verify over the receipt's sha256 in the domain of its kind"},
	{"edited_after_signing", SignatureInvalid, "the signature verifies, but the receipt no longer hashes to its sha256"},
	{"key_unknown", KeyUnknown, "neither the key directory nor the pinned keys hold the key"},
	{"other_issuer", KeyUnknown, "the receipt names another issuer than the key directory does"},
	{"retired_key", KeyRetired, "the key directory lists the key as retired"},
	{"key_outside_validity", KeyRetired, "now is outside the key's not_before and not_after"},
	{"expired", EvidenceExpired, "now is at or past expires_at plus the clock skew"},
	{"not_yet_valid", EvidenceExpired, "issued_at is later than now plus the clock skew"},
	{"nonce_seen", EvidenceExpired, "the nonce was seen before: a replayed receipt; ask again for a fresh one"},
	{"other_subject", ServerIdentityMismatch, "the receipt speaks about another endpoint than the one expected"},
	{"other_operation", DecisionRefused, "the receipt answers another operation than the one asked"},
	{"other_baseline", DecisionRefused, "the receipt was computed against another lockfile than the approved one"},
	{"incomplete", DecisionRefused, "the issuer did not read and compare the whole list"},
	{"not_allowed", DecisionRefused, "the receipt's decision is block, pause or deny"},
	{"not_reproducible", DecisionRefused, "re-running the receipt's decision from its inputs with this core gives another answer"},
}

// EvidenceObservation returns the observation a failing reason becomes.
func EvidenceObservation(reason string) (Observation, bool) {
	for _, r := range EvidenceReasons {
		if r.Reason == reason {
			return r.Observation, true
		}
	}
	return "", false
}

// Preflight decisions: what a decision receipt says about a session.
const (
	DecisionProceed = "proceed"
	DecisionPause   = "pause"
	DecisionDeny    = "deny"
)

// DecisionOf is the preflight decision a session effect amounts to: a
// session that goes on (an approved exception included) proceeds, a denied
// one is denied, and anything that holds it back — refresh, a withheld tool,
// pause — is pause.
func DecisionOf(e Effect) string {
	switch {
	case e <= ProceedRecorded:
		return DecisionProceed
	case e == Deny:
		return DecisionDeny
	}
	return DecisionPause
}

func evidenceValue() canon.Value {
	rows := make([]canon.Value, len(EvidenceReasons))
	for i, r := range EvidenceReasons {
		rows[i] = canon.Obj(
			canon.M("reason", canon.Str(r.Reason)),
			canon.M("observation", canon.Str(string(r.Observation))),
			canon.M("meaning", canon.Str(r.Meaning)),
		)
	}
	return canon.Obj(
		canon.M("clock_skew_s", canon.Int(int64(ClockSkew/time.Second))),
		canon.M("reasons", canon.Arr(rows...)),
		canon.M("observations", canon.Str("each failing answer gives the observation of its reason; one entry per observation, listing the answers behind it")),
		canon.M("result", canon.Str("proceed only when every answer holds and the receipt's decision allows; otherwise deny when the deployment's policy gives an observation deny, else pause")),
		canon.M("assurance", canon.Obj(
			canon.M("A", canon.Str("record integrity: the signature verifies under a key of the issuer that may vouch now")),
			canon.M("B", canon.Str("reproducible decision: the receipt's decision, re-run from its inputs with the same rules, gives the same answer")),
			canon.M("C", canon.Str("corroborated reading: the issuer's tools_sha256 equals the one the host observed itself")),
		)),
		canon.M("decisions", canon.Obj(
			canon.M("lock_check", canon.Str("connect when the list was read whole and equals the lockfile's; block on any difference or an unread list")),
			canon.M("preflight", canon.Str("proceed for proceed and proceed_recorded, deny for deny, pause for refresh, pause_tool and pause")),
		)),
	)
}
