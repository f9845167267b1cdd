package preflight

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crawlcheck/verifier/internal/atomicfile"
	"github.com/crawlcheck/verifier/internal/boundedread"
)

// The pilot upload (docs/preflight.md, "The pilot"): the records a session
// writes to its log are sent to an issuer's pilot (POST
// /api/v1/pilot/{id}/records) in the background, in batches, retried with
// backoff. The queue is the record log itself: what the issuer has
// acknowledged is kept beside it (PilotAckPath) as the byte offset the
// acknowledged lines end at, so the queue is bounded by the log, a record
// not acknowledged is never dropped, and a restart resumes where the
// issuer's answers stopped (a line sent twice is the issuer's duplicate,
// never an error). The issuer judges every line (the core's pilot_batch);
// this file moves bytes and keeps an offset.

// Pilot names an issuer's pilot (Config.Pilot).
type Pilot struct {
	URL   string // the issuer's base URL
	ID    string // the pilot id POST /api/v1/pilot answered
	Token string // its bearer token
	// Client is the HTTP client of the uploads; nil means
	// http.DefaultClient. Each POST is bounded by its own 30 s deadline.
	Client *http.Client
}

// PilotAckPath is where the acknowledged offset of a record log is kept.
func PilotAckPath(logPath string) string { return logPath + ".pilot-ack" }

// The ack file is one line of ASCII: the offset in bytes where the last
// line the issuer answered ends, a space, and that line's record_sha256
// (for a person reading it): "12345 <64 hex>\n".

const (
	// maxUploadBytes and maxUploadLines bound one batch, well inside the
	// issuer's 8 MiB and 5,000 records; a single record up to
	// maxRecordBytes (the issuer's bound) goes alone.
	maxUploadBytes = 4 << 20
	maxUploadLines = 500
	maxRecordBytes = 8 << 20
	// maxPilotAnswer bounds the issuer's answer: one result a line.
	maxPilotAnswer = 8 << 20
	// uploadTimeout bounds one POST.
	uploadTimeout = 30 * time.Second
)

// ErrChainGap is the issuer's answer that a record does not follow what
// the pilot holds: the upload stops there (the records stay in the log),
// and only a person can tell why (an edited record before it, or a log
// replaced by another).
var ErrChainGap = errors.New("pilot: the issuer's chain for this pilot does not lead to the next record")

// readAck reads the acknowledged offset (0 when none or unreadable: a line
// sent again is a duplicate).
func readAck(logPath string) int64 {
	b, err := boundedread.ReadFile(PilotAckPath(logPath), 256, time.Second)
	if err != nil {
		return 0
	}
	off, err := strconv.ParseInt(strings.Fields(string(b) + " ")[0], 10, 64)
	if err != nil || off < 0 {
		return 0
	}
	return off
}

// UploadPending sends the records of the log the issuer has not
// acknowledged, batch after batch, until none is left (nil), the context
// ends or the issuer cannot take them (an error; the offset kept is where
// its answers stopped). It answers how many lines were acknowledged.
func UploadPending(ctx context.Context, p Pilot, logPath string) (int, error) {
	done := 0
	for {
		n, more, err := uploadBatch(ctx, p, logPath)
		done += n
		if err != nil || !more {
			return done, err
		}
	}
}

// uploadBatch sends one batch from the acknowledged offset; more is true
// when lines remain after it.
func uploadBatch(ctx context.Context, p Pilot, logPath string) (int, bool, error) {
	off := readAck(logPath)
	f, err := os.Open(logPath)
	if err != nil {
		return 0, false, fmt.Errorf("pilot: the record log: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, false, fmt.Errorf("pilot: the record log: %w", err)
	}
	if st.Size() < off {
		off = 0 // the log was replaced: send it all, the issuer answers duplicates
	}
	buf := make([]byte, min(st.Size()-off, maxRecordBytes))
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, false, fmt.Errorf("pilot: reading the record log: %w", err)
	}
	buf = buf[:n]
	end, lines := 0, 0
	for end < len(buf) && lines < maxUploadLines {
		i := bytes.IndexByte(buf[end:], '\n')
		if i < 0 || lines > 0 && end+i+1 > maxUploadBytes {
			break
		}
		end, lines = end+i+1, lines+1
	}
	if lines == 0 && len(buf) == maxRecordBytes {
		return 0, false, fmt.Errorf("pilot: the record at byte %d of the log is over %d bytes, more than the issuer takes: it stays in the log", off, maxRecordBytes)
	}
	if lines == 0 {
		return 0, false, nil // caught up (or a line still being written)
	}
	batch := buf[:end]
	more := off+int64(end) < st.Size()
	results, err := post(ctx, p, batch)
	if err != nil {
		return 0, false, err
	}
	acked, pos, last := 0, 0, ""
	var gap error
	for _, r := range results {
		i := bytes.IndexByte(batch[pos:], '\n')
		if i < 0 {
			break
		}
		if r.Status == "chain_gap" {
			gap = fmt.Errorf("%w: %s", ErrChainGap, r.Reason)
			break
		}
		pos, acked = pos+i+1, acked+1
		last = r.RecordSHA256
	}
	if acked > 0 {
		ack := strconv.FormatInt(off+int64(pos), 10) + " " + last + "\n"
		if err := atomicfile.Write(PilotAckPath(logPath), []byte(ack), 0o600); err != nil {
			return acked, false, fmt.Errorf("pilot: keeping the acknowledged offset: %w", err)
		}
	}
	if gap != nil {
		return acked, false, gap
	}
	if acked < lines {
		return acked, false, fmt.Errorf("pilot: the issuer answered %d of %d records", acked, lines)
	}
	return acked, more, nil
}

type pilotResult struct {
	RecordSHA256 string `json:"record_sha256"`
	Status       string `json:"status"`
	Reason       string `json:"reason"`
}

// post sends one batch and answers the issuer's results.
func post(ctx context.Context, p Pilot, batch []byte) ([]pilotResult, error) {
	ctx, cancel := context.WithTimeout(ctx, uploadTimeout)
	defer cancel()
	u := strings.TrimSuffix(p.URL, "/") + "/api/v1/pilot/" + p.ID + "/records"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(batch))
	if err != nil {
		return nil, fmt.Errorf("pilot: %w", err)
	}
	req.Header.Set("Content-Type", "application/jsonl")
	req.Header.Set("Authorization", "Bearer "+p.Token)
	c := p.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("pilot: the issuer: %w", err)
	}
	defer resp.Body.Close()
	body, err := boundedread.Read(resp.Body, maxPilotAnswer)
	if err != nil {
		return nil, fmt.Errorf("pilot: the issuer's answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var pr struct{ Code string }
		json.Unmarshal(body, &pr)
		return nil, fmt.Errorf("pilot: the issuer answered HTTP %d %s", resp.StatusCode, pr.Code)
	}
	var a struct{ Results []pilotResult }
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("pilot: the issuer's answer: %w", err)
	}
	return a.Results, nil
}

// Uploader uploads a record log in the background: Kick after each record,
// Close when done. It never blocks the caller and never fails a session:
// what it could not send waits in the log for the next try (Err says why).
type Uploader struct {
	p       Pilot
	logPath string
	kick    chan struct{}
	stop    context.CancelFunc
	ctx     context.Context
	wg      sync.WaitGroup
	// Backoff bounds the wait between failed tries (doubling from the
	// first, with jitter); Poll is how often it looks again with nothing
	// kicked.
	MinBackoff, MaxBackoff, Poll time.Duration

	mu  sync.Mutex
	err error
}

// NewUploader makes an uploader of the log at logPath; Start starts it.
func NewUploader(p Pilot, logPath string) *Uploader {
	ctx, cancel := context.WithCancel(context.Background())
	return &Uploader{p: p, logPath: logPath, kick: make(chan struct{}, 1), ctx: ctx, stop: cancel,
		MinBackoff: time.Second, MaxBackoff: 5 * time.Minute, Poll: time.Minute}
}

// Start runs the upload loop.
func (u *Uploader) Start() {
	u.wg.Add(1)
	go u.loop()
}

// Kick says a record was appended; it never blocks.
func (u *Uploader) Kick() {
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// Err is the last try's error (nil when the issuer holds every record).
func (u *Uploader) Err() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err
}

// Close stops the loop, abandoning a batch in flight (it is sent again).
func (u *Uploader) Close() {
	u.stop()
	u.wg.Wait()
}

func (u *Uploader) loop() {
	defer u.wg.Done()
	next, failures := time.Now(), 0
	for {
		timer := time.NewTimer(time.Until(next))
		select {
		case <-u.ctx.Done():
			timer.Stop()
			return
		case <-u.kick:
			timer.Stop()
			if failures > 0 && time.Now().Before(next) {
				continue // a kick does not cut a backoff short: the issuer asked for room
			}
		case <-timer.C:
		}
		_, err := UploadPending(u.ctx, u.p, u.logPath)
		if u.ctx.Err() != nil {
			return
		}
		u.mu.Lock()
		u.err = err
		u.mu.Unlock()
		if err == nil {
			next, failures = time.Now().Add(u.Poll), 0
			continue
		}
		failures++
		d := u.MinBackoff << min(failures-1, 20)
		if d > u.MaxBackoff || d <= 0 {
			d = u.MaxBackoff
		}
		next = time.Now().Add(d/2 + rand.N(d/2+1))
	}
}
