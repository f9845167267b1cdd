package preflight

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os/exec"
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
}

// Wrap returns a recording Transport for an SDK transport. Two kinds are
// supported, the two MCP defines: *mcp.CommandTransport (stdio; Wrap starts
// the command itself, as the SDK would, to reach its stdout) and
// *mcp.StreamableClientTransport (its HTTPClient's transport is wrapped).
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
	}
	return nil, fmt.Errorf("preflight: cannot capture raw frames from a %T; use mcp.CommandTransport or mcp.StreamableClientTransport", t)
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
		base := http.DefaultTransport
		client := &http.Client{}
		if inner.HTTPClient != nil {
			*client = *inner.HTTPClient
			if client.Transport != nil {
				base = client.Transport
			}
		}
		client.Transport = &httpTap{base: base, rec: t.rec}
		cp.HTTPClient = client
		return cp.Connect(ctx)
	}
	return nil, fmt.Errorf("preflight: unsupported transport %T", t.inner)
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
	if err := cmd.Start(); err != nil {
		t.rec.transportFault(FaultConnectRefused)
		return nil, fmt.Errorf("starting %s: %w", t.endpoint, err)
	}
	term := ct.TerminateDuration
	if term <= 0 {
		term = defaultTerminate
	}
	exited := func() { t.rec.transportFault(FaultProcessExited) }
	in := &lineTap{emit: func(f []byte) { t.rec.received(f, nil) }}
	out := &lineTap{emit: func(f []byte) { t.rec.sent(f) }}
	framing := &mcp.IOTransport{
		Reader: &tapReader{r: stdout, tap: in, max: t.rec.limit, tooLarge: t.rec.tooLarge, ended: exited},
		Writer: &childStdin{w: stdin, exited: exited, tap: out, cmd: cmd, term: term},
		// The SDK's own bound on a line (16 MiB by default) sits above
		// MaxAnswerBytes, so that the tap's refusal (answer_too_large, as
		// every host records it) comes first, whatever the limit: the
		// tap never hands the SDK more than the limit of one line.
		MaxLineLength: int(t.rec.limit()) + 1<<16,
	}
	return framing.Connect(ctx)
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
}

func (t *tapReader) Read(p []byte) (int, error) {
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
	w      io.WriteCloser
	exited func()
	tap    *lineTap
	cmd    *exec.Cmd
	term   time.Duration
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
	if err := c.w.Close(); err != nil {
		return fmt.Errorf("closing stdin: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
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
type lineTap struct {
	buf     []byte
	emitted bool // buf's frame has been emitted early
	emit    func([]byte)
}

func (l *lineTap) feed(p []byte) {
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			break
		}
		l.buf = append(l.buf, p[:i]...)
		l.flush()
		p = p[i+1:]
	}
	l.buf = append(l.buf, p...)
	if l.emitted {
		return
	}
	if f := bytes.TrimSpace(l.buf); len(f) > 0 && (f[len(f)-1] == '}' || f[len(f)-1] == ']') && json.Valid(f) {
		l.emit(f)
		l.emitted = true
	}
}

// flush emits the pending line (at a newline, or at the end of the stream).
func (l *lineTap) flush() {
	if f := bytes.TrimSpace(l.buf); len(f) > 0 && !l.emitted {
		l.emit(f)
	}
	l.buf = l.buf[:0]
	l.emitted = false
}

// httpTap records the body of every POSTed frame and of every 2xx response
// (a JSON body, or each event of an event stream).
type httpTap struct {
	base http.RoundTripper
	rec  *recorder
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
	if err != nil || resp.StatusCode/100 != 2 || resp.Body == nil {
		return resp, err
	}
	emit := func(f []byte) { h.rec.received(f, to) }
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		resp.Body = &sseTap{rc: resp.Body, emit: emit, max: h.rec.limit(), tooLarge: h.rec.tooLarge}
	} else {
		if resp.ContentLength > h.rec.limit() {
			resp.Body.Close()
			return nil, h.rec.tooLarge()
		}
		resp.Body = &bodyTap{rc: resp.Body, emit: emit, max: h.rec.limit(), tooLarge: h.rec.tooLarge}
	}
	return resp, nil
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

// sseTap emits the data of each server-sent event as one frame, as soon as
// the blank line that ends the event has been read.
type sseTap struct {
	rc       io.ReadCloser
	line     []byte
	data     [][]byte
	size     int64 // bytes of the event being read
	emit     func([]byte)
	max      int64
	tooLarge func() error
}

func (s *sseTap) Read(p []byte) (int, error) {
	n, err := s.rc.Read(p)
	if s.size += int64(n); s.size > s.max {
		s.line, s.data = nil, nil
		return 0, s.tooLarge()
	}
	rest := p[:n]
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		s.line = append(s.line, rest[:i]...)
		s.endLine(bytes.TrimSuffix(s.line, []byte("\r")))
		s.line = s.line[:0]
		rest = rest[i+1:]
	}
	s.line = append(s.line, rest...)
	return n, err
}

func (s *sseTap) endLine(line []byte) {
	if len(line) == 0 {
		if len(s.data) > 0 {
			s.emit(bytes.Join(s.data, []byte("\n")))
			s.data = nil
		}
		s.size = 0
		return
	}
	if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
		v, _ = bytes.CutPrefix(v, []byte(" "))
		s.data = append(s.data, bytes.Clone(v))
	}
}

func (s *sseTap) Close() error { return s.rc.Close() }
