// Package sweep is the issuer's registry sweep (issue 20, docs/issuer.md):
// operators, and pilots for their own servers, register MCP endpoints; the
// sweep re-reads each on a schedule and records when its tool surface
// changes. A pilot's weekly report (internal/report) puts what the sweep
// saw beside what the pilot's agents met.
//
// How it reads, and why so:
//
//   - Through the service's own fetcher (internal/issuer/fetch): the SSRF
//     dialer checks every address dialled, redirects stay on the origin,
//     every answer and page is bounded, and each reading has a deadline.
//     A registered URL is a stranger's URL read on a schedule forever.
//   - On a schedule with jitter: each endpoint is due again at its interval
//     times a random factor in [1-Jitter, 1+Jitter], so endpoints registered
//     together do not stay in step and no server sees the sweep at a fixed
//     time.
//   - With bounded concurrency (Concurrency hosts at once) and per-host
//     politeness: the readings of one host are at least HostGap apart,
//     whoever registered its endpoints and whichever instance reads them
//     (each reading reserves its slot in the store, SweepHostSlot).
//   - Claimed in the store (SweepClaim), so several instances sharing a
//     database read each due endpoint once.
//   - Each distinct surface (the tools/list pages of one whole reading) is
//     stored once, by the SHA-256 of its bytes; a change event is recorded
//     when the tools differ from the last whole reading, with what the core
//     says changed (diff: added, removed, modified with their word diffs)
//     and the core's approval scan of the tools added or modified. A reading
//     that fails keeps the last surface, so the next whole one is compared
//     with what was last read whole. A surface whose bytes differ but whose
//     tools the core finds equal (a member order, a page boundary) is stored
//     and no change is recorded.
//   - The server's instructions, from the handshake of each reading, are
//     kept the same way: each distinct text once by the digest the core
//     gives it (instructions_diff; a server that gives none has the
//     instructions null, a state of its own, so instructions appearing or
//     going away is a change), and an instructions change event carries
//     the core's word diff and its scan of the new text. A handshake the
//     core cannot read keeps the last instructions, as a failed reading
//     keeps the last surface.
package sweep

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/url"
	"sync"
	"time"

	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/issuer/fetch"
	"github.com/crawlcheck/verifier/internal/issuer/metrics"
	"github.com/crawlcheck/verifier/internal/issuer/store"
)

// Defaults of Config.
const (
	DefaultInterval    = 6 * time.Hour
	DefaultJitter      = 0.1
	DefaultConcurrency = 4
	DefaultHostGap     = 30 * time.Second
	DefaultReadLimit   = 10 * time.Second
	DefaultPoll        = 10 * time.Second
	// MinInterval is the shortest interval an endpoint may be registered
	// with: the sweep is a registry, not a monitor of one server.
	MinInterval = time.Minute
)

// OwnerOperator is the owner of an endpoint the operator registered.
const OwnerOperator = "operator"

// Config configures a Sweeper.
type Config struct {
	Store store.SweepStore
	Fetch *fetch.Fetcher // the endpoints pilots registered: public addresses only
	// OperatorFetch reads the endpoints the operator registered, with its
	// --allow-private ranges (F12: a pilot's endpoint never reaches them);
	// nil: Fetch reads those too.
	OperatorFetch *fetch.Fetcher
	Now           func() time.Time // default time.Now
	Jitter        float64          // default DefaultJitter; 0 < Jitter < 1
	Concurrency   int              // hosts read at once; default DefaultConcurrency
	HostGap       time.Duration    // between two reads of one host; default DefaultHostGap
	ReadLimit     time.Duration    // one reading; default DefaultReadLimit
	Poll          time.Duration    // how often Run looks for due endpoints; default DefaultPoll
	Rand          func() float64   // in [0, 1): the jitter's source; default math/rand/v2
	Logger        *log.Logger      // default: discard
	// Metrics, when set, counts the readings by result
	// (crawlcheck_issuer_sweep_readings_total: unchanged, changed, first,
	// or the failure) beside the service's own series.
	Metrics *metrics.Registry
}

// readingsTotal is the sweep's counter in Config.Metrics.
const readingsTotal = "crawlcheck_issuer_sweep_readings_total"

// Sweeper re-reads the registered endpoints.
type Sweeper struct {
	cfg Config
}

// New makes a sweeper.
func New(cfg Config) (*Sweeper, error) {
	if cfg.Store == nil || cfg.Fetch == nil {
		return nil, errors.New("sweep: Store and Fetch are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Jitter <= 0 || cfg.Jitter >= 1 {
		cfg.Jitter = DefaultJitter
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.HostGap < 0 {
		cfg.HostGap = 0
	} else if cfg.HostGap == 0 {
		cfg.HostGap = DefaultHostGap
	}
	if cfg.ReadLimit <= 0 {
		cfg.ReadLimit = DefaultReadLimit
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	if cfg.Logger == nil {
		cfg.Logger = log.New(io.Discard, "", 0)
	}
	if cfg.Metrics != nil {
		cfg.Metrics.Counter(readingsTotal, "Registry sweep readings by result.", "result")
	}
	return &Sweeper{cfg: cfg}, nil
}

// Register adds an endpoint for owner (OwnerOperator, or "pilot:<id>"),
// re-read every interval (0: DefaultInterval). A URL the fetcher would not
// read is refused now rather than failing at every reading. A new endpoint
// is due at once.
func (s *Sweeper) Register(ctx context.Context, endpoint, owner string, interval time.Duration) error {
	return s.RegisterWithin(ctx, endpoint, owner, interval, 0)
}

// RegisterWithin is Register for an owner that may have at most limit
// endpoints (0: no bound): one more is store.ErrOwnerFull, decided by the
// store in the insert, so registrations at once cannot pass it together.
func (s *Sweeper) RegisterWithin(ctx context.Context, endpoint, owner string, interval time.Duration, limit int) error {
	if err := s.cfg.Fetch.Check(endpoint); err != nil {
		return err
	}
	if interval == 0 {
		interval = DefaultInterval
	}
	if interval < MinInterval {
		return fmt.Errorf("sweep: an interval of %s (at least %s)", interval, MinInterval)
	}
	if owner == "" {
		return errors.New("sweep: an endpoint is registered by someone (operator, or pilot:<id>)")
	}
	now := s.cfg.Now().UTC()
	e := store.SweepEndpoint{URL: endpoint, Owner: owner, Interval: interval, Added: now, Next: now}
	if limit > 0 {
		return s.cfg.Store.SweepRegisterWithin(ctx, e, limit)
	}
	return s.cfg.Store.SweepRegister(ctx, e)
}

// Run sweeps until ctx is done: every Poll, the due endpoints are read.
func (s *Sweeper) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	for {
		if _, err := s.Once(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Printf("sweep: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Once claims the endpoints due now and reads them: the hosts at most
// Concurrency at once, one host's endpoints one after the other HostGap
// apart. It answers how many were read.
func (s *Sweeper) Once(ctx context.Context) (int, error) {
	now := s.cfg.Now().UTC()
	limit := s.cfg.Concurrency * 8
	// The lease covers a pass of this instance's own queue; a crashed
	// instance's claims come due again after it. The wait for a host's slot
	// also counts every other instance's readings of the host, which this
	// one cannot see, so each claim is renewed once its slot has come
	// (read): a claim that lapsed meanwhile is another's, and is not read.
	lease := now.Add(time.Duration(limit) * (s.cfg.HostGap + s.cfg.ReadLimit))
	due, err := s.cfg.Store.SweepClaim(ctx, now, lease, limit)
	if err != nil || len(due) == 0 {
		return 0, err
	}
	byHost := map[string][]store.SweepEndpoint{}
	var hosts []string
	for _, e := range due {
		h := hostOf(e.URL)
		if _, ok := byHost[h]; !ok {
			hosts = append(hosts, h)
		}
		byHost[h] = append(byHost[h], e)
	}
	sem := make(chan struct{}, s.cfg.Concurrency)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	read := 0
	for _, h := range hosts {
		wg.Add(1)
		sem <- struct{}{}
		go func(h string, es []store.SweepEndpoint) {
			defer wg.Done()
			defer func() { <-sem }()
			for _, e := range es {
				if err := s.wait(ctx, h); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				held, err := s.renew(ctx, e.URL, lease)
				if err != nil || !held {
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					}
					mu.Unlock()
					continue
				}
				err = s.sweepOne(ctx, e)
				mu.Lock()
				read++
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		}(h, byHost[h])
	}
	wg.Wait()
	return read, errors.Join(errs...)
}

// renew moves an endpoint's claim from lease to cover its reading now
// (ReadLimit, then as long again to record it), and says whether it is
// still this instance's to read.
func (s *Sweeper) renew(ctx context.Context, url string, lease time.Time) (bool, error) {
	held, err := s.cfg.Store.SweepRenew(ctx, url, lease, s.cfg.Now().UTC().Add(2*s.cfg.ReadLimit))
	if err == nil && !held {
		s.cfg.Logger.Printf("sweep %s: its claim lapsed while it waited for its host; another instance reads it", url)
	}
	return held, err
}

// wait holds a host's next reading until the slot the store reserves for
// it, HostGap after the last reading of the host by any instance; an error
// when the store cannot reserve one or ctx ended first.
func (s *Sweeper) wait(ctx context.Context, host string) error {
	if s.cfg.HostGap == 0 {
		return ctx.Err()
	}
	now := s.cfg.Now().UTC()
	start, err := s.cfg.Store.SweepHostSlot(ctx, host, now, s.cfg.HostGap)
	if err != nil {
		return err
	}
	if d := start.Sub(now); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return ctx.Err()
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Hostname()
}

// next is when an endpoint read at t is due again: its interval with jitter.
func (s *Sweeper) next(t time.Time, interval time.Duration) time.Time {
	f := 1 + s.cfg.Jitter*(2*s.cfg.Rand()-1)
	return t.Add(time.Duration(float64(interval) * f))
}

// sweepOne reads one endpoint and records what it read.
func (s *Sweeper) sweepOne(ctx context.Context, e store.SweepEndpoint) error {
	rctx, cancel := context.WithTimeout(ctx, s.cfg.ReadLimit)
	f := s.cfg.Fetch
	if e.Owner == OwnerOperator && s.cfg.OperatorFetch != nil {
		f = s.cfg.OperatorFetch
	}
	rd := f.Read(rctx, e.URL)
	cancel()
	at := s.cfg.Now().UTC()
	r := store.SweepReading{At: at, Next: s.next(at, e.Interval)}
	switch {
	case rd.Refused != nil:
		r.Error = "refused: " + rd.Refused.Error()
	case rd.Failure != "":
		r.Error = rd.Failure + ": " + rd.FailureDetail
	case rd.PageCapReached:
		r.Error = "tool_list_truncated: the list is longer than the page cap"
	default:
		body, err := json.Marshal(map[string]any{"pages": rd.Pages})
		if err != nil {
			return fmt.Errorf("sweep %s: %w", e.URL, err)
		}
		var h struct {
			Truncated *string `json:"truncated"`
		}
		if err := corecall.Into("hash_tools", map[string]any{"pages": rd.Pages}, &h); err != nil {
			r.Error = "response_malformed: " + err.Error()
			break
		}
		if h.Truncated != nil {
			r.Error = "tool_list_truncated: " + *h.Truncated
			break
		}
		sum := sha256.Sum256(body)
		r.Surface, r.Body = hex.EncodeToString(sum[:]), body
		if e.Surface != "" && e.Surface != r.Surface {
			change, err := s.change(ctx, e, r)
			if err != nil {
				return fmt.Errorf("sweep %s: %w", e.URL, err)
			}
			r.Change = change
		}
	}
	if rd.HandshakeResult != nil {
		if err := s.instructions(ctx, e, &r, rd.HandshakeResult); err != nil {
			return fmt.Errorf("sweep %s: %w", e.URL, err)
		}
	}
	if err := s.cfg.Store.SweepRecord(ctx, e.URL, r); err != nil {
		return err
	}
	if s.cfg.Metrics != nil {
		s.cfg.Metrics.Inc(readingsTotal, resultOf(e, r))
	}
	if r.Error != "" {
		s.cfg.Logger.Printf("sweep %s: %s", e.URL, r.Error)
	}
	return nil
}

// change is the change event from the endpoint's last surface to r's, nil
// when the core finds the tools equal.
func (s *Sweeper) change(ctx context.Context, e store.SweepEndpoint, r store.SweepReading) (*store.SweepChange, error) {
	old, err := s.cfg.Store.SweepSurface(ctx, e.Surface)
	if err != nil {
		return nil, err
	}
	diff, err := corecall.Call("diff", map[string]any{"old": corecall.Text(old), "new": corecall.Text(r.Body)})
	if err != nil {
		return nil, fmt.Errorf("the core's diff: %w", err)
	}
	var d struct {
		Added    []string `json:"added"`
		Removed  []string `json:"removed"`
		Modified []struct {
			Name string `json:"name"`
		} `json:"modified"`
	}
	if err := json.Unmarshal(diff, &d); err != nil {
		return nil, fmt.Errorf("the core's diff: %w", err)
	}
	if len(d.Added)+len(d.Removed)+len(d.Modified) == 0 {
		return nil, nil
	}
	names := append([]string{}, d.Added...)
	for _, m := range d.Modified {
		names = append(names, m.Name)
	}
	var pages struct {
		Pages json.RawMessage `json:"pages"`
	}
	if err := json.Unmarshal(r.Body, &pages); err != nil {
		return nil, err
	}
	scan := json.RawMessage("null")
	if len(names) > 0 {
		if scan, err = corecall.Call("scan", map[string]any{"pages": pages.Pages, "names": names}); err != nil {
			return nil, fmt.Errorf("the core's scan: %w", err)
		}
	}
	// The detail is the core's bytes, as every answer it holds: its two
	// answers joined and canonicalized by the core (RFC 8785), not
	// re-encoded by encoding/json (which escapes <, > and & its own way).
	var detail struct {
		Canonical string `json:"canonical"`
	}
	joined := append(append(append(append([]byte(`{"diff":`), diff...), `,"scan":`...), scan...), '}')
	if err := corecall.Into("canonicalize", map[string]any{"json": corecall.Text(joined)}, &detail); err != nil {
		return nil, fmt.Errorf("the core's canonicalize: %w", err)
	}
	return &store.SweepChange{URL: e.URL, SeenAt: r.At, From: e.Surface, To: r.Surface, Detail: []byte(detail.Canonical)}, nil
}

// instructions puts the handshake's instructions on r, and their change
// event when they differ from the endpoint's last: both the core's answer
// (instructions_diff), kept as it wrote it.
func (s *Sweeper) instructions(ctx context.Context, e store.SweepEndpoint, r *store.SweepReading, handshake []byte) error {
	req := map[string]any{"handshake_result": corecall.Page(handshake)}
	if e.Instructions != "" {
		old, err := s.cfg.Store.SweepInstructions(ctx, e.Instructions)
		if err != nil {
			return err
		}
		req["old"] = corecall.Text(old)
	}
	answer, err := corecall.Call("instructions_diff", req)
	if err != nil {
		return fmt.Errorf("the core's instructions_diff: %w", err)
	}
	var d struct {
		InstructionsJSON *string `json:"instructions_json"`
		SHA256           *string `json:"sha256"`
		Malformed        *string `json:"malformed"`
		Changed          bool    `json:"changed"`
	}
	if err := json.Unmarshal(answer, &d); err != nil {
		return fmt.Errorf("the core's instructions_diff: %w", err)
	}
	if d.Malformed != nil || d.SHA256 == nil || d.InstructionsJSON == nil {
		s.cfg.Logger.Printf("sweep %s: the handshake's instructions cannot be read; the last are kept", e.URL)
		return nil
	}
	r.Instructions, r.InstructionsBody = *d.SHA256, []byte(*d.InstructionsJSON)
	if d.Changed {
		r.InstructionsChange = &store.SweepChange{Kind: store.ChangeInstructions, URL: e.URL, SeenAt: r.At, From: e.Instructions, To: *d.SHA256, Detail: answer}
	}
	return nil
}

// resultOf is a reading's metrics label: a fixed name, never text from the
// server.
func resultOf(e store.SweepEndpoint, r store.SweepReading) string {
	switch {
	case r.Change != nil || r.InstructionsChange != nil:
		return "changed"
	case r.Surface != "" && e.Surface == "":
		return "first"
	case r.Surface != "":
		return "unchanged"
	}
	for _, f := range []string{"refused", "server_unavailable", "check_timeout", "answer_too_large", "tool_list_truncated", "response_malformed"} {
		if len(r.Error) >= len(f) && r.Error[:len(f)] == f {
			return f
		}
	}
	return "failed"
}
