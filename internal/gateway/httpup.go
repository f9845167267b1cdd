package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/crawlcheck/verifier/core/textsafe"
	"github.com/crawlcheck/verifier/internal/preflight"
)

// Remote is a server the gateway reaches over HTTP (crawlcheck run --url):
// the stdio-to-HTTP bridge a client's config already uses for a remote
// server, with the gateway's checks between the two. docs/gateway.md,
// "A remote server".
type Remote struct {
	// URL is the streamable HTTP endpoint or, with SSE, the event stream
	// of the legacy HTTP+SSE transport (protocol 2024-11-05).
	URL string
	SSE bool
	// Header is sent with every request (--header and the like): the
	// server's credentials, held by the transport alone.
	Header http.Header
	// Authorization, when set and Header names no Authorization, is asked
	// before every request for that header's value ("Bearer …", "" for
	// none): the login kept for URL, refreshed when it is due. The gateway
	// is the OAuth client, so the token's audience is the server it calls.
	Authorization func(ctx context.Context) (string, error)
	// Client makes the requests; nil is one of http.DefaultTransport
	// without a deadline (an event stream lives as long as the session).
	Client *http.Client
}

// Standard headers of the streamable HTTP transport.
const (
	hdrSession  = "Mcp-Session-Id"
	hdrVersion  = "Mcp-Protocol-Version"
	hdrMethod   = "Mcp-Method"
	hdrName     = "Mcp-Name"
	hdrLastID   = "Last-Event-ID"
	metaVersion = "io.modelcontextprotocol/protocolVersion"
	// standardHeadersVersion is the first revision that asks a client to
	// repeat the method and the name of a request in headers.
	standardHeadersVersion = "2026-07-28"
)

// httpUpstream turns an HTTP session into the stream of frames a stdio
// server's stdout is: every frame the server sends (a POST's JSON answer,
// the events of a POST's or the session's event stream, the legacy
// transport's stream) is written, one a line, to a pipe serverLoop reads,
// and every frame the gateway writes is POSTed. The session's state is
// what the Go preflight's --url capture keeps (go-sdk's client transport):
// the Mcp-Session-Id the handshake's answer names, and the protocol
// version on every later request.
type httpUpstream struct {
	g      *Gateway
	r      Remote
	client *http.Client
	pr     *io.PipeReader
	pw     *io.PipeWriter
	outMu  sync.Mutex // one frame at a time into the pipe

	ctx    context.Context // ends every request when the session ends
	cancel context.CancelFunc

	start sync.Once // the legacy transport's stream, at the first frame

	mu        sync.Mutex
	session   string        // Mcp-Session-Id, "" before the handshake's answer (or a server without)
	version   string        // the protocol version initialize's answer named
	postURL   string        // where frames are POSTed (the legacy endpoint event's URL)
	ready     chan struct{} // closed when postURL is known (legacy) or no handshake is in flight
	listening bool          // the session's GET stream is open (or was tried)
	faults    map[string]upFault
	metadata  string // the resource metadata of the newest 401 or 403 handed to a listing
	authSaid  bool   // a login that could not be used was said
	// endWords, set when the legacy stream could not be opened, answer
	// the client's first request.
	endWords string
	// hsFrame is the handshake the server last took, and hsEnv its
	// envelope: sent again (with an id of the gateway's own) when the
	// server ends the session (renew).
	hsFrame []byte
	hsEnv   envelope
	renewMu sync.Mutex // one renewal at a time
	closing bool

	doneCh chan struct{}
	once   sync.Once
	status int
}

// upFault is why one of the gateway's own requests got no answer.
type upFault struct{ code, metadata string }

func newHTTPUpstream(g *Gateway) *httpUpstream {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	h := &httpUpstream{g: g, r: g.cfg.Remote, client: g.cfg.Remote.Client, pr: pr, pw: pw, ctx: ctx, cancel: cancel,
		postURL: g.cfg.Remote.URL, ready: make(chan struct{}), faults: map[string]upFault{}, doneCh: make(chan struct{})}
	if h.client == nil {
		h.client = &http.Client{}
	}
	if !h.r.SSE {
		close(h.ready)
	}
	return h
}

func (h *httpUpstream) output() io.Reader     { return h.pr }
func (h *httpUpstream) done() <-chan struct{} { return h.doneCh }
func (h *httpUpstream) exitStatus() int       { return h.status }

// signal is nothing to send over HTTP: on a signal, Run then closes the
// input (closeInput: the session ends as when the client goes) and waits.
func (h *httpUpstream) signal(syscall.Signal) {}
func (h *httpUpstream) closeInput()           { go h.stop(h.g.cfg.Grace) }
func (h *httpUpstream) kill()                 { h.finish(0) }

func (h *httpUpstream) waitFor(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-h.doneCh:
		return true
	case <-t.C:
		return false
	}
}

// stop ends the session as the streamable HTTP transport says a client
// ends it: a DELETE naming the session (a server that keeps none, or
// answers 405, is not waited for past grace).
func (h *httpUpstream) stop(grace time.Duration) {
	// A check in flight (a re-check the server's last notification
	// started) ends first, within grace: the session it lists through is
	// still open, so its record is the server's answer, not the end of a
	// session the client closed.
	for end := time.Now().Add(grace); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if h.g.checkMu.TryLock() {
			h.g.checkMu.Unlock()
			break
		}
	}
	h.mu.Lock()
	session, closing := h.session, h.closing
	h.closing = true
	h.mu.Unlock()
	if session != "" && !h.r.SSE && !closing {
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, h.r.URL, nil)
		if err == nil {
			h.setHeaders(ctx, req, "")
			if resp, err := h.client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	h.finish(0)
}

// finish ends the session with status: every request and stream ends, and
// serverLoop reads the end of the pipe.
func (h *httpUpstream) finish(status int) {
	h.once.Do(func() {
		h.mu.Lock()
		h.closing = true
		h.mu.Unlock()
		h.status = status
		h.cancel()
		h.outMu.Lock()
		h.pw.Close()
		h.outMu.Unlock()
		close(h.doneCh)
	})
}

// emit hands one frame of the server's to the gateway, as the line a stdio
// server would have written: the frame's bytes, with any line break in it
// (whitespace between tokens, the only place valid JSON holds one) made a
// blank, so that a pretty-printed answer is still one line.
func (h *httpUpstream) emit(frame []byte) {
	frame = bytes.TrimSpace(frame)
	if len(frame) == 0 {
		return
	}
	if bytes.ContainsAny(frame, "\r\n") {
		frame = bytes.Map(func(r rune) rune {
			if r == '\r' || r == '\n' {
				return ' '
			}
			return r
		}, frame)
	}
	h.outMu.Lock()
	defer h.outMu.Unlock()
	h.pw.Write(append(frame, '\n'))
}

// tooLarge is a frame past the gateway's bound: dropped and said, and the
// answer the gateway's own listing waits for, as serverLoop treats a line
// past the bound.
func (h *httpUpstream) tooLarge() {
	h.g.say("a frame of the server's longer than %d bytes was dropped", h.g.cfg.MaxLine)
	h.g.toListings(nil)
}

// write POSTs one frame. A request's answer is read in a goroutine of its
// own (a long tools/call holds up nothing else); a notification, a
// response and the handshake are sent before write returns, so that the
// server receives them in the order the client sent them and no request
// leaves before the session it belongs to is known.
func (h *httpUpstream) write(line []byte) (int, error) {
	frame := bytes.Clone(bytes.TrimRight(line, "\r\n"))
	env, err := parseEnvelope(frame)
	if err != nil {
		return 0, fmt.Errorf("not a JSON-RPC message: %w", err)
	}
	select {
	case <-h.doneCh:
		return 0, errors.New("the session has ended")
	default:
	}
	if h.r.SSE {
		h.start.Do(func() { go h.legacyStream() })
	}
	h.mu.Lock()
	ready := h.ready
	h.mu.Unlock()
	select {
	case <-ready:
	case <-h.doneCh:
		return 0, errors.New("the session has ended")
	}
	h.mu.Lock()
	words := h.endWords
	h.mu.Unlock()
	if words != "" {
		// The legacy stream could not be opened: the client's request is
		// answered with the record's words, then the session ends.
		if env.request() {
			h.g.toClient(errorFrame(env.id, -32603, "crawlcheck run: "+words, nil))
		}
		h.finish(1)
		return 0, errors.New("the session could not be opened")
	}
	handshake := env.request() && (env.method == "initialize" || env.method == "server/discover")
	if env.request() && !handshake {
		go func() {
			if resp := h.post(frame, env); resp != nil {
				h.answer(resp, env)
			}
		}()
		return len(line), nil
	}
	if handshake {
		// Requests wait for the handshake's answer to name the session.
		h.mu.Lock()
		if h.session == "" {
			wait := make(chan struct{})
			h.ready = wait
			defer close(wait)
		}
		h.mu.Unlock()
	}
	resp := h.post(frame, env)
	if resp == nil {
		return len(line), nil
	}
	if env.request() {
		go h.answer(resp, env)
		return len(line), nil
	}
	resp.Body.Close()
	if env.method == "notifications/initialized" {
		h.listen()
	}
	return len(line), nil
}

// post sends one frame and returns the server's 2xx response, or nil when
// there is none (its failure is then said or answered: failed).
func (h *httpUpstream) post(frame []byte, env envelope) *http.Response {
	resp, sent, err := h.send(frame, env)
	if err == nil && resp.StatusCode == http.StatusNotFound && sent != "" && h.renew(sent) {
		// The server ended the session (404 to its id): a new one was
		// opened, and the frame goes again, once, in it.
		resp.Body.Close()
		resp, _, err = h.send(frame, env)
	}
	if err != nil {
		h.failed(env, netFault(err), "", 0)
		return nil
	}
	switch {
	case resp.StatusCode/100 == 2:
		return resp
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		code := preflight.FaultUnauthorized
		if resp.StatusCode == http.StatusForbidden {
			code = preflight.FaultForbidden
		}
		resp.Body.Close()
		h.failed(env, code, preflight.ResourceMetadataOf(resp.Header), resp.StatusCode)
		return nil
	}
	// A JSON-RPC answer with an HTTP error (go-sdk's servers answer a
	// request they refuse so, e.g. server/discover to a stateful server)
	// is the server's answer, passed on as it came.
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" && env.request() {
		body, err := io.ReadAll(io.LimitReader(resp.Body, int64(h.g.cfg.MaxLine)+1))
		if a, perr := parseEnvelope(bytes.TrimSpace(body)); err == nil && perr == nil && a.response() && idKey(a.id) == idKey(env.id) {
			h.emit(body)
			return nil
		}
	}
	h.failed(env, preflight.FaultSessionFailed, "", resp.StatusCode)
	return nil
}

// send POSTs one frame with the session's headers, and keeps the session
// id the answer names when none is kept; sent is the id it went with.
func (h *httpUpstream) send(frame []byte, env envelope) (resp *http.Response, sent string, err error) {
	h.mu.Lock()
	target := h.postURL
	h.mu.Unlock()
	req, err := http.NewRequestWithContext(h.ctx, http.MethodPost, target, bytes.NewReader(frame))
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	h.setHeaders(h.ctx, req, versionOf(env))
	if env.request() {
		setStandardHeaders(req.Header, env)
	}
	sent = req.Header.Get(hdrSession)
	if resp, err = h.client.Do(req); err != nil {
		return nil, sent, err
	}
	if sid := resp.Header.Get(hdrSession); sid != "" && !h.r.SSE {
		h.mu.Lock()
		if h.session == "" {
			h.session = sid
		}
		h.mu.Unlock()
	}
	if env.request() && (env.method == "initialize" || env.method == "server/discover") && resp.StatusCode/100 == 2 {
		h.mu.Lock()
		h.hsFrame, h.hsEnv = frame, env
		h.mu.Unlock()
	}
	return resp, sent, nil
}

// renew opens a new session when the server ended the one with id old
// (it answered 404 to it, as the transport says a server does to a
// session it no longer holds): the client's handshake again, with an id of
// the gateway's own and its answer kept from the client, then
// notifications/initialized and the session's stream. The server the
// gateway judged is not, or not only, the one now answering: the session
// is checked again (a list_changed of the gateway's own), and calls wait
// for that check. false when no new session could be opened.
func (h *httpUpstream) renew(old string) bool {
	h.renewMu.Lock()
	defer h.renewMu.Unlock()
	h.mu.Lock()
	if h.session != old {
		renewed := h.session != "" // another request renewed it already
		h.mu.Unlock()
		return renewed
	}
	hs, hsEnv := h.hsFrame, h.hsEnv
	h.session, h.listening = "", false
	h.mu.Unlock()
	if hs == nil {
		return false
	}
	id, _ := json.Marshal(h.g.idPrefix + "session-" + strconv.FormatInt(h.g.nextID.Add(1), 10))
	method, _ := json.Marshal(hsEnv.method)
	frame := []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"method":` + string(method) + `,"params":` + string(hsEnv.params) + `}`)
	env, err := parseEnvelope(frame)
	if err != nil {
		return false
	}
	resp, _, err := h.send(frame, env)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	h.mu.Lock()
	renewed := h.session != "" && resp.StatusCode/100 == 2
	h.mu.Unlock()
	if !renewed {
		return false
	}
	// The answer is read to its end here; the gateway's own id makes
	// serverLoop drop it, unread by the client.
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		h.events(resp.Body, env, idKey(env.id))
	} else if body, err := io.ReadAll(io.LimitReader(resp.Body, int64(h.g.cfg.MaxLine)+1)); err == nil {
		h.noteVersion(env, body)
	}
	if env.method == "initialize" {
		initialized := []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		note, _ := parseEnvelope(initialized)
		if r, _, err := h.send(initialized, note); err == nil {
			r.Body.Close()
		}
		h.listen()
	}
	h.g.say("the server ended its session; a new one is open, and its tools are checked again")
	h.g.changes.Add(1)
	select {
	case h.g.changed <- struct{}{}:
	default:
	}
	return true
}

// versionOf is the protocol version a request names in its _meta (every
// request of a 2026-07-28 session does), "" when it names none.
func versionOf(env envelope) string {
	p, ok := strictMembers(env.params)
	if !ok {
		return ""
	}
	meta, ok := strictMembers(p["_meta"])
	if !ok {
		return ""
	}
	v, _ := jsonString(meta[metaVersion])
	return v
}

// setHeaders sets what every request of the session carries: its
// credentials, the session's id and the protocol version (the request's
// own, else the one initialize's answer named).
func (h *httpUpstream) setHeaders(ctx context.Context, req *http.Request, version string) {
	for name, values := range h.r.Header {
		req.Header[name] = values
	}
	if h.r.Authorization != nil && req.Header.Get("Authorization") == "" {
		auth, err := h.r.Authorization(ctx)
		if err != nil {
			h.mu.Lock()
			said := h.authSaid
			h.authSaid = true
			h.mu.Unlock()
			if !said {
				h.g.say("the login kept for %s was not used: %s", textsafe.Escape(h.r.URL), textsafe.Escape(err.Error()))
			}
		} else if auth != "" {
			req.Header.Set("Authorization", auth)
		}
	}
	h.mu.Lock()
	if version == "" {
		version = h.version
	}
	if h.session != "" {
		req.Header.Set(hdrSession, h.session)
	}
	h.mu.Unlock()
	if version != "" {
		req.Header.Set(hdrVersion, version)
	}
}

// setStandardHeaders sets the 2026-07-28 revision's Mcp-Method and
// Mcp-Name from the body they must equal (the request's method, and the
// name or URI of a tools/call, prompts/get or resources/read), on a
// request of that revision or later; a value that is not printable ASCII
// is sent in the revision's base64 form.
func setStandardHeaders(h http.Header, env envelope) {
	if v := h.Get(hdrVersion); v == "" || v < standardHeadersVersion {
		return
	}
	h.Set(hdrMethod, headerValue(env.method))
	member := ""
	switch env.method {
	case "tools/call", "prompts/get":
		member = "name"
	case "resources/read":
		member = "uri"
	}
	if member == "" {
		return
	}
	if p, ok := strictMembers(env.params); ok {
		if name, ok := jsonString(p[member]); ok {
			h.Set(hdrName, headerValue(name))
		}
	}
}

// headerValue is s as a header carries it: as it is when it is printable
// ASCII without blanks at its ends, else "=?base64?…?=".
func headerValue(s string) string {
	plain := s == "" || s[0] != ' ' && s[len(s)-1] != ' '
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] <= 0x7e
	}
	if plain {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// netFault is the host fault of a request that got no HTTP answer.
func netFault(err error) string {
	var (
		dial   *net.OpError
		netErr net.Error
	)
	switch {
	case errors.As(err, &netErr) && netErr.Timeout():
		return preflight.FaultTimeout
	case errors.As(err, &dial) && dial.Op == "dial":
		return preflight.FaultConnectRefused
	}
	return preflight.FaultSessionFailed
}

// answer reads a request's 2xx response: a JSON answer, or an event
// stream of the server's frames that ends with the answer. A stream that
// ends before the answer is resumed from its last event (Last-Event-ID),
// as the transport allows, a few times; then the request is answered
// with the fault.
func (h *httpUpstream) answer(resp *http.Response, env envelope) {
	if h.r.SSE {
		resp.Body.Close() // the legacy transport answers on its stream
		return
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "text/event-stream" {
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, int64(h.g.cfg.MaxLine)+1))
		switch {
		case len(body) > h.g.cfg.MaxLine:
			h.tooLarge()
		case err != nil:
			h.failed(env, preflight.FaultSessionEnded, "", 0)
		case resp.StatusCode == http.StatusAccepted || len(bytes.TrimSpace(body)) == 0:
			h.failed(env, preflight.FaultSessionFailed, "", resp.StatusCode)
		default:
			h.noteVersion(env, body)
			h.emit(body)
		}
		return
	}
	want := idKey(env.id)
	for try := 0; ; try++ {
		answered, last := h.events(resp.Body, env, want)
		resp.Body.Close()
		if answered {
			return
		}
		if last == "" || try == 2 || h.ctx.Err() != nil {
			h.failed(env, preflight.FaultSessionEnded, "", 0)
			return
		}
		if resp = h.get(last); resp == nil {
			h.failed(env, preflight.FaultSessionEnded, "", 0)
			return
		}
	}
}

// noteVersion keeps the protocol version initialize's answer names.
func (h *httpUpstream) noteVersion(env envelope, frame []byte) {
	if env.method != "initialize" {
		return
	}
	a, err := parseEnvelope(bytes.TrimSpace(frame))
	if err != nil || idKey(a.id) != idKey(env.id) {
		return
	}
	if r, ok := strictMembers(a.result); ok {
		if v, ok := jsonString(r["protocolVersion"]); ok {
			h.mu.Lock()
			h.version = v
			h.mu.Unlock()
		}
	}
}

// failed is a frame the server did not take or answer (an HTTP error, a
// request that got no answer, a stream that broke): the fault code, the
// resource metadata URL of a 401 or 403, and the HTTP status (0: none).
// One of the gateway's own listings gets the fault as its answer (the
// record names it); the client's handshake is recorded as the session's
// check, and answered with the record's words; any other request of the
// client's is answered with an error saying what happened.
func (h *httpUpstream) failed(env envelope, code, metadata string, status int) {
	h.mu.Lock()
	closing := h.closing
	h.mu.Unlock()
	if closing {
		return
	}
	if !env.request() {
		if env.method != "" || hasID(env.id) {
			h.g.say("the server did not take a frame (%s)", faultWords(code, status))
		}
		return
	}
	if s, ours := h.g.isOurs(env.id); ours {
		h.g.mu.Lock()
		ch := h.g.ours[s]
		h.g.mu.Unlock()
		h.mu.Lock()
		h.faults[s] = upFault{code, metadata}
		h.mu.Unlock()
		if ch != nil {
			select {
			case ch <- nil:
			default:
			}
		}
		return
	}
	msg := "crawlcheck run: the server did not answer (" + faultWords(code, status) + ")"
	if env.method == "initialize" || env.method == "server/discover" {
		h.g.mu.Lock()
		complete := h.g.hs.complete
		h.g.mu.Unlock()
		if !complete {
			if line := h.g.recordHandshakeFault(code, metadata, status); line != "" {
				msg = "crawlcheck run: " + line
			}
		}
	} else if code == preflight.FaultUnauthorized || code == preflight.FaultForbidden {
		msg += ": log in again with `crawlcheck login --url " + textsafe.Escape(h.r.URL) + "`, or send its credentials with --header, --header-env or --header-file"
	}
	h.g.toClient(errorFrame(env.id, -32603, msg, nil))
}

// faultWords says a fault for stderr and an error's message.
func faultWords(code string, status int) string {
	if status != 0 {
		return "HTTP " + strconv.Itoa(status) + ", " + code
	}
	return code
}

// takeFault is the fault one of the gateway's own requests got instead of
// an answer, "" for none (its answer was cut off at the bound).
func (h *httpUpstream) takeFault(id string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.faults[id]
	delete(h.faults, id)
	if f.code != "" {
		h.metadata = f.metadata
	}
	return f.code
}

// cutOff is why the gateway's request id got no page: the transport's
// fault over HTTP, else an answer past the bound.
func (g *Gateway) cutOff(id string) string {
	if h, ok := g.child.(*httpUpstream); ok {
		if code := h.takeFault(id); code != "" {
			return code
		}
	}
	return preflight.FailureTooLarge
}

// metadataOf is the resource metadata URL the record of a listing that
// failed with fault names: the 401's or 403's, "" for any other.
func (g *Gateway) metadataOf(fault string) string {
	h, ok := g.child.(*httpUpstream)
	if !ok || fault != preflight.FaultUnauthorized && fault != preflight.FaultForbidden {
		return ""
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.metadata
}

// recordHandshakeFault records a session the server refused at its
// handshake (a 401 without a login, a server that is down): the record
// says so, as crawlcheck check's does, and its verdict is said on stderr
// and returned for the client's answer.
func (g *Gateway) recordHandshakeFault(code, metadata string, status int) string {
	g.mu.Lock()
	if g.started {
		g.mu.Unlock()
		return ""
	}
	g.started = true
	g.mu.Unlock()
	g.checkMu.Lock()
	defer g.checkMu.Unlock()
	obs := preflight.Observation{Endpoint: g.endpoint, Failure: code, FailureAt: preflight.AtHandshake, ResourceMetadata: metadata}
	seen := g.changes.Load()
	rec, _, lock, err := g.check(obs, seen)
	g.adopt(rec, lock, err, seen, time.Time{})
	close(g.checked)
	if err != nil {
		return ""
	}
	line, _ := g.verdict(rec)
	// The refusal's words shorten the fault's detail; the client's
	// answer leads with all of it (the core's words: what the server
	// answered, what to do), the step a person takes first.
	for _, f := range rec.Observations {
		var d struct {
			Detail string `json:"detail"`
		}
		if f.Observation == rec.Observed.Failure && json.Unmarshal(f.Detail, &d) == nil && d.Detail != "" {
			return d.Detail + "; " + line
		}
	}
	return line
}
