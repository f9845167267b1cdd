package tlog

import (
	"time"

	"github.com/crawlcheck/verifier/core/merkle"

	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/sig"
)

// Reasons a kept checkpoint and a new one do not agree.
const (
	ReasonKeptMalformed = "kept_checkpoint_malformed"
	ReasonNotConsistent = "not_consistent"
	// ReasonConsistencyUnavailable: the trees differ in size and the host
	// had no consistency proof to give (no issuer configured, or it did not
	// answer). Not a fork proved, but not one history shown either, so it
	// fails as log_inconsistent all the same (docs/decisions.md).
	ReasonConsistencyUnavailable = "consistency_unavailable"
)

// EntryKind is the kind of a log entry.
const EntryKind = "crawlcheck-log-entry"

// Entry is the log entry of a signed document (a lockfile or a receipt):
// canonical JSON of its kind, its sha256 and signature — the signed
// envelope, never the tools it describes — and the endpoint it speaks
// about (a receipt's subject, a lockfile's server.url), so that a monitor
// can list the entries of one server. ok is false when doc is not a signed
// document.
func Entry(doc canon.Value) (entry []byte, ok bool) {
	str := func(v canon.Value, k string) (string, bool) { x, _ := v.Get(k); return x.Str() }
	kind, ok1 := str(doc, "kind")
	sum, ok2 := str(doc, "sha256")
	signature, ok3 := str(doc, "signature")
	if !ok1 || !ok2 || !ok3 || kind == "" || sum == "" || signature == "" {
		return nil, false
	}
	subject, hasSubject := str(doc, "subject")
	if srv, ok := doc.Get("server"); ok && !hasSubject {
		subject, hasSubject = str(srv, "url")
	}
	return EntryOf(kind, sum, signature, subject, hasSubject), true
}

// EntryOf is the entry of a document of kind with digest sum and signature
// about subject (hasSubject false: about no endpoint).
func EntryOf(kind, sum, signature, subject string, hasSubject bool) []byte {
	return canon.Canonical(canon.Obj(
		canon.M("kind", canon.Str(EntryKind)),
		canon.M("v", canon.Int(1)),
		canon.M("type", canon.Str(kind)),
		canon.M("sha256", canon.Str(sum)),
		canon.M("signature", canon.Str(signature)),
		canon.M("subject", canon.StrOrNull(subject, hasSubject)),
	))
}

// Verdict is what a host learns from an entry's proof and the checkpoint it
// kept: whether the entry is in the log the proof's checkpoint commits to
// (Inclusion nil), whether that checkpoint and the kept one are of one
// history (Consistency nil), and which checkpoint to keep from now on.
type Verdict struct {
	Proof       Proof
	Checkpoint  Checkpoint // the proof's checkpoint, when it verified
	Inclusion   *Failure
	Consistency *Failure
	Keep        string // the note to keep: the newer of two consistent ones, else the kept one
}

// Check verifies that entry is included in the log, as proof says, under a
// checkpoint signed by a key of dir that may vouch at now; and, when the
// host kept a checkpoint (kept, a signed note; "" for none), that the two are
// consistent by the consistency proof between their sizes (either way
// round: the kept checkpoint may be the newer). unavailable says the host
// could not obtain that proof (see Consistent).
//
// A kept checkpoint is the host's own memory of a checkpoint it verified
// when it kept it: it is read and its origin compared, its signature is not
// checked again, so a key rotation since does not turn every later check
// into an inconsistency (docs/decisions.md).
func Check(proofText string, entry []byte, dir *sig.Directory, now time.Time, kept string, consistency []string, unavailable bool) Verdict {
	v := Verdict{Keep: kept}
	p, f := ParseProof(proofText)
	if f != nil {
		v.Inclusion = f
		return v
	}
	v.Proof = p
	cp, f := VerifyCheckpoint(p.Checkpoint, dir, now)
	if f != nil {
		v.Inclusion = f
		return v
	}
	v.Checkpoint = cp
	if err := merkle.VerifyInclusion(p.Index, cp.Size, merkle.LeafHash(entry), p.Hashes, cp.Root); err != nil {
		v.Inclusion = fail(err.Error(), "the entry is not at index "+num(p.Index)+" of the log of size "+num(cp.Size)+" by this proof")
		return v
	}
	if kept == "" {
		v.Keep = cp.Note
		return v
	}
	keep, f := Consistent(kept, cp, consistency, unavailable)
	v.Consistency = f
	if f == nil {
		v.Keep = keep
	}
	return v
}

// Consistent checks a kept checkpoint against a verified one by a
// consistency proof between their sizes, and returns the note to keep: the
// one of the larger tree. unavailable, with no proof given, says the host
// could not obtain one: trees of two sizes then fail as
// consistency_unavailable, worded here so that no host's record reads like a
// fork proved.
func Consistent(kept string, cp Checkpoint, consistency []string, unavailable bool) (string, *Failure) {
	text, _, f := splitNote(kept)
	if f != nil {
		return "", fail(ReasonKeptMalformed, f.Detail)
	}
	origin, size, root, f := ParseCheckpointText(text)
	switch {
	case f != nil:
		return "", fail(ReasonKeptMalformed, f.Detail)
	case origin != cp.Origin:
		return "", fail(ReasonOtherOrigin, "the kept checkpoint is of the log "+quote(origin)+", the new one of "+quote(cp.Origin))
	}
	if unavailable && len(consistency) == 0 && size != cp.Size {
		return "", fail(ReasonConsistencyUnavailable, "the kept checkpoint is of "+num(size)+" entries and the new one of "+num(cp.Size)+", and the issuer gave no consistency proof between them (none is configured, or it did not answer): the two are not shown to be one history, and no fork is proved either")
	}
	proof, f := ParseHashes(consistency)
	if f != nil {
		return "", f
	}
	old, oldRoot, newer, newRoot, keep := size, root, cp.Size, cp.Root, cp.Note
	if size > cp.Size {
		old, oldRoot, newer, newRoot, keep = cp.Size, cp.Root, size, root, kept
	}
	if err := merkle.VerifyConsistency(old, newer, proof, oldRoot, newRoot); err != nil {
		return "", fail(ReasonNotConsistent, "the log of size "+num(old)+" is not a prefix of the log of size "+num(newer)+" by this proof ("+err.Error()+")")
	}
	return keep, nil
}
