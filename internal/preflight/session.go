package preflight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/internal/atomicfile"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultTimeout bounds one check (connect, handshake and every tools/list
// page) when Config.Timeout is zero (the core's limits.check_timeout_ms).
const DefaultTimeout = core.DefaultCheckTimeoutMS * time.Millisecond

// Background re-checks on notifications/tools/list_changed are paced by the
// core's session engine (Engine): the first starts at once, one more no
// sooner than RecheckMin after the one before, with every notification in
// between coalesced into it; one that starts as soon as it may (the server
// announced a change again within the wait) doubles the wait up to
// RecheckMax, and a quiet spell (more than twice the wait) resets it. A
// call never waits out the hold-off: it re-checks at once when a change was
// announced since the record it would be judged by (docs/decisions.md).
// The constants say the engine's numbers; the engine does not read them.
const (
	RecheckMin = time.Second
	RecheckMax = time.Minute
)

// Config configures a Session.
type Config struct {
	Settings
	// LockPath is the approved lockfile. It is read once by Open and
	// rewritten (atomically) by Confirm.
	LockPath string
	// SigningKey, when set, is the operator's Ed25519 seed (base64): the
	// lockfile Confirm writes is signed with it.
	SigningKey string
	// PageCap bounds the tools/list pages one check reads; 0 means
	// DefaultPageCap.
	PageCap int
	// MaxAnswerBytes bounds each answer read from the server; 0 means
	// DefaultMaxAnswerBytes. A longer one is recorded as server_unavailable.
	MaxAnswerBytes int64
	// Timeout bounds one check; 0 means DefaultTimeout.
	Timeout time.Duration
	// LogPath, when set, is an append-only JSON-lines log every record is
	// written to (see Log), chained to the records already in it.
	LogPath string
	// OnRecord, when set, is called with every record, after it is logged.
	// It runs while the session holds its check lock: it must not call the
	// Session's methods.
	OnRecord func(Record)
	// Warn, when set, is given the line observe mode tells a person: the
	// core's words (refusal with would) of what enforce would have withheld
	// or paused, naming the record, once for each distinct would of the
	// session, as the JS SDK's console.warn and the Python SDK's WARNING on
	// the crawlcheck logger. nil writes the line to os.Stderr: observe mode
	// that says nothing lets a change through unseen (issue 34). It is
	// also given the engine's line about tools the SDK's type cannot hold
	// (not handed over by ListTools), once each. Like OnRecord it may run
	// under the session's check lock.
	Warn func(string)
	// Now is the clock of the records; nil means time.Now.
	Now func() time.Time
	// Issuer, when set, turns on the service path: every check (the first,
	// each re-check, the one after Confirm) asks the issuer and hands the
	// core's judgement of its answer to the check as evidence
	// (docs/preflight.md, The service path). Settings.KeyDirectory, when
	// set, is the operator's copy of the issuer's key directory and vouches
	// for its answers. With LogPath, the replay state is kept next to the
	// log (NonceStatePath); without, in memory for the session.
	Issuer *Issuer
	// Headers, when set, are sent with every HTTP request of the session
	// (streamable HTTP and HTTP+SSE; ignored over stdio): an
	// Authorization, an API key. They are credentials: no record, log,
	// lockfile or error text holds them. Set them here rather than on the
	// transport's HTTPClient so that a redirect elsewhere does not carry
	// them (see HeaderTransport).
	Headers http.Header
	// Pilot, when set, uploads the record log to an issuer's pilot in the
	// background (pilot.go): it needs LogPath, never blocks or fails a
	// check, and keeps what the issuer acknowledged in PilotAckPath.
	Pilot *Pilot
}

// The transparency log: when a tlog-proof lies beside the lockfile
// (ProofPath) every check verifies it against the issuer's log with
// the baseline's keys (Settings.KeyDirectory, or Config.Issuer.PinnedKeys
// with the directory fetched at that check), and the newest checkpoint seen is kept beside the
// record log (CheckpointPath; without LogPath, in memory for the session).
// A checkpoint of another size than the proof's is reconciled by a
// consistency proof asked of Config.Issuer; without one, or when it cannot
// answer, the check records log_inconsistent (docs/log.md).

// Session is an MCP client session whose tools pass a continuity check
// before the model sees them. It follows the record's effects: a tool whose
// effect is pause_tool or stronger is left out of ListTools and Tools and
// refused by CallTool; a session effect of pause or deny refuses every call;
// refresh checks once more. A notifications/tools/list_changed makes the
// session check again, and no call goes through until that check is done.
//
// ListTools and Tools answer from the tool list the current record was
// made from, not from a new listing: the tools handed to the model are the
// tools that were compared.
type Session struct {
	client *mcp.Client
	sopts  *mcp.ClientSessionOptions
	// changes counts the list_changed notifications the SDK has handled
	// (after clearing its list cache); changed wakes the watcher.
	changes  atomic.Int64
	changed  chan struct{}
	t        *Transport
	cfg      Config
	log      *Log
	uploader *Uploader     // the pilot upload (Config.Pilot); nil without
	issuer   *IssuerClient // nil without Config.Issuer
	kept     *Checkpoints  // the log checkpoint kept; nil without a proof
	// engine is the core's session engine for this session: the record's
	// recheck and refreshed, check_again, the pace, the calls allowed.
	engine Engine

	// checkMu makes checks, re-checks and confirmations one at a time.
	checkMu sync.Mutex

	mu    sync.Mutex // guards the fields below
	cs    *mcp.ClientSession
	lock  []byte
	proof string // the lockfile's tlog-proof, "" without one
	obs   Observation
	rec   Record
	cons  Consultation // the issuer's part of rec
	seen  int64        // list_changed notifications the current record covers
	prev  string       // record_sha256 of the newest record, for the chain
	err   error        // a check that could not be made: every call fails with it
	// acked is closed when the server acknowledges the subscriptions/listen
	// of the connection being made (nil once closed).
	acked chan struct{}

	done    chan struct{}
	watcher sync.WaitGroup
}

// Open connects to the server over transport (an *mcp.CommandTransport,
// *mcp.StreamableClientTransport or *mcp.SSEClientTransport, wrapped here
// to capture the raw tool list) with a client made from impl and copts, checks it against the
// lockfile and returns the session. A session whose check paused or denied
// it is returned too: it refuses every call, and Record says why.
//
// Open makes the client itself, chaining its own ToolListChangedHandler
// before any in copts: the SDK subscribes to tools/list_changed only when a
// handler is set, and clears its list cache just before calling it, so a
// re-check started there reads the new list from the wire.
//
// Open fails without a session when the configuration cannot be used (a
// lockfile that is missing, unreadable or of a format or version the core
// does not read; a broken log), and with a *RefusedError carrying the record
// when the server could not be connected at all.
func Open(ctx context.Context, impl *mcp.Implementation, copts *mcp.ClientOptions, transport mcp.Transport, sopts *mcp.ClientSessionOptions, cfg Config) (*Session, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.LockPath == "" {
		return nil, errors.New("preflight: Config.LockPath is required")
	}
	lock, err := readFile(cfg.LockPath, core.MaxRequestBytes)
	if err != nil {
		return nil, fmt.Errorf("preflight: reading the lockfile: %w", err)
	}
	if _, err := ReadLock(lock, cfg.Now(), cfg.Settings); err != nil {
		return nil, fmt.Errorf("preflight: lockfile %s: %w", cfg.LockPath, err)
	}
	t, err := Wrap(transport)
	if err != nil {
		return nil, err
	}
	t.headers = cfg.Headers
	s := &Session{sopts: sopts, t: t, cfg: cfg, lock: lock, done: make(chan struct{}), changed: make(chan struct{}, 1)}
	s.client = mcp.NewClient(impl, s.clientOptions(copts))
	s.client.AddReceivingMiddleware(s.noteAck)
	if cfg.Issuer != nil {
		state := ""
		if cfg.LogPath != "" {
			state = NonceStatePath(cfg.LogPath)
		}
		if s.issuer, err = NewIssuerClient(*cfg.Issuer, cfg.KeyDirectory, state); err != nil {
			return nil, fmt.Errorf("preflight: %w", err)
		}
	}
	if s.proof, err = ReadProof(cfg.LockPath); err != nil {
		return nil, fmt.Errorf("preflight: %w", err)
	}
	if s.proof != "" {
		// The log is judged by the baseline's keys: the operator's copy of
		// the directory, or the pins and the directory fetched at each check
		// (the core's rule, docs/log.md).
		if cfg.KeyDirectory == nil && (cfg.Issuer == nil || len(cfg.Issuer.PinnedKeys) == 0) {
			return nil, fmt.Errorf("preflight: %s is verified against the issuer's log by its keys: set Settings.KeyDirectory or Config.Issuer.PinnedKeys", ProofPath(cfg.LockPath))
		}
		kept := ""
		if cfg.LogPath != "" {
			kept = CheckpointPath(cfg.LogPath)
		}
		if s.kept, err = OpenCheckpoints(kept); err != nil {
			return nil, fmt.Errorf("preflight: %w", err)
		}
	}
	if cfg.LogPath != "" {
		if s.log, err = OpenLog(cfg.LogPath); err != nil {
			return nil, fmt.Errorf("preflight: %w", err)
		}
		s.prev = s.log.Head()
	}
	if cfg.Pilot != nil {
		if cfg.LogPath == "" {
			return nil, errors.New("preflight: Config.Pilot uploads the record log: set Config.LogPath")
		}
		s.uploader = NewUploader(*cfg.Pilot, cfg.LogPath)
		s.uploader.Start()
	}
	s.checkMu.Lock()
	err = s.recheck(ctx)
	s.checkMu.Unlock()
	if err == nil && s.cs == nil {
		err = fmt.Errorf("preflight: no session with %s: %w", t.Endpoint(), &RefusedError{Effect: s.rec.Effect, Record: s.rec})
	}
	if err != nil {
		s.shutdown()
		return nil, err
	}
	s.watcher.Add(1)
	go s.watch()
	return s, nil
}

// Record returns the newest record of this session.
func (s *Session) Record() Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec
}

// Consultation returns what the issuer gave the newest record (the zero
// Consultation without Config.Issuer): whether it was asked, guard's
// answer, or why it could not be asked.
func (s *Session) Consultation() Consultation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cons
}

// Recheck observes the tool list again and checks it, whether or not the
// server announced a change.
func (s *Session) Recheck(ctx context.Context) (Record, error) {
	s.checkMu.Lock()
	defer s.checkMu.Unlock()
	if err := s.recheck(ctx); err != nil {
		return Record{}, err
	}
	return s.Record(), nil
}

// ListTools returns the tools of the checked list that the record lets
// through, in one result without a cursor.
func (s *Session) ListTools(ctx context.Context, params *mcp.ListToolsParams) (*mcp.ListToolsResult, error) {
	if params != nil && params.Cursor != "" {
		return nil, fmt.Errorf("preflight: unknown cursor %q: ListTools answers in one page", params.Cursor)
	}
	rec, _, err := s.gate(ctx)
	if err != nil {
		return nil, err
	}
	res := &mcp.ListToolsResult{Tools: []*mcp.Tool{}}
	var unheld []string
	for _, h := range rec.Handoff.Tools {
		// The core's bytes, parsed by the SDK's own type: what the model
		// reads is what the record covers. A tool the type cannot hold is
		// the engine's to answer (unheld): it is never handed over changed.
		var tool mcp.Tool
		if json.Unmarshal([]byte(h.Tool), &tool) != nil || tool.Name != h.Name {
			unheld = append(unheld, h.Name)
			continue
		}
		res.Tools = append(res.Tools, &tool)
	}
	if len(unheld) > 0 {
		st, err := s.engine.Unheld(unheld)
		if err != nil {
			return nil, fmt.Errorf("preflight: %w", err)
		}
		if st.Warn != "" {
			s.say(st.Warn)
		}
	}
	return res, nil
}

// say tells a person text: Config.Warn, or os.Stderr without one.
func (s *Session) say(text string) {
	if s.cfg.Warn != nil {
		s.cfg.Warn(text)
	} else {
		fmt.Fprintln(os.Stderr, text)
	}
}

// Tools iterates over the tools ListTools returns.
func (s *Session) Tools(ctx context.Context, params *mcp.ListToolsParams) iter.Seq2[*mcp.Tool, error] {
	return func(yield func(*mcp.Tool, error) bool) {
		res, err := s.ListTools(ctx, params)
		if err != nil {
			yield(nil, err)
			return
		}
		for _, t := range res.Tools {
			if !yield(t, nil) {
				return
			}
		}
	}
}

// CallTool calls a tool the record lets through, and refuses any other with
// a *RefusedError.
func (s *Session) CallTool(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if params == nil {
		return nil, errors.New("preflight: CallTool without params names no tool")
	}
	st, rec, err := s.judge(ctx, func() (Step, error) { return s.engine.Call(params.Name) })
	if err != nil {
		return nil, err
	}
	if !st.Allowed {
		return nil, &RefusedError{Tool: params.Name, Effect: rec.Tools[params.Name], Record: rec, text: st.Refusal}
	}
	s.mu.Lock()
	cs := s.cs
	s.mu.Unlock()
	return cs.CallTool(ctx, params)
}

// judge asks the engine about a call (ask: its call event, Call or Item)
// once the gate lets the session be used, and returns its answer with the
// record it judged by: the one the session follows, read with it under
// checkMu, so no re-check comes in between.
func (s *Session) judge(ctx context.Context, ask func() (Step, error)) (Step, Record, error) {
	if _, _, err := s.gate(ctx); err != nil {
		return Step{}, Record{}, err
	}
	s.checkMu.Lock()
	st, err := ask()
	rec := s.Record()
	s.checkMu.Unlock()
	if err != nil {
		return st, rec, fmt.Errorf("preflight: %w", err)
	}
	return st, rec, nil
}

// gate brings the check up to date with the server's list_changed
// notifications, as the engine says (use: a re-check first when the record
// does not cover one), and returns the record with the observation it was
// made from — taken together, so a re-check in between can never pair one
// list's tools with another list's effects — or the error every call gets
// while the session is stopped, or the engine's refusal of the session.
func (s *Session) gate(ctx context.Context) (Record, Observation, error) {
	s.checkMu.Lock()
	seen := s.changes.Load()
	st, err := s.engine.Use(seen)
	if err == nil && st.Recheck {
		if err = s.recheck(ctx); err == nil {
			st, err = s.engine.Use(seen)
		}
	}
	s.checkMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return Record{}, Observation{}, s.err
	}
	if err != nil {
		return Record{}, Observation{}, fmt.Errorf("preflight: %w", err)
	}
	if !st.Allowed {
		return Record{}, Observation{}, &RefusedError{Effect: s.rec.Effect, Record: s.rec, text: st.Refusal}
	}
	return s.rec, s.obs, nil
}

// noteAck closes acked when the server acknowledges the session's
// subscriptions/listen (SEP-2575): from then on it announces every change.
func (s *Session) noteAck(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "notifications/subscriptions/acknowledged" {
			s.mu.Lock()
			if s.acked != nil {
				close(s.acked)
				s.acked = nil
			}
			s.mu.Unlock()
		}
		return next(ctx, method, req)
	}
}

// awaitSubscription waits, within ctx, for the server to acknowledge the
// subscriptions/listen the SDK opened on cs (a 2026-07-28 session with a
// server announcing tool list changes) before the first listing: a server
// announces a change only to the subscriptions it has, so a change after a
// listing answered before the subscription was made would never be
// announced, and the session would keep judging calls by the old list. A
// server that never acknowledges is bounded by the check's deadline (the
// listing then fails: timeout).
func awaitSubscription(acked <-chan struct{}) func(context.Context, *mcp.ClientSession) {
	return func(ctx context.Context, cs *mcp.ClientSession) {
		res := cs.InitializeResult()
		if res == nil || res.ProtocolVersion < "2026-07-28" || res.Capabilities == nil || res.Capabilities.Tools == nil || !res.Capabilities.Tools.ListChanged {
			return
		}
		select {
		case <-acked:
		case <-ctx.Done():
		}
	}
}

// clientOptions returns copts with the session's list_changed handler
// chained before the caller's.
func (s *Session) clientOptions(copts *mcp.ClientOptions) *mcp.ClientOptions {
	var opts mcp.ClientOptions
	if copts != nil {
		opts = *copts
	}
	next := opts.ToolListChangedHandler
	opts.ToolListChangedHandler = func(ctx context.Context, req *mcp.ToolListChangedRequest) {
		s.changes.Add(1)
		select {
		case s.changed <- struct{}{}:
		default:
		}
		if next != nil {
			next(ctx, req)
		}
	}
	return &opts
}

// watch re-checks in the background on list_changed, so that the record
// follows the server even when no call is made, paced by the session
// engine: each notification is an event, answered with a re-check now or a
// wake later (a server announcing a change after every listing gets a
// bounded number of records, each of which says it was a storm's).
func (s *Session) watch() {
	defer s.watcher.Done()
	for {
		select {
		case <-s.done:
			return
		case <-s.changed:
		}
		st, err := s.engine.ListChanged(s.changes.Load())
		if err == nil && !st.Wake.IsZero() {
			timer := time.NewTimer(time.Until(st.Wake))
			select {
			case <-s.done:
				timer.Stop()
				return
			case <-timer.C:
			}
			st, err = s.engine.Timer()
		}
		if err != nil || !st.Recheck {
			// An engine that cannot answer leaves the next call to re-check
			// (gate): calls are never judged by a list it did not cover.
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-s.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		s.checkMu.Lock()
		// A call may have re-checked since: the engine says whether the
		// record covers the notifications now (use).
		if st, err := s.engine.Use(s.changes.Load()); err == nil && st.Recheck {
			// An error is kept in s.err and refuses every call.
			_ = s.recheck(ctx)
		}
		s.checkMu.Unlock()
		cancel()
	}
}

// recheck observes the list (connecting first when there is no session)
// and checks it; when the engine asks for one more check (check_again: a
// refresh effect), it is made. Callers hold checkMu.
func (s *Session) recheck(ctx context.Context) error {
	obs, seen := s.observe(ctx)
	rec, cons, again, err := s.check(ctx, obs, seen)
	if err == nil && again {
		// The refreshed check asks the issuer again too: refresh is how an
		// expired or replayed receipt is answered (spec §4).
		obs, seen = s.observe(ctx)
		rec, cons, _, err = s.check(ctx, obs, seen)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
	if err == nil {
		s.obs, s.rec, s.cons, s.seen = obs, rec, cons, seen
	}
	return err
}

// observe reads the tool list within the configured timeout, and returns
// it with the number of list_changed notifications seen before it began.
func (s *Session) observe(ctx context.Context) (Observation, int64) {
	// The deadline a timeout's record names is the configured one, unless
	// the caller's own came first.
	var timeout time.Duration
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > s.cfg.Timeout {
		timeout = s.cfg.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	opts := &Options{PageCap: s.cfg.PageCap, MaxAnswerBytes: s.cfg.MaxAnswerBytes, Features: true}
	seen := s.changes.Load()
	s.mu.Lock()
	cs := s.cs
	s.mu.Unlock()
	var obs Observation
	if cs != nil {
		obs = Observe(ctx, cs, s.t, opts)
	} else {
		acked := make(chan struct{})
		s.mu.Lock()
		s.acked = acked
		s.mu.Unlock()
		opts.subscribed = awaitSubscription(acked)
		cs, obs = Connect(ctx, s.client, s.t, s.sopts, opts)
		s.mu.Lock()
		s.cs = cs
		s.mu.Unlock()
	}
	obs.Timeout = timeout
	return obs, seen
}

// check asks the issuer (with Config.Issuer), hands the engine the check of
// obs (begun when seen notifications had arrived) with its evidence,
// chains, logs and hands on the record; again is the engine's check_again.
// A record that cannot be logged is an error: a decision must not be acted
// on without its record.
func (s *Session) check(ctx context.Context, obs Observation, seen int64) (rec Record, cons Consultation, again bool, err error) {
	s.mu.Lock()
	req := Request{Settings: s.cfg.Settings, Lock: s.lock, Observation: obs, Now: s.cfg.Now(), PrevRecordSHA256: s.prev}
	proof := s.proof
	s.mu.Unlock()
	if proof != "" {
		req.Log = s.kept.Input(ctx, proof, s.issuer)
	}
	if s.issuer != nil {
		cons, err = s.issuer.Consult(ctx, ServiceQuery{Lock: req.Lock, Settings: req.Settings, Observation: obs, Now: req.Now})
		if err != nil {
			return Record{}, cons, false, fmt.Errorf("preflight: %w", err)
		}
		req.Use(cons)
	}
	var st Step
	step := func(prev string) (Record, error) {
		req.PrevRecordSHA256 = prev
		if st, err = s.engine.Check(req, seen); err != nil {
			return Record{}, err
		}
		return *st.Record, nil
	}
	if s.log != nil {
		// Made under the log's file lock, chained to its newest record,
		// whichever process wrote it.
		rec, err = s.log.AppendNext(step)
	} else {
		rec, err = step(req.PrevRecordSHA256)
	}
	if err != nil {
		return Record{}, cons, false, fmt.Errorf("preflight: %w", err)
	}
	if s.log != nil && s.uploader != nil {
		s.uploader.Kick()
	}
	if s.kept != nil && st.Keep != "" {
		if err := s.kept.Keep(st.Keep); err != nil {
			return Record{}, cons, false, fmt.Errorf("preflight: %w", err)
		}
	}
	s.mu.Lock()
	s.prev = rec.RecordSHA256
	s.mu.Unlock()
	if s.cfg.OnRecord != nil {
		s.cfg.OnRecord(rec)
	}
	if rec.Handoff.Notice != "" {
		s.say(rec.Handoff.Notice)
	}
	return rec, cons.Recorded(rec), st.CheckAgain, nil
}

// Confirm re-approves the tool list of the current record, as a person's
// act: the caller has shown a person what changed for each tool named and
// the person approved it. The new lockfile is made by the core (approve)
// from the pages the record was made from, signed with Config.SigningKey
// when one is set, and written atomically over Config.LockPath; then the
// same pages are checked against it, and that record is returned.
//
// The core refuses, and Confirm returns its *ApprovalRefusedError changing
// nothing, unless the record's list was read whole and every tool with a
// change is named: confirming one tool must never approve another's change
// on the side. Any observation about the session rather than a tool (a
// different server, an untrusted baseline, evidence, a policy version) is
// refused too; those are not resolved by re-approving tools. (An issuer
// that saw the same change adds no observation: its lock check is a
// reading, not a refusal.)
func (s *Session) Confirm(names ...string) (Record, error) {
	return s.confirm(names, ApproveOptions{})
}

// ConfirmInstructions is Confirm that also approves a change of the
// server's instructions (instructions_changed): the caller has shown a
// person the record's word diff of them (the observation's
// instructions_diff, each segment escaped as every server string is) and
// the person approved them with the tools named. Confirm refuses a record with that change,
// since nobody named it; the new lockfile pins the instructions and the
// server as the handshake gave them.
func (s *Session) ConfirmInstructions(names ...string) (Record, error) {
	return s.confirm(names, ApproveOptions{Instructions: true})
}

// confirm is Confirm with what else the person approved (the Instructions
// and Features members of parts); the names, time and key are the session's.
func (s *Session) confirm(names []string, parts ApproveOptions) (Record, error) {
	s.checkMu.Lock()
	defer s.checkMu.Unlock()
	s.mu.Lock()
	obs, rec, lock, stopErr := s.obs, s.rec, s.lock, s.err
	s.mu.Unlock()
	if stopErr != nil {
		return Record{}, stopErr
	}
	newLock, err := Approve(rec.Raw, lock, obs, ApproveOptions{Names: names, Now: s.cfg.Now(), SigningKey: s.cfg.SigningKey, Instructions: parts.Instructions, Features: parts.Features})
	if err != nil {
		return Record{}, fmt.Errorf("preflight: confirm (record %s): %w", rec.RecordSHA256, err)
	}
	if err := atomicfile.Write(s.cfg.LockPath, newLock, 0o644); err != nil {
		return Record{}, fmt.Errorf("preflight: confirm: %w", err)
	}
	// The tlog-proof beside the lockfile was the proof of the lockfile just
	// replaced: the issuer's log holds no entry of the new one, so the proof
	// goes, and the next Open does not check the new lockfile by it.
	if s.proof != "" {
		if err := os.Remove(ProofPath(s.cfg.LockPath)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return Record{}, fmt.Errorf("preflight: confirm: removing the replaced lockfile's tlog-proof: %w", err)
		}
	}
	s.mu.Lock()
	s.lock, s.proof = newLock, ""
	s.mu.Unlock()
	// The issuer is asked about the new baseline too; its deadline bounds
	// the wait. A check_again is followed here as after every check: one
	// more check, of the list read anew.
	s.mu.Lock()
	seen := s.seen
	s.mu.Unlock()
	rec, cons, again, err := s.check(context.Background(), obs, seen)
	if err == nil && again {
		obs, seen = s.observe(context.Background())
		rec, cons, _, err = s.check(context.Background(), obs, seen)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
	if err != nil {
		return Record{}, err
	}
	s.obs, s.rec, s.cons, s.seen = obs, rec, cons, seen
	return rec, nil
}

// Close stops the watcher, closes the MCP session and the log.
func (s *Session) Close() error {
	return s.shutdown()
}

func (s *Session) shutdown() error {
	select {
	case <-s.done:
		return nil
	default:
		close(s.done)
	}
	s.watcher.Wait()
	var errs []error
	s.mu.Lock()
	cs := s.cs
	s.mu.Unlock()
	if cs != nil {
		errs = append(errs, cs.Close())
	}
	if s.uploader != nil {
		s.uploader.Close()
	}
	if s.log != nil {
		errs = append(errs, s.log.Close())
	}
	return errors.Join(errs...)
}
