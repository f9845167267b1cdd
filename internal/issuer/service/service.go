// Package service is crawlcheck-issuer's HTTP API (docs/issuer.md): signed
// lockfiles of a live server or of tools sent, signed lock checks and
// preflight decisions, their replay, the rule tables, the key directory,
// resigning after a rotation, and the operational endpoints (/healthz,
// /readyz, /metrics, the OpenAPI document).
//
// Every answer is computed and signed by the core's ops (core.Call): the
// service adds what a service has and nothing more — transport, storage
// (package store: every nonce before a receipt leaves, every lockfile and
// receipt by digest), a clock, keys (package keys) and randomness (nonces).
// What a live server says is read by package fetch, under the operator's
// policy. Faults is the one seam the test issuer (hosttest/issuer) uses to
// misbehave; crawlcheck-issuer never sets it.
package service

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/internal/issuer/fetch"
	"github.com/crawlcheck/verifier/internal/issuer/keys"
	"github.com/crawlcheck/verifier/internal/issuer/metrics"
	"github.com/crawlcheck/verifier/internal/issuer/store"
	"github.com/crawlcheck/verifier/internal/issuer/tlog"
	"github.com/crawlcheck/verifier/internal/jsonframe"
)

//go:embed openapi.json
var openapiFS embed.FS

// OpenAPI is the OpenAPI 3.1 document served at /api/v1/openapi.json.
func OpenAPI() []byte {
	b, err := openapiFS.ReadFile("openapi.json")
	if err != nil {
		panic("service: the embedded OpenAPI document: " + err.Error())
	}
	return b
}

// KeySource is where the signing key and the served directory come from
// (keys.Live for the real service; fixed test keys for the test issuer).
type KeySource interface {
	Signer(now time.Time) (keys.Signer, error)
	Directory(now time.Time) (json.RawMessage, error)
	// History is a directory listing every key the issuer ever signed
	// with as active: what a resign checks the old signature against.
	History() (json.RawMessage, error)
	Issuer() (string, error)
}

// Envelope is what a receipt is issued with besides its inputs.
type Envelope struct {
	Key      keys.Signer
	IssuedAt time.Time
	Nonce    string
	Subject  string
}

// Faults makes the service misbehave on purpose: the test issuer's knobs.
type Faults interface {
	// Wrap wraps the /api/ handler (down, hang, garbage, redirect).
	Wrap(api http.Handler) http.Handler
	// Envelope changes a receipt's envelope before it is signed (another
	// key, a late issue time, a reused nonce, another subject). The store
	// records the nonce drawn, not one Envelope puts in its place, with the
	// receipt before it is answered.
	Envelope(e *Envelope)
}

// Config configures the service.
type Config struct {
	Keys  KeySource
	Store store.Store
	Fetch *fetch.Fetcher // every reading but the operator's: public addresses only
	// OperatorFetch reads for the operator's token alone: the fetcher with
	// the operator's --allow-private ranges (F12: never for a tenant or an
	// anonymous client, or the service is their way into its own network).
	// nil: the operator reads with Fetch too.
	OperatorFetch *fetch.Fetcher
	Lifetime      time.Duration // receipts are valid this long; default 5 minutes
	Deadline      time.Duration // every request's deadline; default 30 seconds
	ReadLimit     time.Duration // reading a live server; default 10 seconds (within Deadline)
	MaxBody       int64         // request body bound; default core.MaxRequestBytes
	// MaxPilotRecords and MaxPilotBytes are each pilot's quota of records
	// kept and of their bytes; PilotBytesPerHour bounds the bytes a pilot
	// uploads an hour (quota.go). Defaults DefaultMaxPilotRecords,
	// DefaultMaxPilotBytes, DefaultPilotBytesPerHour.
	MaxPilotRecords   int64
	MaxPilotBytes     int64
	PilotBytesPerHour int64
	// MaxLockTools and MaxLockBody bound a lockfile the service makes
	// (lockbounds.go); defaults DefaultMaxLockTools, DefaultMaxLockBody.
	MaxLockTools int
	MaxLockBody  int64
	// RatePerSecond and RateBurst limit each client (by remote address) on
	// the endpoints that read a live server; default 5/s, burst 20.
	RatePerSecond float64
	RateBurst     int
	// ReadBytesPerMinute is what one client's live readings may take of
	// servers' answers a minute (readbudget.go), MaxReadings the live
	// readings at once; defaults DefaultReadBytesPerMinute,
	// DefaultMaxReadings.
	ReadBytesPerMinute int64
	MaxReadings        int
	Now                func() time.Time // default time.Now
	Logger             *log.Logger      // default: discard
	// MaxReportRecords bounds the records one pilot report reads; default
	// 200,000. A report over more says it is cut (records_cut).
	MaxReportRecords int
	// MaxReportBytes bounds the bytes of the records one report reads
	// (records_cut past it), MaxReportChanges the sweep's change events it
	// reads of one endpoint, MaxReports the reports computed at once (429
	// past it); report.go. Defaults defaultMaxReportBytes,
	// defaultMaxReportChanges, defaultMaxReports.
	MaxReportBytes   int64
	MaxReportChanges int
	MaxReports       int
	// OperatorTokenSHA256 is the hex SHA-256 of the operator's bearer
	// token, the one credential that may publish a correction (POST
	// /api/v1/corrections). Empty: no correction is taken. The token itself
	// is never held, so a copy of the service's disk or memory cannot write
	// into its log.
	OperatorTokenSHA256 string
	// TenantTokens maps a tenant id to the hex SHA-256 of its token
	// (cctt.<id>.<secret>, drawn by crawlcheck-issuer tenant-token): a
	// tenant may have the tools it hands over signed, as submitted by it
	// (docs/issuer.md, Trust model). Only hashes are held.
	TenantTokens map[string]string
	// AnonymousLocks lets a client without a credential have a lockfile
	// signed of a server the service reads itself (GET /api/v1/mcp/lock,
	// provenance observed by anonymous). Off by default: least privilege.
	AnonymousLocks bool
	Faults         Faults
}

// skew is the clock skew guard allows past expires_at (docs/receipts.md):
// a nonce is kept that much longer than its receipt is valid.
const skew = 5 * time.Minute

// Service is the issuer's HTTP API.
type Service struct {
	cfg     Config
	keyring core.Keyring // the signing keys, derived once (signResult)
	api     *http.ServeMux
	metrics *metrics.Registry
	rules   []byte
	log     *tlog.Log // the transparency log (log.go); nil when the store keeps none

	limiters limiters      // ratelimit.go
	reports  chan struct{} // the reports computed now (report.go), at most MaxReports
	readings chan struct{} // the live readings now (readbudget.go), at most MaxReadings

	commits  committer // commit.go
	lockURLs lockURLs
	inputs   recentInputs     // receipts' inputs, stored once (shared.go)
	framed   jsonframe.Recent // the large members of the requests lately (readRequest)
}

// Metrics is the service's metrics registry (GET /metrics), for the parts
// of the issuer that run beside it (the registry sweep).
func (s *Service) Metrics() *metrics.Registry { return s.metrics }

// New makes the service; the rule tables are recorded in the store.
func New(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.Keys == nil || cfg.Store == nil || cfg.Fetch == nil {
		return nil, errors.New("service: Keys, Store and Fetch are required")
	}
	if cfg.Lifetime == 0 {
		cfg.Lifetime = 5 * time.Minute
	}
	if cfg.Deadline == 0 {
		cfg.Deadline = 30 * time.Second
	}
	if cfg.ReadLimit == 0 {
		cfg.ReadLimit = 10 * time.Second
	}
	if cfg.MaxReportRecords <= 0 {
		cfg.MaxReportRecords = defaultMaxReportRecords
	}
	if cfg.MaxBody == 0 {
		cfg.MaxBody = core.MaxRequestBytes
	}
	if cfg.ReadBytesPerMinute <= 0 {
		cfg.ReadBytesPerMinute = DefaultReadBytesPerMinute
	}
	if cfg.MaxReadings <= 0 {
		cfg.MaxReadings = DefaultMaxReadings
	}
	if cfg.MaxReportBytes <= 0 {
		cfg.MaxReportBytes = defaultMaxReportBytes
	}
	if cfg.MaxReportChanges <= 0 {
		cfg.MaxReportChanges = defaultMaxReportChanges
	}
	if cfg.MaxReports <= 0 {
		cfg.MaxReports = defaultMaxReports
	}
	if cfg.MaxPilotRecords <= 0 {
		cfg.MaxPilotRecords = DefaultMaxPilotRecords
	}
	if cfg.MaxPilotBytes <= 0 {
		cfg.MaxPilotBytes = DefaultMaxPilotBytes
	}
	if cfg.PilotBytesPerHour <= 0 {
		cfg.PilotBytesPerHour = DefaultPilotBytesPerHour
	}
	if cfg.MaxLockTools <= 0 {
		cfg.MaxLockTools = DefaultMaxLockTools
	}
	if cfg.MaxLockBody <= 0 {
		cfg.MaxLockBody = min(DefaultMaxLockBody, cfg.MaxBody)
	}
	if cfg.RatePerSecond == 0 {
		cfg.RatePerSecond, cfg.RateBurst = 5, 20
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = log.New(io.Discard, "", 0)
	}
	s := &Service{cfg: cfg, api: http.NewServeMux(), metrics: metrics.New(), reports: make(chan struct{}, cfg.MaxReports), readings: make(chan struct{}, cfg.MaxReadings)}
	s.metrics.Counter("crawlcheck_issuer_requests_total", "Requests by endpoint and HTTP status.", "endpoint", "status")
	s.metrics.Histogram("crawlcheck_issuer_request_duration_seconds", "Request latency by endpoint and HTTP status.", "endpoint", "status")
	s.metrics.Counter("crawlcheck_issuer_fetches_total", "Readings of live servers by result.", "result")
	s.metrics.Histogram("crawlcheck_issuer_store_duration_seconds", "Store latency by operation and result.", "op", "result")
	s.metrics.Counter("crawlcheck_issuer_signed_total", "Documents signed by kind.", "kind")
	var rules struct {
		RulesSHA256 string `json:"rules_sha256"`
	}
	res, err := coreResult("rules", []byte(`{}`))
	if err == nil {
		err = json.Unmarshal(res, &rules)
	}
	if err != nil {
		return nil, fmt.Errorf("service: the core's rules: %w", err)
	}
	s.rules = res
	if err := s.timed("put_rules", func() error { return cfg.Store.PutRules(ctx, rules.RulesSHA256, res) }); err != nil {
		return nil, err
	}
	if s.log, err = s.openLog(); err != nil {
		return nil, fmt.Errorf("service: the log: %w", err)
	}
	s.routes()
	return s, nil
}

// Handle adds a route to the API (under /api/), with the same deadline,
// body bound, metrics and faults as every other.
func (s *Service) Handle(pattern, name string, h http.HandlerFunc) {
	s.api.Handle(pattern, s.instrument(name, h))
}

func (s *Service) routes() {
	s.Handle("GET /api/v1/mcp/lock", "lock_url", s.lockByURL)
	s.Handle("POST /api/v1/mcp/lock", "lock_tools", s.lockByTools)
	s.Handle("POST /api/v1/mcp/lock/check", "lock_check", s.lockCheck)
	s.Handle("POST /api/v1/mcp/lock/resign", "lock_resign", s.resign)
	s.Handle("POST /api/v1/preflight/decide", "decide", s.decide)
	s.Handle("POST /api/v1/preflight/replay", "replay", s.replay)
	s.Handle("GET /api/v1/preflight/rules", "rules", func(w http.ResponseWriter, r *http.Request) {
		writeBytes(w, http.StatusOK, "application/json", s.rules)
	})
	s.Handle("GET /api/v1/keys", "keys", func(w http.ResponseWriter, r *http.Request) {
		d, err := s.cfg.Keys.Directory(s.cfg.Now())
		if err != nil {
			s.internalProblem(w, http.StatusServiceUnavailable, "keys_unavailable", "the key directory cannot be read", err)
			return
		}
		writeBytes(w, http.StatusOK, "application/json", d)
	})
	s.Handle("GET /api/v1/documents/{sha256}", "document", s.document)
	s.Handle("GET /api/v1/log/consistency", "log_consistency", s.logConsistency)
	s.Handle("POST /api/v1/pilot", "pilot_create", s.createPilot)
	s.Handle("POST /api/v1/pilot/{id}/records", "pilot_records", s.pilotRecords)
	s.Handle("GET /api/v1/pilot/{id}/report", "pilot_report", s.pilotReport)
	s.Handle("GET /api/v1/pilot/{id}/servers", "pilot_servers", s.pilotServers)
	s.Handle("POST /api/v1/pilot/{id}/servers", "pilot_server_add", s.pilotServers)
	s.Handle("POST /api/v1/corrections", "corrections_post", s.postCorrection)
	s.Handle("GET /api/v1/corrections", "corrections_list", s.listCorrections)
	s.Handle("GET /api/v1/openapi.json", "openapi", func(w http.ResponseWriter, r *http.Request) {
		writeBytes(w, http.StatusOK, "application/json", OpenAPI())
	})
	s.Handle("/api/", "unknown", func(w http.ResponseWriter, r *http.Request) {
		s.problem(w, http.StatusNotFound, "not_found", "no such endpoint: "+r.Method+" "+r.URL.Path)
	})
}

// Handler serves the API and the operational endpoints.
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	// Every error is a problem (problems.go): the API's inside the test
	// issuer's faults, which answer as a broken issuer or a proxy in front
	// would, and so stay as they are.
	var api http.Handler = problemsOnly(s.api)
	if s.cfg.Faults != nil {
		api = s.cfg.Faults.Wrap(api)
	}
	mux.Handle("/api/", api)
	mux.Handle("GET /healthz", s.instrument("healthz", func(w http.ResponseWriter, r *http.Request) {
		writeBytes(w, http.StatusOK, "application/json", []byte(`{"status":"ok"}`))
	}))
	mux.Handle("GET /readyz", s.instrument("readyz", s.ready))
	if s.log != nil {
		mux.Handle("GET /log/", s.instrument("log", s.log.ServeHTTP))
	}
	mux.Handle("GET /metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		s.metrics.Write(w)
	}))
	rest := problemsOnly(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			mux.ServeHTTP(w, r)
			return
		}
		rest.ServeHTTP(w, r)
	})
}

// ready answers 200 when the store answers and a key signs now.
func (s *Service) ready(w http.ResponseWriter, r *http.Request) {
	if err := s.timed("ping", func() error { return s.cfg.Store.Ping(r.Context()) }); err != nil {
		s.internalProblem(w, http.StatusServiceUnavailable, "store_unavailable", "the store does not answer", err)
		return
	}
	if _, err := s.cfg.Keys.Signer(s.cfg.Now()); err != nil {
		s.internalProblem(w, http.StatusServiceUnavailable, "keys_unavailable", "no key signs now", err)
		return
	}
	writeBytes(w, http.StatusOK, "application/json", []byte(`{"status":"ready"}`))
}

// Prune deletes the nonces no receipt can still be fresh with.
func (s *Service) Prune(ctx context.Context) (int64, error) {
	var n int64
	err := s.timed("prune_nonces", func() (err error) {
		n, err = s.cfg.Store.PruneNonces(ctx, s.cfg.Now())
		return err
	})
	return n, err
}

// statusWriter remembers the status for the metrics.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// instrument puts a handler under the deadline, bounds its body, turns a
// panic into a 500 problem, and counts it.
func (s *Service) instrument(name string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Deadline)
		defer cancel()
		r = r.WithContext(ctx)
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				s.cfg.Logger.Printf("%s: panic: %v", name, v)
				if sw.status == 0 {
					s.problem(sw, http.StatusInternalServerError, "internal", "the service failed on this request")
				}
			}
			status := strconv.Itoa(sw.status)
			s.metrics.Inc("crawlcheck_issuer_requests_total", name, status)
			s.metrics.Observe("crawlcheck_issuer_request_duration_seconds", time.Since(start), name, status)
		}()
		h(sw, r)
	})
}

// timed runs a store operation and records its latency.
func (s *Service) timed(op string, f func() error) error {
	start := time.Now()
	err := f()
	result := "ok"
	if err != nil {
		result = "error"
	}
	s.metrics.Observe("crawlcheck_issuer_store_duration_seconds", time.Since(start), op, result)
	return err
}

// problem writes an RFC 9457 problem document; code is one of the core's
// error codes or one of the service's (docs/issuer.md, "Errors").
func (s *Service) problem(w http.ResponseWriter, status int, code, detail string) {
	if status >= 500 {
		s.cfg.Logger.Printf("%d %s: %s", status, code, detail)
	}
	writeBytes(w, status, "application/problem+json", problemJSON(status, code, detail))
}

// internalProblem answers a failure of the service's own (its store, its
// keys) with a fixed detail, and logs the error: a database's message, a
// key file's path or an SQLSTATE are the operator's to read, not a
// client's (issue 37, F17).
func (s *Service) internalProblem(w http.ResponseWriter, status int, code, detail string, err error) {
	s.cfg.Logger.Printf("%d %s: %s: %v", status, code, detail, err)
	writeBytes(w, status, "application/problem+json", problemJSON(status, code, detail))
}

func writeBytes(w http.ResponseWriter, status int, ctype string, b []byte) {
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b)
}

// coreError is a request the core refused.
type coreError struct{ code, message string }

func (e *coreError) Error() string { return e.code + ": " + e.message }

// coreResult runs an op and answers its result bytes, or a *coreError. The
// core writes a result's envelope as `{"ok":true,"result":`, the result's
// canonical text and `}` (core.call's envelope), so the bytes between are
// the result, taken without scanning them: scanning a receipt's envelope
// and then the receipt was two passes over it on every check. Any other
// answer is split into its members by jsonframe.Members and its error
// decoded.
func coreResult(op string, req []byte) (json.RawMessage, error) {
	return coreAnswer(op, core.Call(op, req))
}

// signResult is coreResult for an op that signs with the issuer's key
// (private_key): through the service's Keyring, which derives each key
// once (the core keeps none between calls).
func (s *Service) signResult(op string, req []byte) (json.RawMessage, error) {
	return coreAnswer(op, s.keyring.Call(op, req))
}

// coreAnswer reads the envelope resp of op: its result, or its error.
func coreAnswer(op string, resp []byte) (json.RawMessage, error) {
	if len(resp) > len(okPrefix) && string(resp[:len(okPrefix)]) == okPrefix && resp[len(resp)-1] == '}' {
		return resp[len(okPrefix) : len(resp)-1], nil
	}
	env, ok := jsonframe.Members(resp)
	if !ok {
		return nil, &coreError{"internal", op + ": the core's answer is not an envelope"}
	}
	if string(env["ok"]) == "true" && env["result"] != nil {
		return env["result"], nil
	}
	var e struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(env["error"], &e); err != nil {
		return nil, &coreError{"internal", op + ": the core's answer: " + err.Error()}
	}
	return nil, &coreError{e.Code, e.Message}
}

// okPrefix begins every answer of the core that is a result.
const okPrefix = `{"ok":true,"result":`

// fail answers an error: a core refusal with its code (400; 413 for
// input_too_large, 500 for internal), the store or keys failing with 503.
func (s *Service) fail(w http.ResponseWriter, err error) {
	var ce *coreError
	var se *storeError
	var ie *inputError
	switch {
	case errors.As(err, &ie):
		s.problem(w, http.StatusBadRequest, ie.code, ie.detail)
	case errors.As(err, &ce):
		status := http.StatusBadRequest
		switch ce.code {
		case "input_too_large":
			status = http.StatusRequestEntityTooLarge
		case "internal":
			s.internalProblem(w, http.StatusInternalServerError, "internal", "the service failed on this request", ce)
			return
		}
		s.problem(w, status, ce.code, ce.message)
	case errors.As(err, &se):
		s.internalProblem(w, http.StatusServiceUnavailable, "store_unavailable", "the store failed, no signed answer was sent", se)
	case errors.Is(err, context.DeadlineExceeded):
		s.problem(w, http.StatusGatewayTimeout, "deadline_exceeded", "the request did not finish within the service's deadline")
	default:
		s.internalProblem(w, http.StatusServiceUnavailable, "keys_unavailable", "no key signs now", err)
	}
}

// storeError is a store failure: the request gets no signed answer. What
// the core signed for it was either rolled back with its transaction (its
// batch failed, and it failed again committed alone: the batch's other
// answers were committed and sent) or committed and then not answered (its
// log proof could not be read). Either way no client holds an answer the
// store does not, and no nonce is answered twice.
type storeError struct{ err error }

func (e *storeError) Error() string {
	return "the store failed, no signed answer was sent: " + e.err.Error()
}

func (e *storeError) Unwrap() error { return e.err }

// request is a POST body read member by member; members are passed on to
// the core as the bytes received.
type request map[string]json.RawMessage

// readRequest reads the bounded body: past the bound is 413 naming it.
func (s *Service) readRequest(w http.ResponseWriter, r *http.Request) (request, bool) {
	return s.readRequestInto(w, r, new([]byte))
}

// readRequestInto is readRequest reading into *buf (grown as needed), for
// a handler that gives the buffer back to buffers once its request's
// members are no longer referenced.
func (s *Service) readRequestInto(w http.ResponseWriter, r *http.Request, buf *[]byte) (request, bool) {
	// The buffer grows with the bytes received, never to the declared
	// Content-Length: reserving what a client only promised let 40 slow
	// connections of 2 bytes each hold 2.6 GiB (issue 37, F1). A pooled
	// buffer keeps its capacity, so an honest client's next body of the
	// same size is read without growing it again.
	b := bytes.NewBuffer((*buf)[:0])
	_, err := b.ReadFrom(r.Body)
	body := b.Bytes()
	*buf = body
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		s.problem(w, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("the request body is more than %d bytes", mbe.Limit))
		return nil, false
	case err != nil:
		s.problem(w, http.StatusBadRequest, "bad_request", "reading the request body: "+err.Error())
		return nil, false
	}
	if ie := checkBody(body); ie != nil {
		s.problem(w, http.StatusBadRequest, ie.code, ie.detail)
		return nil, false
	}
	// A host sends the same lockfile and tools again and again: framed
	// knows them, and skips them instead of scanning 260 KB for where they end.
	m, ok := s.framed.Members(body)
	if !ok {
		s.problem(w, http.StatusBadRequest, "bad_request", "the request body is not a JSON object of distinct members")
		return nil, false
	}
	return request(m), true
}

// str reads a string member ("" when absent or not a string).
func (q request) str(name string) string {
	var v string
	json.Unmarshal(q[name], &v)
	return v
}

// lockURLs remembers the endpoint the last few lockfiles approved, by their
// exact bytes as a request carried them: a host checks one lockfile again
// and again, and decoding 100 KB of lockfile for its server.url was a fifth
// of a check's CPU. The same bytes decode to the same URL, so a hit is the
// answer a decode would give.
type lockURLs struct {
	mu      sync.Mutex
	entries []lockURLEntry // most recently used first
}

type lockURLEntry struct {
	raw []byte
	url string
}

// lockURLsKept is how many lockfiles are remembered; lockURLBytes caps the
// size of one, so a huge lockfile is not kept alive.
const (
	lockURLsKept = 4
	lockURLBytes = 4 << 20
)

// of answers q's lockfile's URL, from memory when it was seen. owned: raw
// is framed's copy, never changed, so it is kept as it is, and the next
// request's, framed's same copy, is found without comparing its bytes.
func (c *lockURLs) of(q request, owned func([]byte) bool) string {
	raw := q["lock"]
	c.mu.Lock()
	for i, e := range c.entries {
		if jsonframe.Same(e.raw, raw) || bytes.Equal(e.raw, raw) {
			copy(c.entries[1:i+1], c.entries[:i])
			c.entries[0] = e
			c.mu.Unlock()
			return e.url
		}
	}
	c.mu.Unlock()
	url := q.lockURL()
	if len(raw) <= lockURLBytes {
		if !owned(raw) {
			raw = bytes.Clone(raw)
		}
		c.mu.Lock()
		c.entries = append([]lockURLEntry{{raw, url}}, c.entries[:min(len(c.entries), lockURLsKept-1)]...)
		c.mu.Unlock()
	}
	return url
}

// lockURL is the endpoint a crawlcheck lockfile approved: the subject of a
// check that names no other.
func (q request) lockURL() string {
	raw := q["lock"]
	var text string
	if json.Unmarshal(raw, &text) == nil {
		raw = json.RawMessage(text)
	}
	var l struct {
		Server struct{ URL string } `json:"server"`
	}
	json.Unmarshal(raw, &l)
	return l.Server.URL
}

// allow applies the per-client rate limit of the endpoints that read a
// live server; the client is the remote address's /24 or /64 (clientOf; a
// proxy in front should limit by its own client), and a tenant is limited
// as one client wherever it sends from (tenantLimit).
func (s *Service) allow(w http.ResponseWriter, r *http.Request, who principal) bool {
	return s.limit(w, clientOf(r), s.cfg.RatePerSecond, s.cfg.RateBurst, "too many readings of live servers from this client") &&
		s.tenantLimit(w, "read ", who, "too many readings of live servers for this tenant")
}

// tenantLimit applies a rate limit of kind (a key prefix) to a tenant's
// token as well as to its address (issue 37: limits keyed by /24, /64 and
// by tenant), so that a tenant spreading its requests over many networks
// still has one budget. The operator and anonymous clients have their
// address's alone.
func (s *Service) tenantLimit(w http.ResponseWriter, kind string, who principal, what string) bool {
	if !strings.HasPrefix(string(who), "tenant:") {
		return true
	}
	return s.limit(w, kind+string(who), s.cfg.RatePerSecond, s.cfg.RateBurst, what)
}

// limit answers 429 (Retry-After: 1) and false when key is over its rate;
// each kind of key is distinct (a client's address, "pilot " and an id).
func (s *Service) limit(w http.ResponseWriter, key string, perSecond float64, burst int, what string) bool {
	if !s.limiters.get(key, perSecond, burst).Allow() {
		w.Header().Set("Retry-After", "1")
		s.problem(w, http.StatusTooManyRequests, "rate_limited", what+": try again shortly")
		return false
	}
	return true
}

// read reads a live server for a request, under the read limit; a refused
// endpoint answers 403 and false.
func (s *Service) read(w http.ResponseWriter, r *http.Request, url string) (fetch.Reading, bool) {
	who, ok := s.principalOf(w, r)
	if !ok || !s.allow(w, r, who) {
		return fetch.Reading{}, false
	}
	done, ok := s.startReading(w, clientOf(r))
	if !ok {
		return fetch.Reading{}, false
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.ReadLimit)
	defer cancel()
	rd := s.fetcherFor(who).Read(ctx, url)
	done(rd.Received)
	result := "ok"
	switch {
	case rd.Refused != nil:
		result = "refused"
	case rd.Failure != "":
		result = rd.Failure
	case rd.PageCapReached:
		result = "page_cap_reached"
	}
	s.metrics.Inc("crawlcheck_issuer_fetches_total", result)
	if rd.Refused != nil {
		s.problem(w, http.StatusForbidden, "endpoint_refused", rd.Refused.Error())
		return rd, false
	}
	return rd, true
}

// observed is a reading in continuity_check's observed form.
func observed(rd fetch.Reading) map[string]any {
	o := map[string]any{"endpoint": rd.Endpoint}
	switch {
	case rd.Fault != "":
		// A host fault the core words: no text of the client's in a
		// signed answer.
		o["failure"], o["failure_at"] = rd.Fault, rd.FailureAt
		if rd.FailurePage > 0 {
			o["failure_page"] = rd.FailurePage
		}
		return o
	case rd.Failure != "":
		o["failure"], o["failure_detail"] = rd.Failure, rd.FailureDetail
		return o
	}
	o["pages"], o["handshake"] = rd.Pages, "initialize"
	o["protocol_version"], o["page_cap_reached"] = rd.ProtocolVersion, rd.PageCapReached
	if rd.ServerInfo != nil {
		o["server_info"] = rd.ServerInfo
	}
	return o
}

// replay re-runs a receipt's decision; a lockfile the receipt names only by
// digest is looked up among those this service issued.
//
// The lockfile is looked up only when the caller may read it (mayRead): a
// replay is no way around the documents' readers (F8).
func (s *Service) replay(w http.ResponseWriter, r *http.Request) {
	who, ok := s.principalOf(w, r)
	if !ok {
		return
	}
	q, ok := s.readRequest(w, r)
	if !ok {
		return
	}
	if _, has := q["lock"]; !has {
		var rc struct {
			Inputs struct {
				LockSHA256 string          `json:"lock_sha256"`
				Lock       json.RawMessage `json:"lock"`
			} `json:"inputs"`
		}
		raw := q["receipt"]
		var text string
		if json.Unmarshal(raw, &text) == nil {
			raw = json.RawMessage(text)
		}
		if json.Unmarshal(raw, &rc) == nil && rc.Inputs.Lock == nil && rc.Inputs.LockSHA256 != "" {
			var d store.Document
			err := s.timed("get_document", func() (err error) { d, err = s.cfg.Store.GetDocument(r.Context(), rc.Inputs.LockSHA256); return })
			switch {
			case err == nil && d.Kind == lockKind && who.mayRead(d):
				q["lock"] = mustJSON(string(d.Body))
			case err != nil && !errors.Is(err, store.ErrNotFound):
				s.fail(w, &storeError{err})
				return
			}
		}
	}
	res, err := coreResult("replay_decision", mustJSON(q))
	if err != nil {
		s.fail(w, err)
		return
	}
	writeBytes(w, http.StatusOK, "application/json", res)
}

// document answers a lockfile or receipt this service issued, by its digest
// (audit, and replaying a receipt a host kept only the digest of), to the
// operator and to the principal that caused it (F8): the log lists every
// document's digest publicly, so a digest is no secret, and a receipt's
// inputs are the tool pages a host sent of its servers. Anybody else, the
// anonymous included, is answered as for a digest never issued here, so
// the endpoint tells nobody which digests are documents.
func (s *Service) document(w http.ResponseWriter, r *http.Request) {
	who, ok := s.principalOf(w, r)
	if !ok {
		return
	}
	var d store.Document
	err := s.timed("get_document", func() (err error) { d, err = s.cfg.Store.GetDocument(r.Context(), r.PathValue("sha256")); return })
	if err == nil && !who.mayRead(d) {
		err = store.ErrNotFound
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		s.problem(w, http.StatusNotFound, "not_found", "no document with that digest was issued here")
	case err != nil:
		s.fail(w, &storeError{err})
	default:
		w.Header().Set("X-Crawlcheck-Kind", d.Kind)
		writeBytes(w, http.StatusOK, "application/json", d.Body)
	}
}

// mustJSON marshals a plain value, without the HTML escaping of
// json.Marshal: bytes passed on stay as received.
func mustJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("service: marshal of a plain value: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
