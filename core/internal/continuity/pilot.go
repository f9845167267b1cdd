package continuity

import (
	"strings"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
)

// A pilot batch (the issuer's POST /api/v1/pilot/{id}/records, docs/issuer.md):
// JSON lines of records a pilot's hosts wrote, judged one by one against the
// chain the issuer holds for that pilot. The issuer adds only what a store
// knows (the pilot's head, the records it already holds); which record is
// kept, refused or a gap is decided here, so an issuer and an auditor
// replaying the same upload agree.

// PilotBatch is a batch's verdict.
type PilotBatch struct {
	Results  []canon.Value // {record_sha256, status, reason, expected_prev_record_sha256} a line, up to and including a chain_gap
	Head     string        // the pilot's head after the batch
	Accepted int
	// Digests are the record_sha256 every line names (null when none), in
	// order, the lines after a gap included: what the issuer looks up to
	// say which it holds.
	Digests []canon.Value
}

// VerifyPilotBatch judges lines against head (the last record the pilot's
// chain holds, "" for a pilot that holds none) and held (the digests of
// records the issuer holds for the pilot; the accepted ones are added). A
// line is edited when it is not a record in its canonical form or its
// record_sha256 does not match; duplicate when the issuer holds it (it is
// the head, is held, or came earlier in the batch); accepted when it
// follows the head, which it then becomes. Any other line is a gap and ends
// the batch: what follows it cannot follow what the issuer holds. A pilot
// that holds no record yet anchors its chain at its first accepted record,
// whatever that record follows (hosts may have logged before joining), but
// never after a refused line in the same batch: an edited record must not
// vanish by becoming the predecessor of the anchor.
func VerifyPilotBatch(lines string, head string, held map[string]bool) PilotBatch {
	b := PilotBatch{Head: head}
	refused, stopped := false, false
	for rest, more := strings.TrimSuffix(lines, "\n"), true; more && lines != ""; {
		var line string
		line, rest, more = strings.Cut(rest, "\n")
		status, digest, reason, expected := "edited", "", "", ""
		if rec, err := canon.ParseString(line); err != nil {
			reason = "not a record: " + cerr.Message(err)
		} else {
			digest = recordDigest(rec)
			pv, hasPrev := rec.Get("prev_record_sha256")
			prev, _ := pv.Str()
			v, err := VerifyRecord(rec)
			switch {
			case err != nil:
				reason = cerr.Message(err)
			case !v.Valid:
				reason = v.Reason
			case string(canon.Canonical(rec)) != line:
				reason = "the record is not in its canonical form (the bytes the core wrote): it was rewritten"
			case digest == b.Head || held[digest]:
				status = "duplicate"
			case b.Head == "" && !refused, hasPrev && prev == b.Head && b.Head != "":
				status = "accepted"
			case b.Head == "":
				status, reason = "chain_gap", "a record refused earlier in this batch stands before it, and the pilot holds no record it could follow"
			case !hasPrev:
				status, expected, reason = "chain_gap", b.Head, "the record starts a new chain, but the pilot's chain ends at "+b.Head
			default:
				status, expected, reason = "chain_gap", b.Head, "the record follows "+prev+", not the pilot's last record "+b.Head+": records between them were not sent"
			}
		}
		b.Digests = append(b.Digests, canon.StrOrNull(digest, digest != ""))
		if stopped {
			continue
		}
		b.Results = append(b.Results, canon.Obj(
			canon.M("record_sha256", canon.StrOrNull(digest, digest != "")),
			canon.M("status", canon.Str(status)),
			canon.M("reason", canon.StrOrNull(reason, reason != "")),
			canon.M("expected_prev_record_sha256", canon.StrOrNull(expected, expected != "")),
		))
		switch status {
		case "accepted":
			b.Head, b.Accepted, held[digest] = digest, b.Accepted+1, true
		case "edited":
			refused = true
		case "chain_gap":
			stopped = true
		}
	}
	return b
}
