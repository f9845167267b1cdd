// Package gateway is `crawlcheck run`: an MCP server on its own stdin and
// stdout that a client's config starts in place of a stdio server. It
// starts the server as its child and checks the session it bridges, not a
// second one: it forwards the client's handshake, lists the tools itself
// with requests of its own once the handshake is done, hands the pages to
// the core's continuity check (preflight.Check) and answers the client's
// tools/list from the core's handoff, the exact tool objects the record
// covers. A tools/call the handoff does not allow is answered with an error
// the client can show a person (RefusedCode). Everything else passes
// through both ways as the bytes that arrived. It re-checks when the server
// announces a change and when the lockfile is rewritten, and tells the
// client when what it may see changed. docs/gateway.md.
//
// The gateway decides nothing: the record, the handoff, the page walk, the
// refusal's words and the escaping of every server string are the core's.
package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/core/textsafe"
	"github.com/crawlcheck/verifier/internal/preflight"
)

// RefusedCode is the JSON-RPC error code of a tools/call the gateway
// refuses (a tool withheld, not in the checked list, or a session paused or
// denied): outside -32768..-32000, the range JSON-RPC reserves, as the MCP
// 2026-07-28 revision asks of an error that is not the protocol's, so that
// no client reads it as a transport failure and retries or drops the
// server. The message is the core's refusal; data carries the record.
const RefusedCode = -31001

// Config is one gateway.
type Config struct {
	// LockPath is the approved lockfile; it is watched, and a rewrite
	// (crawlcheck approve) is checked against at once.
	LockPath string
	// LogPath, when set, is the record log every record is appended to,
	// chained, under a file lock (several gateways may share it).
	LogPath string
	// Settings are the deployment's side of the check (mode, policy, keys).
	preflight.Settings
	// Command is the server's argv.
	Command []string
	// Remote, when its URL is set, is the server reached over HTTP in
	// place of Command (crawlcheck run --url).
	Remote Remote
	// Timeout bounds one check (every tools/list page); 0 is the core's.
	Timeout time.Duration
	// PageCap bounds the pages of one check; 0 is the core's.
	PageCap int
	// MaxLine bounds a line read from either side; 0 is the core's
	// limits.answer_bytes. A longer line is dropped and said on stderr.
	MaxLine int
	// LockPoll is how often the lockfile is looked at; 0 is 250ms.
	LockPoll time.Duration
	// Grace is how long the server has to exit after its stdin is closed,
	// and again after SIGTERM, before SIGKILL; 0 is 5s (the SDK's).
	Grace time.Duration
	// Now is the records' clock; nil is time.Now.
	Now func() time.Time
	// Launched, when set, resolves the package the server's command line
	// launches (internal/launched: observed.launched), asked at each check
	// once the server has started, so that the record compares what ran
	// (docs/gateway.md, The launched package). It is given the check's
	// deadline, and runs beside the check's listing.
	Launched func(context.Context) json.RawMessage
	// InputRead, when set, is told the size of each input the session's
	// start reads before the core parses it (the lockfile, the record log,
	// then every page of the first check), and
	// Started is called once the first check is made, before any call is
	// judged. The CLI keeps its collector raised for a start (one burst of
	// allocation, the core's trees of the lockfile and the list) while its
	// inputs are small, and puts Go's default back for the session
	// (cmd/crawlcheck/gc.go).
	InputRead func(n int)
	Started   func()
	// Stdin, Stdout and Stderr are the client's side.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Gateway is one bridged session.
type Gateway struct {
	cfg Config
	// ending is set once the gateway ends the server itself (its client
	// closed stdin, or a signal came): a listing that ending cuts off was
	// not the server's doing, and leaves no record (recheck).
	ending   atomic.Bool
	endpoint string
	log      *preflight.Log
	child    upstream // the server: a child over stdio, or a remote one over HTTP (httpup.go)
	idPrefix string   // the gateway's own request ids begin with it
	nextID   atomic.Int64

	outMu  sync.Mutex // one frame at a time to the client
	outBuf []byte     // the frame being written to the client (outMu)
	inMu   sync.Mutex // one frame at a time to the server
	inBuf  []byte     // the frame being written to the server (inMu)
	errMu  sync.Mutex // one line at a time to stderr

	// skipped counts server stdout lines that were no JSON-RPC message
	// (their first byte after blanks neither '{' nor '['; dropped, said on
	// stderr, the session goes on): each record's observed.stray_lines.
	skipped atomic.Int64

	// changes counts the server's list_changed notifications (and a
	// 2026-07-28 subscription's acknowledgment); changed wakes the re-check
	// watcher.
	changes atomic.Int64
	changed chan struct{}

	checkMu sync.Mutex // one check at a time
	// engine is the core's session engine of the session bridged: the
	// records' recheck and refreshed, check_again and the pace of re-checks.
	engine preflight.Engine

	mu        sync.Mutex // guards the fields below
	lock      []byte
	hs        handshake
	pendingHS map[string]handshakeRequest // the client's handshake requests, by id
	ours      map[string]chan []byte      // the gateway's requests, by id
	rec       *preflight.Record           // the newest record; nil before the first check
	recErr    error                       // the newest check could not be made
	seen      int64                       // list_changed notifications rec covers
	// fresh is when the listing rec judged stops being fresh by the
	// server's own word (a 2026-07-28 server's ttlMs): the first call or
	// list after it waits for a re-check. Zero: no such word.
	fresh    time.Time
	checked  chan struct{} // closed at the first check's end
	started  bool          // the first check has begun
	visible  string        // what the client may see, for list_changed
	logLevel string        // the client's logging/setLevel; "" when it sent none
	prev     string        // record_sha256 of the newest record (without a log)
	exited   bool          // the server's stdout ended
	// initialized: the client sent notifications/initialized;
	// ownInitialized: the gateway sent the server its own.
	initialized, ownInitialized bool
	// held are the client's tools/call held for a check, by id: true once
	// the client cancelled it (it is then dropped, never passed on).
	held     map[string]bool
	exitedCh chan struct{}
	// listenID is the id of the gateway's own subscriptions/listen (a
	// 2026-07-28 session), "" when it opened none; listenAcked is closed
	// when the server acknowledges it.
	listenID    string
	listenAcked chan struct{}
	// recLock is the lockfile rec was checked against (a ui:// template
	// is checked against its pin there); featVisible is, by list, what the
	// client may see of the server's prompts, resources and resource
	// templates (features.go).
	recLock     []byte
	featVisible map[string]string
}

// handshake is what the gateway saw of the session's handshake.
type handshake struct {
	method   string // "initialize" or "server/discover"; "" before
	result   json.RawMessage
	version  string
	caps     json.RawMessage
	meta     json.RawMessage // a server/discover's params._meta, sent on the gateway's requests
	complete bool            // answered: the first answer is held for the check, a later one passes as it came
}

type handshakeRequest struct {
	method  string
	caps    json.RawMessage
	meta    json.RawMessage
	version string
}

// Run runs a gateway until the client closes its stdin (the server is then
// ended as the stdio transport says) or the server exits, and returns the
// server's exit status, the gateway's own. An error is a configuration the
// gateway could not start with (a lockfile it cannot read, a log that does
// not verify, a server that cannot be started): the client sees it on
// stderr and no session.
func Run(ctx context.Context, cfg Config) (int, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = preflight.DefaultTimeout
	}
	if cfg.MaxLine <= 0 {
		cfg.MaxLine = int(preflight.DefaultMaxAnswerBytes)
	}
	if cfg.LockPoll <= 0 {
		cfg.LockPoll = 250 * time.Millisecond
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 5 * time.Second
	}
	if cfg.LockPath == "" {
		return 0, errors.New("--lock is required")
	}
	// The server starts while the gateway reads its lockfile and log (the
	// core's first calls): a client's start-up waits for the slower of the
	// two, not for both. A configuration that cannot be used ends the
	// server before it has read a byte.
	type prepared struct {
		lock []byte
		ep   string
		log  *preflight.Log
		err  error
	}
	ready := make(chan prepared, 1)
	go func() {
		var p prepared
		if p.lock, p.err = readLock(cfg.LockPath, cfg.Now(), cfg.Settings, cfg.InputRead); p.err == nil {
			if p.ep, p.err = endpointOf(cfg); p.err == nil && cfg.LogPath != "" {
				// The log's chain is verified as it is opened (up to 32
				// MiB): counted before the core reads it, as the lockfile.
				if fi, err := os.Stat(cfg.LogPath); err == nil && cfg.InputRead != nil {
					cfg.InputRead(int(fi.Size()))
				}
				p.log, p.err = preflight.OpenLog(cfg.LogPath)
			}
		}
		ready <- p
	}()
	var nonce [12]byte
	rand.Read(nonce[:])
	g := &Gateway{
		cfg: cfg, idPrefix: "crawlcheck-run-" + hex.EncodeToString(nonce[:]) + "-",
		changed: make(chan struct{}, 1), pendingHS: map[string]handshakeRequest{}, ours: map[string]chan []byte{}, held: map[string]bool{},
		checked: make(chan struct{}), exitedCh: make(chan struct{}), listenAcked: make(chan struct{}),
	}
	child, startErr := g.startUpstream()
	p := <-ready
	if p.log != nil {
		defer p.log.Close()
	}
	if p.err != nil {
		if child != nil {
			child.kill()
		}
		return 0, p.err
	}
	g.lock, g.endpoint, g.log = p.lock, p.ep, p.log
	// Writes to a client that went away fail (EPIPE) rather than kill the
	// gateway before it has ended its server; a handled signal, unlike an
	// ignored one, is not inherited by the child.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)

	if startErr != nil {
		g.recordUnstarted()
		return 0, fmt.Errorf("starting the server %s: %w", textsafe.Escape(g.endpoint), startErr)
	}
	g.child = child
	// Every way out ends the server (a panic included); Pdeathsig covers
	// the gateway's own death.
	defer g.child.kill()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	serverDone := make(chan struct{})
	go func() {
		g.serverLoop()
		close(serverDone)
	}()
	clientEOF := make(chan struct{})
	go func() {
		g.clientLoop()
		close(clientEOF)
	}()
	go g.watchChanges(ctx)
	go g.watchLock(ctx)

	select {
	case <-clientEOF:
		g.ending.Store(true)
		g.child.stop(cfg.Grace)
	case <-g.child.done():
	case sig := <-sigs:
		g.ending.Store(true)
		// Forwarded, and the server's stdin closed (its client is going):
		// it ends as it ends on either, within the grace, or is killed.
		g.child.signal(sig.(syscall.Signal))
		g.child.closeInput()
		if !g.child.waitFor(cfg.Grace) {
			g.child.kill()
		}
	}
	<-g.child.done()
	// What the server wrote before it exited still reaches the client.
	select {
	case <-serverDone:
	case <-time.After(time.Second):
	}
	return g.child.exitStatus(), nil
}

// readLock reads the lockfile as the Go preflight does: bounded, strictly,
// and refused when the core cannot read it. count, when set, is told its
// size before the core parses it (Config.InputRead: the start's read only).
func readLock(path string, now time.Time, s preflight.Settings, count func(int)) ([]byte, error) {
	if path == "" {
		return nil, errors.New("--lock is required")
	}
	b, err := readBounded(path, core.MaxRequestBytes)
	if err != nil {
		return nil, fmt.Errorf("reading the lockfile: %w", err)
	}
	if count != nil {
		count(len(b))
	}
	if _, err := preflight.ReadLock(b, now, s); err != nil {
		return nil, fmt.Errorf("lockfile %s: %w", path, err)
	}
	return b, nil
}

// readBounded reads a regular file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s holds %d bytes, more than the %d read", path, fi.Size(), limit)
	}
	// Read into one buffer of the size the file said (a 1,000-tool
	// lockfile is 1.25 MB: io.ReadAll grew and copied its buffer a dozen
	// times on a session start's path), growing only if the file does.
	b := make([]byte, 0, fi.Size()+512)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > limit {
			return nil, fmt.Errorf("%s grew past %d bytes while it was read", path, limit)
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// toClient writes one frame to the client, as it comes (no buffering).
func (g *Gateway) toClient(frame []byte) {
	g.outMu.Lock()
	defer g.outMu.Unlock()
	g.outBuf = line(g.outBuf, frame)
	g.cfg.Stdout.Write(g.outBuf)
}

// toServer writes one frame to the server.
func (g *Gateway) toServer(frame []byte) error {
	g.inMu.Lock()
	defer g.inMu.Unlock()
	g.inBuf = line(g.inBuf, frame)
	_, err := g.child.write(g.inBuf)
	return err
}

// line is frame and its newline in buf, for one write; a buffer grown past
// 1 MiB by a large frame is not kept.
func line(buf, frame []byte) []byte {
	if cap(buf) > 1<<20 {
		buf = nil
	}
	return append(append(buf[:0], frame...), '\n')
}

// say writes one line on stderr, which clients show as the server's log.
// Every string from the server in it was escaped by the core's rule.
func (g *Gateway) say(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	line = strings.ReplaceAll(line, "\n", " ")
	// A lock of its own: a client slow to read stderr never holds up the
	// session's frames on stdout.
	g.errMu.Lock()
	defer g.errMu.Unlock()
	io.WriteString(g.cfg.Stderr, "crawlcheck run: "+line+"\n")
}

// tell writes a line the core worded (already escaped and prefixed
// "crawlcheck: ") to stderr, on one line.
func (g *Gateway) tell(text string) {
	g.errMu.Lock()
	defer g.errMu.Unlock()
	io.WriteString(g.cfg.Stderr, strings.ReplaceAll(text, "\n", " ")+"\n")
}

// clip is a server's line shown safely, at most 200 bytes of it.
func clip(b []byte) string {
	if len(b) > 200 {
		i := 200
		for i > 0 && b[i]&0xC0 == 0x80 {
			i--
		}
		return textsafe.Escape(string(b[:i])) + "…"
	}
	return textsafe.Escape(string(b))
}

// idKey is an id's compact JSON text: 7 and "7" are different ids.
func idKey(id json.RawMessage) string {
	// An id as clients send it (a number, a string without blanks) is
	// already compact: on a call's path it is not copied twice.
	if bytes.IndexAny(id, " \t\r\n") < 0 {
		return string(id)
	}
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

// ours reports whether an id is one of the gateway's own: a string that
// begins with the gateway's prefix, a random nonce the client is never told.
func (g *Gateway) isOurs(id json.RawMessage) (string, bool) {
	s, ok := jsonString(id)
	if !ok {
		return "", false
	}
	return s, strings.HasPrefix(s, g.idPrefix)
}

// errorFrame is a JSON-RPC error response.
func errorFrame(id json.RawMessage, code int, message string, data any) []byte {
	if !hasID(id) {
		id = json.RawMessage("null")
	}
	e := map[string]any{"code": code, "message": message}
	if data != nil {
		e["data"] = data
	}
	body, _ := json.Marshal(e)
	return slices.Concat([]byte(`{"jsonrpc":"2.0","id":`), id, []byte(`,"error":`), body, []byte(`}`))
}

// clientLoop reads the client's frames until its stdin ends.
func (g *Gateway) clientLoop() {
	lr := newLineReader(g.cfg.Stdin, g.cfg.MaxLine)
	for {
		line, tooLong, err := lr.next()
		if err != nil {
			return
		}
		if tooLong {
			g.say("a line of the client's longer than %d bytes was dropped", g.cfg.MaxLine)
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		g.fromClient(line)
	}
}

// fromClient routes one frame of the client's.
func (g *Gateway) fromClient(line []byte) {
	env, err := parseEnvelope(line)
	if err != nil {
		// A batch, or what a lenient server might read as a message the
		// gateway cannot see (two "method" members, invalid UTF-8): not
		// passed on, so nothing reaches the server unjudged.
		t := bytes.TrimSpace(line)
		if len(t) > 0 && t[0] == '[' {
			g.toClient(errorFrame(nil, -32600, "crawlcheck run: JSON-RPC batches are not passed on (MCP has had none since 2025-06-18)", nil))
		} else {
			g.toClient(errorFrame(nil, -32700, "crawlcheck run: not one JSON-RPC message (refused unparsed: "+clip(line)+")", nil))
		}
		return
	}
	if hasID(env.id) {
		if _, ours := g.isOurs(env.id); ours {
			g.toClient(errorFrame(env.id, -32600, "crawlcheck run: this id is reserved for the gateway's own requests", nil))
			return
		}
	}
	switch {
	case env.request() && (env.method == "initialize" || env.method == "server/discover"):
		g.noteHandshakeRequest(env)
	case env.notification() && env.method == "notifications/initialized":
		// The gateway sent the server one of its own when it held the
		// handshake's answer for the check (completeHandshake): the
		// client's is then the same notification again, not passed on.
		g.mu.Lock()
		defer g.mu.Unlock()
		if !g.ownInitialized {
			g.initialized = true
			g.toServer(line)
		}
		return
	case env.notification() && env.method == "notifications/cancelled":
		// A call still held for a check is dropped when its cancel comes;
		// the cancel goes on to the server all the same (for a call it
		// already has).
		if m, ok := strictMembers(env.params); ok && m["requestId"] != nil {
			g.mu.Lock()
			if _, isHeld := g.held[idKey(m["requestId"])]; isHeld {
				g.held[idKey(m["requestId"])] = true
			}
			g.mu.Unlock()
		}
	case env.notification() && judgedMethod(env.method):
		// A request's method without an id (or with a null one): the SDKs'
		// servers ignore it, a lenient server might act on it, and nothing
		// judged it (nothing can be answered either): not passed on.
		g.say("a %s without an id was not passed on: a request needs one, and only a request is judged", env.method)
		return
	case env.request() && env.method == "logging/setLevel":
		var p struct {
			Level string `json:"level"`
		}
		json.Unmarshal(env.params, &p)
		g.mu.Lock()
		g.logLevel = p.Level
		g.mu.Unlock()
	case env.request() && env.method == "tools/list":
		go g.answerList(env)
		return
	case env.request() && env.method == "tools/call":
		g.gateCall(line, env)
		return
	case env.request() && featureListMethod(env.method):
		go g.answerFeatureList(env)
		return
	case env.request() && judgedMethod(env.method):
		g.gateItem(line, env)
		return
	}
	g.toServer(line)
}

// judgedMethod reports whether the session engine judges a request of
// method before it reaches the server (a tools/call, or a call of an item).
func judgedMethod(method string) bool {
	switch method {
	case "tools/call", "prompts/get", "resources/read", "completion/complete":
		return true
	}
	return false
}

func (g *Gateway) noteHandshakeRequest(env envelope) {
	m, _ := strictMembers(env.params)
	hr := handshakeRequest{method: env.method}
	if env.method == "initialize" {
		hr.caps = m["capabilities"]
		json.Unmarshal(m["protocolVersion"], &hr.version)
	}
	if meta, ok := strictMembers(m["_meta"]); ok {
		hr.meta = m["_meta"]
		if c := meta["io.modelcontextprotocol/clientCapabilities"]; c != nil {
			hr.caps = c
		}
		json.Unmarshal(meta["io.modelcontextprotocol/protocolVersion"], &hr.version)
	}
	g.mu.Lock()
	g.pendingHS[idKey(env.id)] = hr
	g.mu.Unlock()
}

// serverLoop reads the server's frames until its stdout ends.
func (g *Gateway) serverLoop() {
	defer func() {
		g.mu.Lock()
		g.exited = true
		close(g.exitedCh)
		g.mu.Unlock()
	}()
	lr := newLineReader(g.child.output(), g.cfg.MaxLine)
	for {
		line, tooLong, err := lr.next()
		if err != nil {
			return
		}
		if tooLong {
			g.say("a line of the server's stdout longer than %d bytes was dropped", g.cfg.MaxLine)
			g.toListings(nil) // the answer the gateway waits for may be the one cut off
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		g.fromServer(line)
	}
}

// toListings hands frame (nil: a line cut off at the cap) to the gateway's
// tools/list requests in flight, as their answer: a frame whose id cannot
// be read is the answer the listing waits for, if any is.
func (g *Gateway) toListings(frame []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for id, ch := range g.ours {
		if id == g.listenID {
			continue
		}
		select {
		case ch <- frame:
		default:
		}
	}
}

// fromServer routes one frame of the server's.
func (g *Gateway) fromServer(line []byte) {
	env, err := parseEnvelope(line)
	if err != nil {
		t := bytes.TrimSpace(line)
		if len(t) > 0 && t[0] == '[' {
			g.toClient(line) // a batch: the client's to read
			return
		}
		if len(t) > 0 && t[0] == '{' {
			// A message that does not parse: not a stray line but a
			// malformed one (docs/mcpserver.md, Stray lines). Over stdio it
			// names no id the gateway can trust, so, as the Go capture does,
			// it is the answer to the gateway's listing in flight, which the
			// core then reports as response_malformed.
			g.say("a line of the server's stdout that looks like a JSON-RPC message does not parse: %s", clip(line))
			g.toListings(line)
			return
		}
		n := g.skipped.Add(1)
		g.say("a line of the server's stdout that is not a JSON-RPC message was dropped (%d so far): %s", n, clip(line))
		return
	}
	switch {
	case env.response():
		if s, ours := g.isOurs(env.id); ours {
			g.mu.Lock()
			ch := g.ours[s]
			g.mu.Unlock()
			if ch != nil {
				// What the gateway asks is tools/list: the page the core
				// reads is the answer's result (or, for an answer without
				// one, the frame), which parseEnvelope has just cut out of
				// this validated frame, as preflight.PageOf would cut it
				// again (the same one-pass walk, membersOfValid's): a
				// 1,000-tool page is not scanned a fourth time.
				page := line
				if env.result != nil {
					page = env.result
				}
				select {
				case ch <- page:
				default:
				}
			}
			return
		}
		if g.noteHandshakeAnswer(line, env) {
			return // held for the check, and passed on after it
		}
	case env.notification() && env.method == "notifications/subscriptions/acknowledged" && g.ownAck(env.params):
		return // the gateway's own subscription: the client asked for none
	case env.notification() && env.method == "notifications/subscriptions/acknowledged":
		// A 2026-07-28 server announces changes only to the subscriptions
		// it holds: a change made between the gateway's first listing and
		// this acknowledgment of the client's subscriptions/listen would be
		// announced to nobody. The gateway lists once more after it (the Go
		// preflight waits for it instead, but the gateway cannot know
		// whether the client will subscribe at all).
		g.mu.Lock()
		started := g.started
		g.mu.Unlock()
		if started {
			g.changes.Add(1)
			select {
			case g.changed <- struct{}{}:
			default:
			}
		}
	case env.notification() && (env.method == "notifications/tools/list_changed" ||
		env.method == "notifications/prompts/list_changed" || env.method == "notifications/resources/list_changed"):
		// Not passed on: the gateway re-checks (tools, prompts and
		// resources are one check), and tells the client when what it may
		// see changed.
		g.changes.Add(1)
		select {
		case g.changed <- struct{}{}:
		default:
		}
		return
	}
	g.toClient(line)
}

// noteHandshakeAnswer keeps the server's answer to the client's handshake.
// The first result is held (held is true) while the gateway checks the
// session: the answer carries the server's instructions, which the client
// hands its model, so it is passed on only once the core has said what of
// them the model may be given (completeHandshake).
func (g *Gateway) noteHandshakeAnswer(frame []byte, env envelope) (held bool) {
	g.mu.Lock()
	if len(g.pendingHS) == 0 { // every answer after the handshake's
		g.mu.Unlock()
		return false
	}
	hr, ok := g.pendingHS[idKey(env.id)]
	if !ok {
		g.mu.Unlock()
		return false
	}
	delete(g.pendingHS, idKey(env.id))
	if env.result == nil || g.hs.complete || hr.method == "server/discover" && !offersVersion(env.result, hr.version) {
		// An error, or a server/discover whose server does not speak the
		// revision asked (a stateful go-sdk server over HTTP): the client
		// falls back to initialize, which is the session's handshake.
		g.mu.Unlock()
		return false
	}
	g.hs = handshake{method: hr.method, result: env.result, caps: hr.caps, meta: hr.meta, version: hr.version, complete: true}
	if hr.method == "initialize" {
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(env.result, &r)
		g.hs.version = r.ProtocolVersion
	}
	g.mu.Unlock()
	go g.completeHandshake(frame, env.result)
	return true
}

// offersVersion reports whether a server/discover result's
// supportedVersions holds version.
func offersVersion(result json.RawMessage, version string) bool {
	m, _ := strictMembers(result)
	var versions []string
	json.Unmarshal(m["supportedVersions"], &versions)
	return slices.Contains(versions, version)
}

// completeHandshake ends the handshake the server answered: for
// initialize, the server is sent notifications/initialized (the gateway's
// own, unless the client's already went), the session is checked, and the
// answer goes to the client with the instructions the core's handoff gives
// (withInstructions).
func (g *Gateway) completeHandshake(frame []byte, result json.RawMessage) {
	g.mu.Lock()
	if g.hs.method == "initialize" && !g.initialized {
		g.ownInitialized = true
		g.toServer([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	}
	g.mu.Unlock()
	g.firstCheck()
	g.toClient(g.withInstructions(frame, result))
}

// withInstructions is the handshake's answer with its instructions as the
// core's handoff gives them to the model (Handoff.Instructions): unchanged
// when they are what the server sent (the answer's bytes as they came),
// else the handoff's text, or "" when it gives none (a change that blocks,
// a lockfile that does not cover them, a check that could not be made).
// The instructions value is replaced where it lies in the frame: result
// and the value are subslices of frame (parseEnvelope and MembersOfValid
// alias their input), so its offset is the difference of the capacities.
func (g *Gateway) withInstructions(frame []byte, result json.RawMessage) []byte {
	m, ok := strictMembers(result)
	v := m["instructions"]
	if !ok || v == nil {
		return frame
	}
	g.mu.Lock()
	var give *string
	if g.rec != nil && g.rec.Handoff != nil && g.recErr == nil {
		give = g.rec.Handoff.Instructions
	}
	g.mu.Unlock()
	var sent string
	json.Unmarshal(v, &sent)
	if give != nil && *give == sent {
		return frame
	}
	repl := []byte(`""`)
	if give != nil {
		repl, _ = json.Marshal(*give)
	}
	off := cap(frame) - cap(v)
	if off < 0 || off+len(v) > len(frame) || !bytes.Equal(frame[off:off+len(v)], v) {
		// Never so by construction; were it, nothing of the text goes.
		var id struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(frame, &id)
		return errorFrame(id.ID, -32603, "crawlcheck run: the server's instructions could not be withheld from its answer", nil)
	}
	g.say("the server's instructions are not what the record lets the model be given: the client gets %s", textsafe.Escape(string(repl)))
	return slices.Concat(frame[:off], repl, frame[off+len(v):])
}
