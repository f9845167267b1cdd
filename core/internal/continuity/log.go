package continuity

import (
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/lock"
	"github.com/crawlcheck/verifier/core/internal/policy"
	"github.com/crawlcheck/verifier/core/internal/tlog"
)

// LogInput is what a host hands the check of the issuer's transparency log
// (docs/log.md): the tlog-proof the issuer's signing answer carried for the
// approved lockfile, the newest checkpoint the host kept ("" for none), and
// the consistency proof between the two (base64 hashes, from the smaller
// tree to the larger), or Unavailable when the host could not obtain it.
type LogInput struct {
	Proof       string
	Kept        string
	Consistency []string
	Unavailable bool
}

// ReasonNotSigned is why a lockfile without a signature has no log entry to
// prove: the log holds what the issuer signed.
const ReasonNotSigned = "not_signed"

// lockEntry is the log entry of the approved lockfile, false when it has
// none (an agentgate.lock, an unsigned crawlcheck lockfile).
func lockEntry(f lock.File) ([]byte, bool) {
	l := f.Crawlcheck
	if l == nil || l.SHA256 == "" || l.Signature == "" {
		return nil, false
	}
	return tlog.EntryOf(lock.Kind, l.SHA256, l.Signature, l.Server.URL, l.Server.URL != ""), true
}

// judgeLog checks the lockfile's inclusion proof and the checkpoint kept:
// a proof that does not verify is log_proof_invalid, a checkpoint not
// consistent with the kept one log_inconsistent (both deny by default). The
// record's log member says what was verified and which checkpoint the host
// keeps from now on.
func (c *check) judgeLog() canon.Value {
	in := c.in.Log
	if in == nil {
		return canon.Value{}
	}
	var v tlog.Verdict
	if entry, ok := lockEntry(c.in.Lock); ok {
		v = tlog.Check(in.Proof, entry, c.in.Keys.Directory, c.in.Now, in.Kept, in.Consistency, in.Unavailable)
	} else {
		v = tlog.Verdict{Keep: in.Kept, Inclusion: &tlog.Failure{Reason: ReasonNotSigned, Detail: "the approved lockfile is not signed, so the issuer's log holds no entry of it"}}
	}
	failure := func(f *tlog.Failure) canon.Value {
		return canon.Obj(canon.M("reason", canon.Str(f.Reason)), canon.M("detail", canon.Str(f.Detail)))
	}
	if v.Inclusion != nil {
		c.add(policy.LogProofInvalid, "", "", "", failure(v.Inclusion))
	}
	if v.Consistency != nil {
		c.add(policy.LogInconsistent, "", "", "", failure(v.Consistency))
	}
	return LogValue(v, in.Kept != "")
}

// LogValue is a verdict as records and the log ops show it.
func LogValue(v tlog.Verdict, kept bool) canon.Value {
	cp := canon.NullValue()
	if v.Inclusion == nil || v.Checkpoint.Note != "" {
		cp = CheckpointValue(v.Checkpoint)
	}
	consistent := canon.NullValue()
	if kept && v.Inclusion == nil {
		consistent = canon.BoolOf(v.Consistency == nil)
	}
	reason := ""
	switch {
	case v.Inclusion != nil:
		reason = v.Inclusion.Reason
	case v.Consistency != nil:
		reason = v.Consistency.Reason
	}
	index := canon.NullValue()
	if v.Inclusion == nil && v.Proof.Checkpoint != "" {
		index = canon.Int(int64(v.Proof.Index))
	}
	return canon.Obj(
		canon.M("included", canon.BoolOf(v.Inclusion == nil)),
		canon.M("index", index),
		canon.M("checkpoint", cp),
		canon.M("consistent", consistent),
		canon.M("reason", optStr(reason)),
		canon.M("keep", optStr(v.Keep)),
	)
}

// CheckpointValue is a verified checkpoint: {origin, size, root_hash, key_id}.
func CheckpointValue(cp tlog.Checkpoint) canon.Value {
	return canon.Obj(
		canon.M("origin", canon.Str(cp.Origin)),
		canon.M("size", canon.Int(int64(cp.Size))),
		canon.M("root_hash", canon.Str(cp.Root.Encode())),
		canon.M("key_id", canon.Str(cp.KeyID)),
	)
}
