package core

import (
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/continuity"
	"github.com/crawlcheck/verifier/core/internal/policy"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/sig"
	"github.com/crawlcheck/verifier/core/internal/tlog"
	"github.com/crawlcheck/verifier/core/merkle"
)

// The transparency log's ops (docs/log.md): the entry of a signed document,
// an entry's inclusion proof and a checkpoint's consistency with the one a
// host kept. A proof that does not verify is an answer (valid false, with
// the observation a check records), never an error: a server's or issuer's
// fault is an observation.

// logFields are the members of continuity_check's log, and the like
// members of log_verify.
var logFields = []Field{
	need("proof", "string", "the tlog-proof (c2sp.org/tlog-proof) the issuer's signing answer carried for the lockfile"),
	may("checkpoint", "string", "the newest checkpoint the host kept (a signed note, as the last check's `log.keep` gave it)"),
	may("consistency", "array of strings", "base64 hashes: the consistency proof between the kept checkpoint's tree and the proof's, smaller to larger"),
	may("consistency_unavailable", "bool", "true when the trees differ in size and the host could not obtain the consistency proof (no issuer configured, or it did not answer): the check fails as `log_inconsistent` with reason `consistency_unavailable`, not as a fork proved; not with `consistency`"),
	may("consistency_answer", "document", "instead of `consistency`: the issuer's answer to GET /api/v1/log/consistency as it sent it, `{\"consistency\": [base64 hashes]}`; an answer that is not that object (not JSON, no array of strings) gives no proof, as `consistency_unavailable` does; not with `consistency` or `consistency_unavailable`"),
}

// consistencyOf reads consistency and consistency_unavailable, which
// contradict each other when both are given, or consistency_answer, the
// issuer's answer as it came, which stands for either.
func consistencyOf(rd *req.Reader) ([]string, bool) {
	cons, unavailable := rd.Strings("consistency"), rd.Bool("consistency_unavailable")
	if unavailable && rd.Has("consistency") {
		rd.Fail(cerr.New(cerr.BadRequest, "give %s or %s, not both", rd.Field("consistency"), rd.Field("consistency_unavailable")))
	}
	if rd.Has("consistency_answer") {
		if rd.Has("consistency") || rd.Has("consistency_unavailable") {
			rd.Fail(cerr.New(cerr.BadRequest, "give %s alone: it stands for %s or %s", rd.Field("consistency_answer"), rd.Field("consistency"), rd.Field("consistency_unavailable")))
		}
		cons, unavailable = consistencyAnswer(rd.Page("consistency_answer", false))
	}
	return cons, unavailable
}

// consistencyAnswer reads the issuer's answer to GET
// /api/v1/log/consistency, {"consistency": [base64 hashes]}: the proof, or
// none (unavailable) for an answer that is not that object. The issuer's
// bytes are read here, once, instead of by each host's client (which
// differed: one of them passed an array of numbers on, and the check failed
// instead of recording the proof as unavailable).
func consistencyAnswer(page string) ([]string, bool) {
	v, err := canon.ParseString(page)
	if err != nil || v.Kind() != canon.Object {
		return nil, true
	}
	c, ok := v.Get("consistency")
	if !ok || c.Kind() != canon.Array {
		return nil, true
	}
	hashes := make([]string, 0, len(c.Elems()))
	for _, e := range c.Elems() {
		h, ok := e.Str()
		if !ok {
			return nil, true
		}
		hashes = append(hashes, h)
	}
	return hashes, false
}

// logDirectory reads the required key directory the log's checkpoints are
// verified with.
func logDirectory(rd *req.Reader) *sig.Directory {
	doc := rd.RequiredDoc("key_directory")
	if rd.Failed() {
		return nil
	}
	d, err := sig.ParseDirectory(doc)
	rd.In("key_directory", err)
	return d
}

// logInputOf reads continuity_check's log member.
func logInputOf(rd *req.Reader) *continuity.LogInput {
	o, ok := rd.Object("log")
	if !ok || !rd.Fail(o.Only(names(logFields)...)) {
		return nil
	}
	// The log's checkpoints are verified with the same keys as the baseline
	// (baselineKeys): the operator's copy of the directory, or the pins with
	// the directory fetched at this check (only its pinned keys count). With
	// the pins alone (the directory could not be had) no directory names the
	// issuer, so no checkpoint is of its log: no_log_origin, on the record.
	if !rd.Has("key_directory") && !rd.Has("pinned_keys") {
		rd.Fail(cerr.New(cerr.BadRequest, "%s needs key_directory or pinned_keys: the log's checkpoints are verified with the issuer's keys", rd.Field("log")))
		return nil
	}
	lr := o.Read()
	in := &continuity.LogInput{Proof: lr.Str("proof", true), Kept: lr.Str("checkpoint", false)}
	in.Consistency, in.Unavailable = consistencyOf(lr)
	rd.Fail(lr.Err())
	return in
}

// documentEntry reads the entry a log op is about: document (a signed
// lockfile or receipt, whose entry the core writes) or entry (the entry's
// text as the log holds it), exactly one.
func documentEntry(rd *req.Reader) []byte {
	switch hasDoc, hasEntry := rd.Has("document"), rd.Has("entry"); {
	case rd.Failed():
	case hasDoc == hasEntry:
		rd.Fail(cerr.New(cerr.BadRequest, "give %s or %s, exactly one", rd.Field("document"), rd.Field("entry")))
	case hasEntry:
		return []byte(rd.Str("entry", true))
	default:
		doc := rd.RequiredDoc("document")
		if rd.Failed() {
			return nil
		}
		e, ok := tlog.Entry(doc)
		switch stored, _ := doc.Get("sha256"); {
		case !ok:
			rd.Fail(cerr.New(cerr.BadRequest, "%s must be a signed document: an object with string kind, sha256 and signature", rd.Field("document")))
		case stored.String() != canon.Str(sig.Digest(doc)).String():
			// The log holds the signed envelope; an edited document has the
			// envelope of another, and a proof of it would mislead.
			rd.Fail(cerr.New(cerr.BadRequest, "%s: its sha256 does not match its content: it was edited after signing, and the log proves only the document as signed", rd.Field("document")))
		}
		return e
	}
	return nil
}

func opLogEntry(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	e := documentEntry(rd)
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	return canon.Obj(
		canon.M("entry", canon.Str(string(e))),
		canon.M("leaf_hash", canon.Str(merkle.LeafHash(e).Encode())),
	), nil
}

// logAnswer is log_verify's and log_consistency's answer: the verdict as a
// record's log member shows it, whether it holds, and the observation a
// check records when it does not.
func logAnswer(v tlog.Verdict, kept bool, drop ...string) canon.Value {
	obs := ""
	detail := ""
	switch {
	case v.Inclusion != nil:
		obs, detail = string(policy.LogProofInvalid), v.Inclusion.Detail
	case v.Consistency != nil:
		obs, detail = string(policy.LogInconsistent), v.Consistency.Detail
	}
	ms := continuity.LogValue(v, kept).Without(drop...).Members()
	ms = append(ms,
		canon.M("valid", canon.BoolOf(obs == "")),
		canon.M("observation", canon.StrOrNull(obs, obs != "")),
		canon.M("detail", canon.StrOrNull(detail, detail != "")),
	)
	return canon.Obj(ms...)
}

func opLogVerify(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	entry := documentEntry(rd)
	proof := rd.Str("proof", true)
	kept := rd.Str("checkpoint", false)
	consistency, unavailable := consistencyOf(rd)
	now := rd.Time("now")
	dir := logDirectory(rd)
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	return logAnswer(tlog.Check(proof, entry, dir, now, kept, consistency, unavailable), kept != ""), nil
}

func opLogConsistency(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	note := rd.Str("new", true)
	kept := rd.Str("checkpoint", false)
	consistency := rd.Strings("consistency")
	now := rd.Time("now")
	dir := logDirectory(rd)
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	v := tlog.Verdict{Keep: kept}
	cp, f := tlog.VerifyCheckpoint(note, dir, now)
	switch {
	case f != nil:
		v.Inclusion = f
	case kept == "":
		v.Checkpoint, v.Keep = cp, cp.Note
	default:
		v.Checkpoint = cp
		keep, f := tlog.Consistent(kept, cp, consistency, false)
		if v.Consistency = f; f == nil {
			v.Keep = keep
		}
	}
	return logAnswer(v, kept != "", "included", "index"), nil
}
