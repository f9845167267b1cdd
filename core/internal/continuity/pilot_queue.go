package continuity

import (
	"strconv"
	"strings"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/textsafe"
)

// The pilot upload queue (docs/preflight.md, "The pilot upload"): a host
// sends the records of its log to an issuer's pilot, and what the issuer
// acknowledged is kept beside the log in an ack file. Which lines go next,
// how they are batched, what the issuer's answers mean for the ack and when
// the ack no longer describes the log are decided here, so that Go, JS and
// Python keep the same file after the same answers. A host reads files,
// posts, waits and writes what it is told.
//
// The ack file is one line of ASCII, "END DIGEST START\n": the offset where
// the last acknowledged line ends, that line's record_sha256 ("-" when it
// names none: a line the issuer refused as not a record), and the offset it
// begins at. An empty file acknowledges nothing. The queue is the log after
// END, so it is bounded by the log and nothing the issuer did not
// acknowledge is ever dropped.

const (
	// PilotAckBytes bounds an ack file: a longer one is corrupt.
	PilotAckBytes = 128
	// PilotAnswerBytes bounds the issuer's answer to one batch a host reads.
	PilotAnswerBytes = 8 << 20
	// pilotBatchBytes and pilotBatchLines bound one batch, well inside the
	// issuer's 8 MiB and 5,000 records; one record up to pilotRecordBytes
	// (the issuer's bound) goes alone.
	pilotBatchBytes  = 4 << 20
	pilotBatchLines  = 500
	pilotRecordBytes = 8 << 20
)

// The reasons an ack file is set aside (PilotQueue.Reset): the queue starts
// again at the log's first byte and the issuer answers what it holds as
// duplicates.
const (
	PilotAckCorrupt  = "ack_corrupt"   // not the ack file's form
	PilotLogTruncate = "log_truncated" // the log ends before the acknowledged line
	PilotLogRewrite  = "log_rewritten" // the acknowledged line is not in the log where it ended
)

// PilotAnswer is the issuer's HTTP answer to a batch.
type PilotAnswer struct {
	Status int
	Body   string
}

// PilotQueueInput is what a host read: the ack file (HasAck false when
// there is none), the log's size, the window of the log the core asked for
// (HasWindow) and the issuer's answer to the batch that window gives.
type PilotQueueInput struct {
	Ack          string
	HasAck       bool
	LogSize      int64
	Window       string
	WindowOffset int64
	HasWindow    bool
	Answer       *PilotAnswer
}

// PilotQueue is one step's answer; at most one of Read and Batch is set.
type PilotQueue struct {
	Reset        string // why the ack file was set aside ("" when it holds)
	ReadOffset   int64  // with HasRead: the window to read and ask again with
	ReadLength   int64
	HasRead      bool
	BatchOffset  int64 // with Records > 0: the log's bytes to post
	BatchLength  int64
	Records      int
	Ack          string // with HasNewAck: the ack file's new bytes
	HasNewAck    bool
	ErrCode      string // the pass stops here ("" when it does not)
	ErrMessage   string
	Acknowledged int
	More         bool // ask again at once, from a fresh read of the ack file
}

// pilotAck is a parsed ack file.
type pilotAck struct {
	start, end int64
	digest     string // "" for "-"
}

// parsePilotAck reads an ack file's bytes; ok is false when they are not
// its form. An empty file acknowledges nothing (the zero pilotAck).
func parsePilotAck(b string) (a pilotAck, ok bool) {
	if b == "" {
		return a, true
	}
	if len(b) > PilotAckBytes || !strings.HasSuffix(b, "\n") {
		return a, false
	}
	f := strings.Split(strings.TrimSuffix(b, "\n"), " ")
	if len(f) != 3 {
		return a, false
	}
	end, okEnd := offsetOf(f[0])
	start, okStart := offsetOf(f[2])
	if !okEnd || !okStart || start >= end || (f[1] != "-" && !isHexDigest(f[1])) {
		return a, false
	}
	if f[1] != "-" {
		a.digest = f[1]
	}
	a.start, a.end = start, end
	return a, true
}

// offsetOf reads a decimal offset written without sign or leading zeros.
func offsetOf(s string) (int64, bool) {
	if s == "" || len(s) > 18 || (s[0] == '0' && s != "0") || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func isHexDigest(s string) bool {
	return len(s) == 64 && strings.TrimLeft(s, "0123456789abcdef") == ""
}

// lineDigest is the record_sha256 a line names, as the issuer reads it
// ("" when it names none).
func lineDigest(line string) string {
	rec, err := canon.ParseString(line)
	if err != nil {
		return ""
	}
	return recordDigest(rec)
}

// recordDigest is a record's record_sha256 member ("" when it has none).
func recordDigest(rec canon.Value) string {
	named, _ := rec.Get("record_sha256")
	d, _ := named.Str()
	return d
}

// ackLine writes the ack file for the line [start, end) naming digest.
func ackLine(start, end int64, digest string) string {
	if digest == "" {
		digest = "-"
	}
	return strconv.FormatInt(end, 10) + " " + digest + " " + strconv.FormatInt(start, 10) + "\n"
}

// StepPilotQueue answers the next step of an upload pass from what the
// host read. A request that does not add up (a window not where the core
// asked) is an error; everything the log, the ack file and the issuer say
// is an answer.
func StepPilotQueue(in PilotQueueInput) (PilotQueue, error) {
	var q PilotQueue
	ack, ok := parsePilotAck(in.Ack)
	if in.HasAck && !ok {
		return resetPilotAck(PilotAckCorrupt), nil
	}
	if ack.end > in.LogSize {
		return resetPilotAck(PilotLogTruncate), nil
	}
	// The window: the last acknowledged line (to see it is still there),
	// then up to one record's bound of what follows.
	readLen := ack.end - ack.start + min(pilotRecordBytes, in.LogSize-ack.end)
	if !in.HasWindow {
		if readLen > 0 {
			q.ReadOffset, q.ReadLength, q.HasRead = ack.start, readLen, true
		}
		return q, nil
	}
	if in.WindowOffset != ack.start || int64(len(in.Window)) > readLen {
		return q, cerr.New(cerr.BadRequest, "request.window must be the %d bytes of the log from offset %d that read answered (got %d from %d)", readLen, ack.start, len(in.Window), in.WindowOffset)
	}
	w, base := in.Window, ack.end
	if n := ack.end - ack.start; n > 0 {
		if int64(len(w)) < n {
			return resetPilotAck(PilotLogTruncate), nil
		}
		line := w[:n]
		if line[n-1] != '\n' || strings.IndexByte(line[:n-1], '\n') >= 0 || lineDigest(line[:n-1]) != ack.digest {
			return resetPilotAck(PilotLogRewrite), nil
		}
		w = w[n:]
	}
	end, lines := 0, 0
	for end < len(w) && lines < pilotBatchLines {
		i := strings.IndexByte(w[end:], '\n')
		if i < 0 || lines > 0 && end+i+1 > pilotBatchBytes {
			break
		}
		end, lines = end+i+1, lines+1
	}
	if lines == 0 {
		if len(w) >= pilotRecordBytes {
			q.ErrCode = "record_too_large"
			q.ErrMessage = "the record at byte " + strconv.FormatInt(base, 10) + " of the log is over " + strconv.Itoa(pilotRecordBytes) + " bytes, more than the issuer takes: it stays in the log"
		}
		return q, nil // caught up, or a line still being written
	}
	if in.Answer == nil {
		q.BatchOffset, q.BatchLength, q.Records = base, int64(end), lines
		return q, nil
	}
	return answerPilotBatch(w[:end], lines, base, in.LogSize, *in.Answer), nil
}

// resetPilotAck sets the ack file aside: it is rewritten empty and the pass
// starts again from the log's first byte.
func resetPilotAck(why string) PilotQueue {
	return PilotQueue{Reset: why, HasNewAck: true, More: true}
}

// answerPilotBatch reads the issuer's answer to batch (lines whole lines
// from offset base): the lines it answered accepted, duplicate or edited
// are acknowledged (it has judged them, and a refused record stays refused
// when sent again); a chain_gap stops there, since only a person can tell
// why the chain broke; an answer that does not name the batch's records in
// order acknowledges nothing past where it stops naming them.
func answerPilotBatch(batch string, lines int, base, logSize int64, a PilotAnswer) PilotQueue {
	var q PilotQueue
	fail := func(code, msg string) { q.ErrCode, q.ErrMessage = code, msg }
	if a.Status != 200 {
		code := ""
		if v, err := canon.ParseString(a.Body); err == nil {
			c, _ := v.Get("code")
			code, _ = c.Str()
		}
		fail("issuer_status", strings.TrimSpace("the issuer answered HTTP "+strconv.Itoa(a.Status)+" "+textsafe.Escape(code)))
		return q
	}
	v, err := canon.ParseString(a.Body)
	rs, _ := v.Get("results")
	if err != nil || v.Kind() != canon.Object || rs.Kind() != canon.Array {
		why := "not an object with results"
		if err != nil {
			why = cerr.Message(err)
		}
		fail("answer_invalid", "the issuer's answer is not {\"results\": [...]}: "+textsafe.Escape(why))
		return q
	}
	results := rs.Elems()
	if len(results) > lines {
		fail("answer_invalid", "the issuer answered "+strconv.Itoa(len(results))+" results for "+strconv.Itoa(lines)+" records")
		return q
	}
	pos, last, lastStart := 0, "", 0
	for i, r := range results {
		n := strings.IndexByte(batch[pos:], '\n')
		line := batch[pos : pos+n]
		want := lineDigest(line)
		named, _ := r.Get("record_sha256")
		got, isStr := named.Str()
		status, _ := r.Get("status")
		st, _ := status.Str()
		at := strconv.FormatInt(base+int64(pos), 10)
		if got != want || (!isStr && !named.IsNull()) {
			fail("answer_mismatch", "the issuer's result "+strconv.Itoa(i)+" names "+textsafe.Escape(string(canon.Canonical(named)))+", not the record at byte "+at+" of the log")
			break
		}
		if st == "chain_gap" {
			reason, _ := r.Get("reason")
			why, _ := reason.Str()
			fail("chain_gap", "the issuer's chain for this pilot does not lead to the record at byte "+at+" of the log: "+textsafe.Escape(why))
			break
		}
		if st != "accepted" && st != "duplicate" && st != "edited" {
			fail("answer_invalid", "the issuer's result "+strconv.Itoa(i)+" has status "+textsafe.Escape(string(canon.Canonical(status))))
			break
		}
		lastStart, last = pos, want
		pos += n + 1
		q.Acknowledged++
	}
	if q.ErrCode == "" && q.Acknowledged < lines {
		fail("answer_short", "the issuer answered "+strconv.Itoa(q.Acknowledged)+" of "+strconv.Itoa(lines)+" records")
	}
	if q.Acknowledged > 0 {
		q.Ack, q.HasNewAck = ackLine(base+int64(lastStart), base+int64(pos), last), true
	}
	q.More = q.ErrCode == "" && base+int64(len(batch)) < logSize
	return q
}
