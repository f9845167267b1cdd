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

// opPilotQueue answers one step of a host's pilot upload pass
// (continuity.StepPilotQueue): which bytes of the log to read, which to
// post, and what the issuer's answer makes of the ack file. The host reads
// and writes the files, posts and waits; every decision is this op's, so
// every host keeps the same ack file after the same answers.
func opPilotQueue(r req.Obj) (canon.Value, error) {
	if r.Has("failed_passes") {
		return pilotWait(r)
	}
	rd := r.Read()
	in := continuity.PilotQueueInput{HasAck: r.Has("ack"), HasWindow: r.Has("window")}
	in.Ack = rd.Page("ack", false)
	if r.Has("log_size") {
		in.LogSize = int64(wholeInt(rd, "log_size", 0))
	} else {
		rd.Fail(cerr.New(cerr.BadRequest, "request.log_size is required"))
	}
	in.Window = rd.Page("window", false)
	if in.HasWindow {
		if !r.Has("window_offset") {
			rd.Fail(cerr.New(cerr.BadRequest, "request.window_offset is required with window"))
		}
		in.WindowOffset = int64(wholeInt(rd, "window_offset", 0))
	}
	if a, ok := rd.Object("answer"); ok && !rd.Failed() {
		if !in.HasWindow {
			rd.Fail(cerr.New(cerr.BadRequest, "request.answer needs the window its batch came from"))
		}
		if rd.Fail(a.Only("status", "body")) {
			ar := a.Read()
			in.Answer = &continuity.PilotAnswer{Status: wholeInt(ar, "status", 100), Body: ar.Page("body", false)}
			rd.Fail(ar.Err())
		}
	}
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	q, err := continuity.StepPilotQueue(in)
	if err != nil {
		return canon.Value{}, err
	}
	read, batch, ack, qerr := canon.NullValue(), canon.NullValue(), canon.NullValue(), canon.NullValue()
	if q.HasRead {
		read = canon.Obj(canon.M("offset", canon.Int(q.ReadOffset)), canon.M("length", canon.Int(q.ReadLength)))
	}
	if q.Records > 0 {
		batch = canon.Obj(canon.M("offset", canon.Int(q.BatchOffset)), canon.M("length", canon.Int(q.BatchLength)), canon.M("records", canon.Int(int64(q.Records))))
	}
	if q.HasNewAck {
		ack = canon.Str(q.Ack)
	}
	if q.ErrCode != "" {
		qerr = canon.Obj(canon.M("code", canon.Str(q.ErrCode)), canon.M("message", canon.Str(q.ErrMessage)))
	}
	return pilotAnswer(q.Reset, read, batch, ack, qerr, q.Acknowledged, q.More, canon.NullValue()), nil
}

func pilotAnswer(reset string, read, batch, ack, qerr canon.Value, acknowledged int, more bool, wait canon.Value) canon.Value {
	return canon.Obj(
		canon.M("reset", canon.StrOrNull(reset, reset != "")),
		canon.M("read", read),
		canon.M("batch", batch),
		canon.M("ack", ack),
		canon.M("error", qerr),
		canon.M("acknowledged", canon.Int(int64(acknowledged))),
		canon.M("more", canon.BoolOf(more)),
		canon.M("wait", wait),
	)
}

// The pilot upload's back-off after failed passes, by default: from 1 s,
// doubling with each pass that failed in a row (at most 20 doublings), to
// 5 minutes.
const (
	pilotMinBackoffMS = 1_000
	pilotMaxBackoffMS = 300_000
	pilotDoublings    = 20
)

// pilotWait answers how long a host waits before its next pass after
// failed_passes passes failed in a row (the issuer could not take the
// records, or could not be reached): d = min(max, min·2^min(n−1, 20)), the
// wait drawn at random in [d/2, d] so that many hosts that failed together
// do not come back together. The host draws within wait and keeps the
// clock; a kick (a new record) does not cut the wait short. backoff_ms
// replaces the bounds (a deployment's own, or a test's).
func pilotWait(r req.Obj) (canon.Value, error) {
	// With failed_passes the request holds nothing of a pass.
	if err := r.Only("failed_passes", "backoff_ms"); err != nil {
		return canon.Value{}, err
	}
	rd := r.Read()
	n := wholeInt(rd, "failed_passes", 1)
	least, most := int64(pilotMinBackoffMS), int64(pilotMaxBackoffMS)
	if b, ok := rd.Object("backoff_ms"); ok && !rd.Failed() {
		if rd.Fail(b.Only("min", "max")) {
			br := b.Read()
			if b.Has("min") {
				least = int64(wholeInt(br, "min", 1))
			}
			if b.Has("max") {
				most = int64(wholeInt(br, "max", 1))
			}
			rd.Fail(br.Err())
			// A bound given alone moves the default of the other to it
			// (a max of 200 ms alone is a wait of at most 200 ms, not a
			// refusal against the default 1 s min): only a min and a max
			// both given can disagree, and a host that sets one bound
			// would otherwise never try a pass again.
			switch {
			case rd.Failed():
			case !b.Has("min"):
				least = min(least, most)
			case !b.Has("max"):
				most = max(most, least)
			case least > most:
				rd.Fail(cerr.New(cerr.BadRequest, "%s.min must not exceed its max", rd.Field("backoff_ms")))
			}
		}
	}
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	d := least
	// d > most/2 stops the doubling before it could pass the int64 range
	// (a deployment's max near it): min(d·2, most) is then most.
	for i := 1; i < n && i <= pilotDoublings && d < most; i++ {
		if d > most/2 {
			d = most
			break
		}
		d *= 2
	}
	d = min(d, most)
	null := canon.NullValue()
	return pilotAnswer("", null, null, null, null, 0, false, canon.Obj(canon.M("min", canon.Int(d/2)), canon.M("max", canon.Int(d)))), nil
}
