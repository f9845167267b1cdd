package core

import (
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/continuity"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/tlog"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

// pilotBatchType is the log entry type of a pilot batch's commitment.
const pilotBatchType = "crawlcheck-pilot-batch"

// opPilotBatch judges a pilot's upload (continuity.VerifyPilotBatch) and
// writes the log entry that commits to the pilot's new head: the issuer
// stores what it is told to keep and appends the entry, deciding nothing.
// The entry names only digests — the head the log last committed to for
// this pilot and the new one — never a record, a token or the pilot.
func opPilotBatch(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	lines := rd.Str("records", true)
	head := rd.Str("head", false)
	logged := rd.Str("logged_head", false)
	known := rd.Strings("known")
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	for _, f := range []struct{ name, v string }{{"head", head}, {"logged_head", logged}} {
		if r.Has(f.name) && !tools.IsHexHash(f.v) {
			return canon.Value{}, cerr.New(cerr.BadRequest, "request.%s must be a record_sha256 (64 lowercase hex digits)", f.name)
		}
	}
	holds := make(map[string]bool, len(known))
	for _, k := range known {
		holds[k] = true
	}
	b := continuity.VerifyPilotBatch(lines, head, holds)
	entry := canon.NullValue()
	if b.Head != "" && b.Head != logged {
		entry = canon.Str(string(canon.Canonical(canon.Obj(
			canon.M("kind", canon.Str(tlog.EntryKind)),
			canon.M("v", canon.Int(1)),
			canon.M("type", canon.Str(pilotBatchType)),
			canon.M("prev_head", canon.StrOrNull(logged, logged != "")),
			canon.M("head", canon.Str(b.Head)),
		))))
	}
	return canon.Obj(
		canon.M("results", canon.Arr(b.Results...)),
		canon.M("accepted", canon.Int(int64(b.Accepted))),
		canon.M("head", canon.StrOrNull(b.Head, b.Head != "")),
		canon.M("digests", canon.Arr(b.Digests...)),
		canon.M("entry", entry),
	), nil
}
