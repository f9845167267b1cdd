package preflight

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/internal/atomicfile"
	"github.com/crawlcheck/verifier/internal/boundedread"
	"github.com/crawlcheck/verifier/internal/corecall"
)

// The pilot upload (docs/preflight.md, "The pilot upload"): the records a
// session writes to its log are sent to an issuer's pilot (POST
// /api/v1/pilot/{id}/records) in the background, in batches, retried with
// backoff. The queue is the record log itself: what the issuer has
// acknowledged is kept beside it (PilotAckPath). Which bytes go next, how
// they are batched, what the issuer's answers make of the ack file and when
// it no longer describes the log are the core's pilot_queue; this file
// reads and writes the files, posts and waits.

// Pilot names an issuer's pilot (Config.Pilot).
type Pilot struct {
	URL   string // the issuer's base URL
	ID    string // the pilot id POST /api/v1/pilot answered
	Token string // its bearer token
	// RecordKey is the pilot's record key (the seed POST
	// /api/v1/pilot?record_key=true answered), "" for a pilot made without
	// one: each upload is then signed with it (the core's
	// sign_pilot_upload, in X-Crawlcheck-Pilot-Signature), and the issuer
	// takes no upload to that pilot without it (docs/issuer.md, Trust model).
	RecordKey string
	// Client is the HTTP client of the uploads; nil means
	// http.DefaultClient. Each POST is bounded by its own 30 s deadline.
	Client *http.Client
}

// PilotAckPath is where the acknowledged offset of a record log is kept.
func PilotAckPath(logPath string) string { return logPath + ".pilot-ack" }

// uploadTimeout bounds one POST.
const uploadTimeout = 30 * time.Second

// ErrChainGap is the issuer's answer that a record does not follow what
// the pilot holds: the upload stops there (the records stay in the log),
// and only a person can tell why (an edited record before it, or a log
// replaced by another).
var ErrChainGap = errors.New("pilot: the issuer's chain for this pilot does not lead to the next record")

// queueStep is pilot_queue's answer (docs/abi.md).
type queueStep struct {
	Read *struct {
		Offset, Length int64
	}
	Batch *struct {
		Offset, Length int64
	}
	Ack   *string
	Error *struct {
		Code, Message string
	}
	Acknowledged int
	More         bool
}

// readAck reads the ack file, at most one byte past its bound (the core
// judges it); ok is false when there is none.
func readAck(logPath string) (b []byte, ok bool, err error) {
	f, err := os.Open(PilotAckPath(logPath))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, fmt.Errorf("pilot: the ack file: %w", err)
	}
	defer f.Close()
	b, err = io.ReadAll(io.LimitReader(f, core.PilotAckBytes+1))
	if err != nil {
		return nil, false, fmt.Errorf("pilot: the ack file: %w", err)
	}
	return b, true, nil
}

// UploadPending sends the records of the log the issuer has not
// acknowledged, batch after batch, until none is left (nil), the context
// ends or the issuer cannot take them (an error; the ack file keeps where
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

// uploadBatch runs pilot_queue from a fresh read of the ack file and the
// log until it answers neither a read nor a batch: what it asks for is read
// or posted and handed back. more is the core's: ask again at once.
func uploadBatch(ctx context.Context, p Pilot, logPath string) (int, bool, error) {
	req := map[string]any{}
	if ack, ok, err := readAck(logPath); err != nil {
		return 0, false, err
	} else if ok {
		req["ack"] = corecall.Text(ack)
	}
	f, err := os.Open(logPath)
	if err != nil {
		return 0, false, fmt.Errorf("pilot: the record log: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, false, fmt.Errorf("pilot: the record log: %w", err)
	}
	req["log_size"] = st.Size()
	var window []byte
	var windowAt int64
	for {
		var q queueStep
		if err := corecall.Into("pilot_queue", req, &q); err != nil {
			return 0, false, fmt.Errorf("pilot: %w", err)
		}
		if q.Ack != nil {
			if err := atomicfile.Write(PilotAckPath(logPath), []byte(*q.Ack), 0o600); err != nil {
				return q.Acknowledged, false, fmt.Errorf("pilot: keeping the acknowledged offset: %w", err)
			}
		}
		switch {
		case q.Error != nil && q.Error.Code == "chain_gap":
			return q.Acknowledged, false, fmt.Errorf("%w: %s", ErrChainGap, q.Error.Message)
		case q.Error != nil:
			return q.Acknowledged, false, fmt.Errorf("pilot: %s", q.Error.Message)
		case q.Read != nil:
			window, windowAt = make([]byte, q.Read.Length), q.Read.Offset
			n, err := f.ReadAt(window, windowAt)
			if err != nil && !errors.Is(err, io.EOF) {
				return 0, false, fmt.Errorf("pilot: reading the record log: %w", err)
			}
			window = window[:n]
			req["window_offset"], req["window"] = windowAt, corecall.Text(window)
		case q.Batch != nil:
			at := q.Batch.Offset - windowAt
			status, body, err := post(ctx, p, window[at:at+q.Batch.Length])
			if err != nil {
				return 0, false, err
			}
			req["answer"] = map[string]any{"status": status, "body": corecall.Text(body)}
		default:
			return q.Acknowledged, q.More, nil
		}
	}
}

// post sends one batch and answers the issuer's status and answer.
func post(ctx context.Context, p Pilot, batch []byte) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, uploadTimeout)
	defer cancel()
	u := strings.TrimSuffix(p.URL, "/") + "/api/v1/pilot/" + p.ID + "/records"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(batch))
	if err != nil {
		return 0, nil, fmt.Errorf("pilot: %w", err)
	}
	req.Header.Set("Content-Type", "application/jsonl")
	req.Header.Set("Authorization", "Bearer "+p.Token)
	if p.RecordKey != "" {
		var signed struct{ Signature string }
		if err := corecall.Into("sign_pilot_upload", map[string]any{"private_key": p.RecordKey, "pilot_id": p.ID,
			"records": corecall.Text(batch)}, &signed); err != nil {
			return 0, nil, fmt.Errorf("pilot: signing the upload with the record key: %w", err)
		}
		req.Header.Set("X-Crawlcheck-Pilot-Signature", signed.Signature)
	}
	c := p.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("pilot: the issuer: %w", err)
	}
	defer resp.Body.Close()
	body, err := boundedread.Read(resp.Body, core.PilotAnswerBytes)
	if err != nil {
		return 0, nil, fmt.Errorf("pilot: the issuer's answer: %w", err)
	}
	return resp.StatusCode, body, nil
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
	// MinBackoff and MaxBackoff replace the bounds of the wait between
	// failed tries (0: the core's, 1 s and 5 minutes); how it grows is the
	// core's (pilot_queue's wait). Poll is how often it looks again with
	// nothing kicked.
	MinBackoff, MaxBackoff, Poll time.Duration

	mu  sync.Mutex
	err error
}

// NewUploader makes an uploader of the log at logPath; Start starts it.
func NewUploader(p Pilot, logPath string) *Uploader {
	ctx, cancel := context.WithCancel(context.Background())
	return &Uploader{p: p, logPath: logPath, kick: make(chan struct{}, 1), ctx: ctx, stop: cancel, Poll: time.Minute}
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
		wait, err := u.backoff(failures)
		if err != nil {
			// Bounds the core refuses: no wait can be drawn, so no pass is
			// tried again; Err says why.
			u.mu.Lock()
			u.err = err
			u.mu.Unlock()
			return
		}
		next = time.Now().Add(wait)
	}
}

// backoff draws the wait after failures passes failed in a row within the
// bounds the core answers (pilot_queue's wait): the draw and the clock are
// the host's, the bounds a rule.
func (u *Uploader) backoff(failures int) (time.Duration, error) {
	req := map[string]any{"failed_passes": failures}
	bounds := map[string]any{}
	ms := func(d time.Duration) int64 { return int64((d + time.Millisecond - 1) / time.Millisecond) } // whole, rounded up
	if u.MinBackoff > 0 {
		bounds["min"] = ms(u.MinBackoff)
	}
	if u.MaxBackoff > 0 {
		bounds["max"] = ms(u.MaxBackoff)
	}
	if len(bounds) > 0 {
		req["backoff_ms"] = bounds
	}
	var q struct {
		Wait struct{ Min, Max int64 }
	}
	if err := corecall.Into("pilot_queue", req, &q); err != nil {
		return 0, fmt.Errorf("pilot: the back-off: %w", err)
	}
	return time.Duration(q.Wait.Min+rand.Int64N(q.Wait.Max-q.Wait.Min+1)) * time.Millisecond, nil
}
