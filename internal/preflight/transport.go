package preflight

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport is an mcp.Transport that records the exact bytes of every
// JSON-RPC frame its session receives, matched to the calls that asked for
// them. Build one with Wrap and hand it to mcp.Client.Connect (or to
// Connect in this package), then to Observe.
//
// The capture sits below the SDK's Connection, on the bytes: a frame that is
// not JSON never reaches a Connection (the SDK's decoder fails first), and a
// wrapper Connection would hide the streamable client connection's
// unexported session hook, which the SDK uses to send MCP-Protocol-Version
// and open the legacy notification stream.
type Transport struct {
	inner    mcp.Transport
	endpoint string
	rec      *recorder
	// checkOnly: the session ends with the check (Options.CheckOnly).
	checkOnly bool
	// headers are sent with every HTTP request (Config.Headers).
	headers http.Header
}

// Wrap returns a recording Transport for an SDK transport. Three kinds are
// supported, the two MCP defines and the one it replaced:
// *mcp.CommandTransport (stdio; Wrap starts the command itself, as the SDK
// would, to reach its stdout), *mcp.StreamableClientTransport and
// *mcp.SSEClientTransport (the HTTP+SSE transport of protocol 2024-11-05);
// for the last two the HTTPClient's transport is wrapped.
func Wrap(t mcp.Transport) (*Transport, error) {
	switch t := t.(type) {
	case *mcp.CommandTransport:
		if t.Command == nil {
			return nil, errors.New("preflight: CommandTransport has no Command")
		}
		ep, err := StdioEndpoint(t.Command.Args)
		if err != nil {
			return nil, fmt.Errorf("preflight: %w", err)
		}
		return &Transport{inner: t, endpoint: ep, rec: newRecorder()}, nil
	case *mcp.StreamableClientTransport:
		ep, err := URLEndpoint(t.Endpoint)
		if err != nil {
			return nil, fmt.Errorf("preflight: %w", err)
		}
		return &Transport{inner: t, endpoint: ep, rec: newRecorder()}, nil
	case *mcp.SSEClientTransport:
		// The record names the stream's URL: the server is the one approved
		// there, whatever message endpoint it then names (of its origin).
		ep, err := URLEndpoint(t.Endpoint)
		if err != nil {
			return nil, fmt.Errorf("preflight: %w", err)
		}
		return &Transport{inner: t, endpoint: ep, rec: newRecorder()}, nil
	}
	return nil, fmt.Errorf("preflight: cannot capture raw frames from a %T; use mcp.CommandTransport, mcp.StreamableClientTransport or mcp.SSEClientTransport", t)
}

// command is the program of a stdio transport's command line, as given
// ("" over HTTP).
func (t *Transport) command() string {
	if ct, ok := t.inner.(*mcp.CommandTransport); ok && len(ct.Command.Args) > 0 {
		return ct.Command.Args[0]
	}
	return ""
}

// Endpoint names the server this transport reaches: the URL for HTTP,
// "stdio:" and the command line for stdio (see StdioEndpoint).
func (t *Transport) Endpoint() string { return t.endpoint }

// listChangedNotifications returns how many notifications/tools/list_changed
// the session has received so far.
func (t *Transport) listChangedNotifications() int { return t.rec.listChangedCount() }

// Connect implements mcp.Transport.
func (t *Transport) Connect(ctx context.Context) (mcp.Connection, error) {
	switch inner := t.inner.(type) {
	case *mcp.CommandTransport:
		return t.connectCommand(ctx, inner)
	case *mcp.StreamableClientTransport:
		cp := *inner
		cp.HTTPClient = tapClient(inner.HTTPClient, &httpTap{rec: t.rec}, t.endpoint, t.headers)
		return cp.Connect(ctx)
	case *mcp.SSEClientTransport:
		stream, err := url.Parse(inner.Endpoint)
		if err != nil {
			return nil, fmt.Errorf("preflight: SSE endpoint: %w", err)
		}
		cp := *inner
		cp.HTTPClient = tapClient(inner.HTTPClient, &httpTap{rec: t.rec, stream: stream}, t.endpoint, t.headers)
		// The SDK's own bound on an event (16 MiB by default) sits above
		// MaxAnswerBytes, so that the tap's refusal (answer_too_large)
		// comes first, whatever the limit (as for a stdio line).
		cp.MaxEventSize = int(t.rec.limit()) + 1<<16
		return connectSSE(ctx, &cp)
	}
	return nil, fmt.Errorf("preflight: unsupported transport %T", t.inner)
}

// connectSSE connects the legacy transport. go-sdk's SSE client reads its
// stream under the context Connect is given, so the session would end with
// the handshake's deadline (a Session re-checks long after it): the stream
// gets a context of its own, ended when the connection closes, and ctx
// bounds the connect alone.
func connectSSE(ctx context.Context, t *mcp.SSEClientTransport) (mcp.Connection, error) {
	life, end := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, end)
	conn, err := t.Connect(life)
	if !stop() {
		// ctx ended while connecting: the stream is ended with it.
		if err == nil {
			conn.Close()
		}
		return nil, ctx.Err()
	}
	if err != nil {
		end()
		return nil, err
	}
	return &sseConn{Connection: conn, end: end}, nil
}

// sseConn ends its stream's context when it closes.
type sseConn struct {
	mcp.Connection
	end context.CancelFunc
}

func (c *sseConn) Close() error {
	err := c.Connection.Close()
	c.end()
	return err
}

// tapClient returns a copy of the SDK transport's HTTP client (a new one if
// it has none) whose round trips go through tap, on to its own transport,
// with headers added to each request to the endpoint's origin.
func tapClient(c *http.Client, tap *httpTap, endpoint string, headers http.Header) *http.Client {
	client := &http.Client{}
	tap.base = http.DefaultTransport
	if c != nil {
		*client = *c
		if client.Transport != nil {
			tap.base = client.Transport
		}
	}
	if len(headers) > 0 {
		tap.base = HeaderTransport(tap.base, endpoint, headers)
	}
	client.Transport = tap
	return client
}

// defaultTerminate is how long Close waits for the server to exit after
// closing its stdin, and again after SIGTERM (the SDK's default).
const defaultTerminate = 5 * time.Second

// connectCommand does what mcp.CommandTransport.Connect does, with taps on
// the child's stdin and stdout, framing through the SDK's own IOTransport.
func (t *Transport) connectCommand(ctx context.Context, ct *mcp.CommandTransport) (mcp.Connection, error) {
	cmd := ct.Command
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// The end of the child's stderr is kept beside wherever it goes, for
	// the record of a process that exits before answering.
	tail := &tailBuffer{}
	t.rec.mu.Lock()
	t.rec.stderrTail = tail
	t.rec.mu.Unlock()
	if cmd.Stderr != nil {
		cmd.Stderr = io.MultiWriter(cmd.Stderr, tail)
	} else {
		cmd.Stderr = tail
	}
	if cmd.WaitDelay == 0 {
		// The tail is read through a pipe: a process the server started
		// that keeps it open must not hold the session's close (os/exec
		// waits for the pipe's end otherwise).
		cmd.WaitDelay = time.Second
	}
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			// No program of that name: a mistyped command, not a server
			// that refused (issue 34, item 4).
			t.rec.transportFault(FaultCommandNotFound)
		} else {
			t.rec.transportFault(FaultConnectRefused)
		}
		return nil, fmt.Errorf("starting %s: %w", t.endpoint, err)
	}
	term := ct.TerminateDuration
	if term <= 0 {
		term = defaultTerminate
	}
	// The child's exit is the server's fault only while the session is
	// ours to end: once Close has begun (the SDK ending a session it
	// failed, a handshake answer it refused), the child exits because its
	// stdin closed, and whether its stdout's end is read before the SDK's
	// error is classified is a race. The fault is then the SDK's failure,
	// on every host alike.
	var closing atomic.Bool
	exited := func() {
		if !closing.Load() {
			t.rec.transportFault(FaultProcessExited)
		}
	}
	// The tap is the source of what the SDK reads, so that a stray line
	// (not a JSON-RPC message: a banner, a log line) is skipped, as the
	// official TypeScript and Python clients skip it, and counted for the
	// record, instead of failing the SDK's decoder and blaming the page.
	in := &lineTap{stray: t.rec.strayLine, swap: func(f []byte) []byte {
		t.rec.received(f, nil)
		return nil
	}}
	if t.checkOnly {
		in.swap = t.listSwap
	}
	out := &lineTap{emit: func(f []byte) { t.rec.sent(f) }}
	framing := &mcp.IOTransport{
		Reader: &tapReader{r: stdout, tap: in, max: t.rec.limit, tooLarge: t.rec.tooLarge, ended: exited},
		Writer: &childStdin{w: stdin, exited: exited, closing: &closing, tap: out, cmd: cmd, term: term, reaped: t.rec.exited},
		// The SDK's own bound on a line (16 MiB by default) sits above
		// MaxAnswerBytes, so that the tap's refusal (answer_too_large, as
		// every host records it) comes first, whatever the limit: the
		// tap never hands the SDK more than the limit of one line.
		MaxLineLength: int(t.rec.limit()) + 1<<16,
	}
	return framing.Connect(ctx)
}

// listSwap is the answer the SDK reads for a frame, in a session that ends
// with its check (Options.CheckOnly): the answer to one of its tools/list
// calls (by id, with a result) becomes the same answer with an empty list,
// every other frame is left as it came. The frame was captured first, on
// the bytes; the check reads only those. The SDK's framing would decode a
// 1,000-tool page twice and its ListTools parse and validate every tool
// again (a third of crawlcheck lock --server's CPU) for a result nothing
// reads. gopeer, make bench's plain-Go peer, pays all of that.
func (t *Transport) listSwap(frame []byte) []byte {
	id, c := t.rec.received(frame, nil)
	if c == nil || c.method != "tools/list" {
		return nil
	}
	if m, err := membersOfValid(frame); err != nil || m["result"] == nil || m["error"] != nil {
		return nil
	}
	return slices.Concat([]byte(`{"jsonrpc":"2.0","id":`), id, []byte(`,"result":{"tools":[]}}`))
}

// tapReader feeds the child's stdout to a lineTap before the SDK reads it,
// so a frame is recorded before the SDK can act on it. Closing it does
// nothing: the session ends by closing stdin (see childStdin).
type tapReader struct {
	r        io.Reader
	tap      *lineTap
	max      func() int64
	tooLarge func() error
	ended    func() // the child closed its stdout (it exited, or will)
	// With the tap's swap, the SDK reads what the tap hands on (tap.out),
	// read from the child through scratch; err ended the child's stream.
	scratch []byte
	err     error
}

func (t *tapReader) Read(p []byte) (int, error) {
	if t.tap.swap == nil && t.tap.stray == nil {
		return t.pass(p)
	}
	for len(t.tap.out) == 0 && t.err == nil {
		if t.scratch == nil {
			t.scratch = make([]byte, 32<<10)
		}
		_, t.err = t.pass(t.scratch)
	}
	n := copy(p, t.tap.out)
	if n == len(t.tap.out) {
		t.tap.out = t.tap.out[:0]
	} else {
		t.tap.out = t.tap.out[n:]
	}
	if n == 0 {
		return 0, t.err
	}
	return n, nil
}

// pass reads from the child into p and feeds the tap.
func (t *tapReader) pass(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.tap.feed(p[:n])
	if int64(len(t.tap.buf)) > t.max() {
		// A line past the limit is not read further: neither this tap nor
		// the SDK's decoder holds more of it.
		return 0, t.tooLarge()
	}
	if err != nil {
		t.tap.flush()
		if errors.Is(err, io.EOF) {
			t.ended()
		}
	}
	return n, err
}

func (t *tapReader) Close() error { return nil }

// childStdin records each outgoing frame before writing it (so the call
// exists before its answer can arrive) and, on Close, shuts the child down
// as the stdio transport specifies: close stdin, wait, SIGTERM, wait, SIGKILL.
type childStdin struct {
	w       io.WriteCloser
	exited  func()
	closing *atomic.Bool // set when Close begins: the child's exit is ours from then on
	tap     *lineTap
	cmd     *exec.Cmd
	term    time.Duration
	reaped  func(status int) // the child exited with this status (not by a signal)
}

func (c *childStdin) Write(p []byte) (int, error) {
	c.tap.feed(p)
	n, err := c.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		c.exited() // the child is gone (its stdout may not have said so yet)
	}
	return n, err
}

func (c *childStdin) Close() error {
	c.closing.Store(true)
	if err := c.w.Close(); err != nil {
		return fmt.Errorf("closing stdin: %w", err)
	}
	exited := make(chan error, 1)
	go func() {
		err := c.cmd.Wait()
		if st := c.cmd.ProcessState; st != nil && st.Exited() {
			c.reaped(st.ExitCode())
		}
		exited <- err
	}()
	wait := func() (error, bool) {
		select {
		case err := <-exited:
			return err, true
		case <-time.After(c.term):
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if c.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := c.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("unresponsive subprocess")
}

// lineTap splits a newline-delimited stream into frames. A frame is also
// emitted as soon as it is a complete JSON value, before its newline: the
// SDK's decoder stops at the closing brace, so it may act on a frame whose
// newline has not been read yet.
//
// With swap set (a session that ends with its check), swap is handed each
// frame instead of emit, and the tap is the source of what the SDK reads:
// out holds the stream's bytes as they came, except that a frame swap
// answers for is replaced by that answer, each frame handed on only once
// it is whole.
//
// With stray set (the server's stdout), a line that is not a JSON-RPC
// message is neither emitted nor handed on: stray is called instead. A
// line is a message when its first byte after blanks is '{' or '[' (an
// object, or a batch): anything else — a banner, a progress line, a bare
// word — cannot be one, however it continues. A line that starts as a
// message and is malformed stays a frame, which the core calls
// response_malformed. JS and Python capture by the same rule
// (docs/mcpserver.md, Stray lines).
type lineTap struct {
	buf     []byte
	emitted bool // buf's frame has been emitted early
	emit    func([]byte)

	swap     func(frame []byte) []byte
	stray    func()
	out      []byte
	released int // bytes of buf already in out
}

func (l *lineTap) feed(p []byte) {
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			break
		}
		l.buf = append(l.buf, p[:i]...)
		l.flush()
		if l.swap != nil {
			l.out = append(l.out, '\n')
		}
		p = p[i+1:]
	}
	l.buf = append(l.buf, p...)
	if l.emitted {
		if l.swap != nil {
			// What follows a frame on its line goes on as it came.
			l.out = append(l.out, l.buf[l.released:]...)
			l.released = len(l.buf)
		}
		return
	}
	if f := bytes.TrimSpace(l.buf); len(f) > 0 && (f[len(f)-1] == '}' || f[len(f)-1] == ']') && json.Valid(f) {
		l.frame(f)
		l.emitted = true
	}
}

// flush emits the pending line (at a newline, or at the end of the stream).
func (l *lineTap) flush() {
	if f := bytes.TrimSpace(l.buf); len(f) > 0 && !l.emitted {
		l.frame(f)
	}
	if l.swap != nil {
		l.out = append(l.out, l.buf[l.released:]...)
	}
	l.buf = l.buf[:0]
	l.emitted = false
	l.released = 0
}

// frame emits a frame, or with swap hands the line so far on.
func (l *lineTap) frame(f []byte) {
	if l.stray != nil && !startsMessage(f) {
		l.stray()
		l.released = len(l.buf)
		return
	}
	if l.swap == nil {
		l.emit(f)
		return
	}
	if answer := l.swap(f); answer != nil {
		l.out = append(l.out, answer...)
	} else {
		l.out = append(l.out, l.buf[l.released:]...)
	}
	l.released = len(l.buf)
}

// startsMessage reports whether a line, blanks trimmed, can be a JSON-RPC
// message: it opens an object, or a batch (a '[' whose next byte after
// blanks opens an object or closes the array). "[info] starting" is a log
// line, not a batch.
func startsMessage(f []byte) bool {
	if f[0] == '{' {
		return true
	}
	if f[0] != '[' {
		return false
	}
	rest := bytes.TrimLeft(f[1:], " \t\r")
	return len(rest) > 0 && (rest[0] == '{' || rest[0] == ']')
}

// httpTap records the body of every POSTed frame and the frames the server
// sends back. Over streamable HTTP those are every 2xx response (a JSON
// body, or the events of an event stream the SDK routes). Over the legacy
// HTTP+SSE transport (stream set) they are the message events of the GET
// stream only: a POST's answer arrives there, its response body (202
// Accepted) is no frame.
type httpTap struct {
	base http.RoundTripper
	rec  *recorder
	// stream is the legacy transport's event stream URL, nil over
	// streamable HTTP: the message endpoint its first event names must be
	// of its origin.
	stream *url.URL
}

func (h *httpTap) RoundTrip(req *http.Request) (*http.Response, error) {
	var to *call
	if req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("reading request body: %w", err)
		}
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		to = h.rec.sent(body)
	}
	resp, err := h.base.RoundTrip(req)
	var (
		dial   *net.OpError
		netErr net.Error
	)
	switch {
	case err == nil:
	case errors.As(err, &netErr) && netErr.Timeout():
		h.rec.transportFault(FaultTimeout) // the HTTP client's own deadline
	case errors.As(err, &dial) && dial.Op == "dial":
		h.rec.transportFault(FaultConnectRefused)
	}
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		code := FaultUnauthorized
		if resp.StatusCode == http.StatusForbidden {
			code = FaultForbidden
		}
		h.rec.authFault(code, ResourceMetadataOf(resp.Header))
	}
	if err != nil || resp.StatusCode/100 != 2 || resp.Body == nil {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case h.stream != nil && req.Method == http.MethodGet && mt == "text/event-stream":
		resp.Body = &sseTap{rc: resp.Body, max: h.rec.limit(), tooLarge: h.rec.tooLarge, dispatch: h.legacyStream()}
	case h.stream != nil:
		// A POST's answer is on the stream; the SDK reads nothing here.
	case mt == "text/event-stream":
		resp.Body = &sseTap{rc: resp.Body, max: h.rec.limit(), tooLarge: h.rec.tooLarge, dispatch: func(name string, data []byte) error {
			// What the SDK's streamable client routes: an event with data,
			// of no type or of type message (a priming event, an id
			// alone, is none).
			if len(data) > 0 && (name == "" || name == "message") {
				h.rec.received(data, to)
			}
			return nil
		}}
	default:
		if resp.ContentLength > h.rec.limit() {
			resp.Body.Close()
			return nil, h.rec.tooLarge()
		}
		resp.Body = &bodyTap{rc: resp.Body, emit: func(f []byte) { h.rec.received(f, to) }, max: h.rec.limit(), tooLarge: h.rec.tooLarge}
	}
	return resp, nil
}

// legacyStream returns the dispatch of the legacy transport's GET stream.
// Its first event is the endpoint event, which the SDK resolves against the
// stream's URL and then POSTs every message to: one naming another origin
// is refused before the SDK reads it (the stream fails, and the handshake
// with it: session_failed), since a server answers for its own origin
// only, and a record names the stream's URL, not where the requests went.
// Every later event with data is a frame: the SDK's SSE client routes them
// all, whatever their type.
func (h *httpTap) legacyStream() func(name string, data []byte) error {
	first := true
	return func(name string, data []byte) error {
		if !first {
			if len(data) > 0 {
				h.rec.received(data, nil)
			}
			return nil
		}
		first = false
		if name != "endpoint" {
			return nil // the SDK refuses the stream itself
		}
		if err := sameOrigin(h.stream, string(data)); err != nil {
			h.rec.transportFault(FaultSessionFailed)
			return err
		}
		return nil
	}
}

// SameOrigin reports whether a and b are of one origin: scheme, host (in
// any case) and port, the port defaulted by the scheme (443 for https, 80
// otherwise). The Go preflight and the gateway both hold an SSE server's
// message endpoint to its stream's origin with it.
func SameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if u.Scheme == "https" {
			return "443"
		}
		return "80"
	}
	return a.Scheme == b.Scheme && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// sameOrigin reports, as an error, a message endpoint (ref, resolved
// against the stream's URL as the SDK resolves it) of another origin:
// scheme, host and port, the port defaulted by the scheme.
func sameOrigin(stream *url.URL, ref string) error {
	u, err := stream.Parse(ref)
	if err != nil {
		return fmt.Errorf("the SSE endpoint event names no URL: %w", err)
	}
	if !SameOrigin(u, stream) {
		return fmt.Errorf("the SSE endpoint event names %s, of another origin than the stream %s: refused", u.Redacted(), stream.Redacted())
	}
	return nil
}

// bodyTap emits a whole response body as one frame when it has been read to
// its end.
type bodyTap struct {
	rc       io.ReadCloser
	buf      []byte
	emit     func([]byte)
	done     bool
	max      int64
	tooLarge func() error
}

func (b *bodyTap) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if int64(len(b.buf)+n) > b.max {
		b.buf = nil
		return 0, b.tooLarge()
	}
	b.buf = append(b.buf, p[:n]...)
	if err == io.EOF && !b.done {
		b.done = true
		if f := bytes.TrimSpace(b.buf); len(f) > 0 {
			b.emit(f)
		}
	}
	return n, err
}

func (b *bodyTap) Close() error { return b.rc.Close() }

// sseTap parses an event stream as it is read, by the rules of the SSE
// standard (the WHATWG event stream interpretation): a leading BOM dropped;
// lines end at CRLF, LF or a lone CR; a line starting with ":" is a
// comment; a field is the text before the first ":" (the whole line without
// one), its value what follows, less one leading space; data lines are
// joined with \n; a blank line ends the event. Each event that has a field
// is handed to dispatch with its type and data (empty when it had none),
// before the SDK can read past it; which of them are frames is the
// transport's rule. An event the stream ends inside is not dispatched. An
// event longer than max bytes ends the stream (tooLarge), as does an error
// from dispatch.
type sseTap struct {
	rc       io.ReadCloser
	max      int64
	tooLarge func() error
	dispatch func(name string, data []byte) error

	started bool     // the stream's first bytes (and a BOM there) are past
	afterCR bool     // the last byte read was a CR: an LF next ends no line
	line    []byte   // the line being read
	name    []byte   // the event's type
	data    [][]byte // the event's data lines
	fields  bool     // the event has a field
	size    int64    // bytes of the event being read
	err     error    // the error that ended the stream
}

var bom = []byte("\xef\xbb\xbf")

func (s *sseTap) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.rc.Read(p)
	rest := p[:n]
	if !s.started && len(rest) > 0 {
		if len(s.line)+len(rest) < len(bom) && bytes.HasPrefix(bom, append(s.line, rest...)) {
			// Too few bytes yet to tell a BOM: held as the line so far.
			s.line = append(s.line, rest...)
			return n, err
		}
		s.started = true
		rest = bytes.TrimPrefix(append(s.line, rest...), bom)
		s.line = nil // rest may hold the line's bytes: a new line does not write over them
	}
	for len(rest) > 0 {
		if s.afterCR && rest[0] == '\n' {
			rest = rest[1:]
		}
		s.afterCR = false
		i := bytes.IndexAny(rest, "\r\n")
		if i < 0 {
			i = len(rest)
		}
		if s.size += int64(i); s.size > s.max {
			s.line, s.data, s.err = nil, nil, s.tooLarge()
			return 0, s.err
		}
		s.line = append(s.line, rest[:i]...)
		if i == len(rest) {
			break
		}
		s.afterCR = rest[i] == '\r'
		rest = rest[i+1:]
		if e := s.endLine(); e != nil {
			s.err = e
			return 0, e
		}
	}
	return n, err
}

// endLine takes the line just ended.
func (s *sseTap) endLine() error {
	line := s.line
	s.line = s.line[:0]
	if len(line) == 0 {
		name, data, fields := s.name, bytes.Join(s.data, []byte("\n")), s.fields
		s.name, s.data, s.fields, s.size = nil, nil, false, 0
		if fields {
			return s.dispatch(string(name), data)
		}
		return nil
	}
	if line[0] == ':' {
		return nil
	}
	field, value, _ := bytes.Cut(line, []byte(":"))
	value, _ = bytes.CutPrefix(value, []byte(" "))
	s.fields = true
	switch string(field) {
	case "data":
		s.data = append(s.data, bytes.Clone(value))
	case "event":
		s.name = bytes.Clone(value)
	}
	return nil
}

func (s *sseTap) Close() error { return s.rc.Close() }
