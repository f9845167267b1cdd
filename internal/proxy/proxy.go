// Package proxy is `crawlcheck proxy`: a local streamable HTTP endpoint
// for MCP clients that speak HTTP only, in front of a remote server. Each
// client session is one gateway (internal/gateway, run --url) whose stdin
// and stdout are the session's frames: the handoff, the refusals, the
// re-checks and the records are the gateway's, and the proxy only carries
// frames between HTTP and the gateway.
//
// It is a credential boundary in both directions. It listens on loopback
// only, refuses a request whose Host is not a loopback name or whose
// Origin is another site's (a web page in the person's browser cannot
// reach it, DNS rebinding included), and requires its own bearer token,
// which no server ever sees. Its upstream session is its own, with the
// upstream's credentials (--header, the login kept for the URL): the
// client's Authorization, a token for the proxy, is never sent upstream,
// as the MCP authorization spec asks of a server that is not the token's
// audience. docs/gateway.md, "crawlcheck proxy".
package proxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/crawlcheck/verifier/internal/gateway"
)

// Config is one proxy.
type Config struct {
	// Listen is the loopback address to listen on (127.0.0.1:PORT,
	// [::1]:PORT, localhost:PORT; port 0 for any).
	Listen string
	// Token is the bearer every request must carry.
	Token string
	// Gateway is each session's gateway (its Remote the upstream); its
	// Stdin and Stdout are the session's.
	Gateway gateway.Config
	// Idle ends a session no request or stream has used for this long
	// (a client that went without DELETE): its gateway ends its upstream
	// session. 0 is 30 minutes.
	Idle time.Duration
}

// Proxy is a listening proxy.
type Proxy struct {
	cfg  Config
	ln   net.Listener
	port string
	srv  *http.Server

	mu       sync.Mutex
	sessions map[string]*session
	wg       sync.WaitGroup // the sessions' gateways
}

// Listen checks the address is loopback and listens on it.
func Listen(cfg Config) (*Proxy, error) {
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: want HOST:PORT", cfg.Listen)
	}
	if !loopbackName(host) {
		return nil, fmt.Errorf("--listen %s: the proxy listens on loopback only (127.0.0.1, ::1 or localhost): a client on another machine would reach the server with this machine's credentials", cfg.Listen)
	}
	if cfg.Token == "" {
		return nil, errors.New("the proxy has no token")
	}
	if cfg.Idle <= 0 {
		cfg.Idle = 30 * time.Minute
	}
	if host == "localhost" {
		cfg.Listen = net.JoinHostPort("127.0.0.1", cfg.Listen[strings.LastIndexByte(cfg.Listen, ':')+1:])
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	p := &Proxy{cfg: cfg, ln: ln, port: port, sessions: map[string]*session{}}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	return p, nil
}

// loopbackName reports whether host names this machine's loopback.
func loopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// URL is the endpoint clients are configured with.
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() + "/mcp" }

// Serve serves until ctx ends, then ends every session (each gateway
// closes its upstream session) and returns.
func (p *Proxy) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- p.srv.Serve(p.ln) }()
	tick := time.NewTicker(min(max(p.cfg.Idle/4, 10*time.Millisecond), time.Minute))
	defer tick.Stop()
	for wait := true; wait; {
		select {
		case err := <-errc:
			p.closeAll()
			return err
		case <-ctx.Done():
			wait = false
		case now := <-tick.C:
			p.closeIdle(now)
		}
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p.srv.Shutdown(shut)
	p.closeAll()
	return nil
}

// closeIdle ends the sessions idle for longer than Idle.
func (p *Proxy) closeIdle(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.sessions {
		s.mu.Lock()
		idle := s.active == 0 && now.Sub(s.last) > p.cfg.Idle
		s.mu.Unlock()
		if idle {
			s.close()
		}
	}
}

func (p *Proxy) closeAll() {
	p.mu.Lock()
	for _, s := range p.sessions {
		s.close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// ServeHTTP is the streamable HTTP transport's server side at /mcp.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/mcp" {
		http.NotFound(w, r)
		return
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil || !loopbackName(host) || port != p.port {
		http.Error(w, "crawlcheck proxy: this endpoint answers requests to a loopback host only", http.StatusForbidden)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !p.ownOrigin(o) {
		http.Error(w, "crawlcheck proxy: requests from another origin are refused", http.StatusForbidden)
		return
	}
	auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(auth), []byte(p.cfg.Token)) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="crawlcheck proxy"`)
		http.Error(w, "crawlcheck proxy: send the proxy's token as Authorization: Bearer (crawlcheck proxy says where it is kept)", http.StatusUnauthorized)
		return
	}
	switch r.Method {
	case http.MethodPost:
		p.post(w, r)
	case http.MethodGet:
		p.get(w, r)
	case http.MethodDelete:
		if s := p.session(w, r); s != nil {
			s.close()
			w.WriteHeader(http.StatusNoContent)
		}
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// ownOrigin reports whether an Origin is the proxy's own (a page it
// served, were it to serve any), on a loopback name and its port.
func (p *Proxy) ownOrigin(origin string) bool {
	rest, ok := strings.CutPrefix(origin, "http://")
	if !ok {
		return false
	}
	host, port, err := net.SplitHostPort(rest)
	return err == nil && loopbackName(host) && port == p.port
}

// session is the session a request names, or nil with the error written.
func (p *Proxy) session(w http.ResponseWriter, r *http.Request) *session {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		http.Error(w, "crawlcheck proxy: Mcp-Session-Id is required", http.StatusBadRequest)
		return nil
	}
	p.mu.Lock()
	s := p.sessions[id]
	p.mu.Unlock()
	if s == nil {
		http.Error(w, "crawlcheck proxy: no such session", http.StatusNotFound)
		return nil
	}
	return s
}

// message is what the proxy reads of a client's frame to route it.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func (m message) request() bool { return m.Method != "" && hasID(m.ID) }

func hasID(id json.RawMessage) bool { return len(id) > 0 && !bytes.Equal(id, []byte("null")) }

// idKey is an id's compact text: 7 and "7" differ.
func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

// post takes one frame of the client's to its session's gateway; a
// request is answered with an event stream that carries what the server
// sends while it is open and ends with the request's answer (or, for a
// client that accepts JSON only, the answer alone).
func (p *Proxy) post(w http.ResponseWriter, r *http.Request) {
	max := p.cfg.Gateway.MaxLine
	if max <= 0 {
		max = 16 << 20
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(max)+1))
	if err != nil || len(body) > max {
		http.Error(w, "crawlcheck proxy: the body could not be read within its bound", http.StatusRequestEntityTooLarge)
		return
	}
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		http.Error(w, "crawlcheck proxy: JSON-RPC batches are not taken (MCP has had none since 2025-06-18)", http.StatusBadRequest)
		return
	}
	var m message
	if json.Unmarshal(body, &m) != nil {
		rpcError(w, http.StatusBadRequest, nil, -32700, "crawlcheck proxy: not one JSON-RPC message")
		return
	}
	if err := standardHeaders(r.Header, m); err != nil {
		rpcError(w, http.StatusBadRequest, m.ID, -32001, "crawlcheck proxy: "+err.Error())
		return
	}
	var s *session
	if m.request() && (m.Method == "initialize" || m.Method == "server/discover") && r.Header.Get("Mcp-Session-Id") == "" {
		s = p.start()
		w.Header().Set("Mcp-Session-Id", s.id)
	} else if s = p.session(w, r); s == nil {
		return
	}
	s.use(1)
	defer s.use(-1)
	line := oneLine(body)
	if !m.request() {
		if s.write(line) != nil {
			http.Error(w, "crawlcheck proxy: the session has ended", http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	ch := s.await(idKey(m.ID))
	defer s.forget(idKey(m.ID))
	if s.write(line) != nil {
		http.Error(w, "crawlcheck proxy: the session has ended", http.StatusNotFound)
		return
	}
	stream := acceptsStream(r)
	if stream {
		openStream(w)
	}
	for {
		select {
		case f := <-ch:
			answer := f.answers
			if !stream {
				if !answer {
					continue
				}
				w.Header().Set("Content-Type", "application/json")
				w.Write(f.frame)
				return
			}
			writeEvent(w, f.frame)
			if answer {
				return
			}
		case <-r.Context().Done():
			return
		case <-s.done:
			if !stream {
				http.Error(w, "crawlcheck proxy: the session ended before its answer", http.StatusBadGateway)
			}
			return
		}
	}
}

// get opens the session's own event stream: what the server sends outside
// any request (its requests, notifications, the gateway's list_changed).
func (p *Proxy) get(w http.ResponseWriter, r *http.Request) {
	if !acceptsStream(r) {
		http.Error(w, "crawlcheck proxy: GET opens an event stream: Accept text/event-stream", http.StatusNotAcceptable)
		return
	}
	s := p.session(w, r)
	if s == nil {
		return
	}
	s.use(1)
	defer s.use(-1)
	ch, ok := s.listen()
	if !ok {
		http.Error(w, "crawlcheck proxy: the session's stream is already open", http.StatusConflict)
		return
	}
	defer s.unlisten(ch)
	openStream(w)
	for {
		select {
		case f := <-ch:
			writeEvent(w, f.frame)
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
}

// standardHeaders checks the 2026-07-28 revision's Mcp-Method and
// Mcp-Name against the body they must equal: a request whose headers say
// one thing and whose body another would be routed by one and run by the
// other. The gateway's upstream sets them from the body it sends.
func standardHeaders(h http.Header, m message) error {
	if v := h.Get("Mcp-Protocol-Version"); v < "2026-07-28" || !m.request() {
		return nil
	}
	if got := decodeHeader(h.Get("Mcp-Method")); got != m.Method {
		return fmt.Errorf("the Mcp-Method header is not the body's method")
	}
	member := map[string]string{"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}[m.Method]
	if member == "" {
		return nil
	}
	var params map[string]json.RawMessage
	json.Unmarshal(m.Params, &params)
	var name string
	json.Unmarshal(params[member], &name)
	if decodeHeader(h.Get("Mcp-Name")) != name {
		return fmt.Errorf("the Mcp-Name header is not the body's params.%s", member)
	}
	return nil
}

// decodeHeader is a header value, its "=?base64?…?=" form decoded.
func decodeHeader(v string) string {
	if s, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if s, ok = strings.CutSuffix(s, "?="); ok {
			if b, err := base64.StdEncoding.DecodeString(s); err == nil {
				return string(b)
			}
		}
	}
	return v
}

func acceptsStream(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part)); mt == "text/event-stream" {
			return true
		}
	}
	return false
}

// openStream answers 200 as an event stream and sends the headers at
// once, so that the client knows the stream is open before any event.
func openStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush(w)
}

func writeEvent(w http.ResponseWriter, frame []byte) {
	w.Write([]byte("event: message\ndata: "))
	w.Write(frame)
	w.Write([]byte("\n\n"))
	flush(w)
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func rpcError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	if !hasID(id) {
		id = json.RawMessage("null")
	}
	e, _ := json.Marshal(map[string]any{"code": code, "message": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":%s}`, id, e)
}

// oneLine is a frame as one line of the gateway's stdin: a line break in
// it (whitespace between tokens, the only place valid JSON holds one) made
// a blank.
func oneLine(b []byte) []byte {
	out := bytes.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, b)
	return append(out, '\n')
}

// start begins a session: its gateway, with the session's frames as its
// stdin and stdout.
func (p *Proxy) start() *session {
	var id [16]byte
	rand.Read(id[:])
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{id: hex.EncodeToString(id[:]), in: inW, waiting: map[string]chan routed{}, done: make(chan struct{}), last: time.Now()}
	p.mu.Lock()
	p.sessions[s.id] = s
	p.mu.Unlock()
	cfg := p.cfg.Gateway
	cfg.Stdin, cfg.Stdout = inR, outW
	p.wg.Add(2)
	go func() {
		defer p.wg.Done()
		if _, err := gateway.Run(context.Background(), cfg); err != nil && cfg.Stderr != nil {
			fmt.Fprintf(cfg.Stderr, "crawlcheck proxy: session %s: %v\n", s.id[:8], err)
		}
		outW.Close()
		inR.Close()
	}()
	go func() {
		defer p.wg.Done()
		s.route(outR)
		close(s.done)
		p.mu.Lock()
		delete(p.sessions, s.id)
		p.mu.Unlock()
	}()
	return s
}

// routed is one frame of the server's (through the gateway) and whether
// it answers the request it was routed to.
type routed struct {
	frame   []byte
	answers bool
}

// session is one client session: its gateway's stdin, and where the
// gateway's frames go.
type session struct {
	id   string
	in   *io.PipeWriter
	inMu sync.Mutex
	done chan struct{}

	mu      sync.Mutex
	waiting map[string]chan routed // the client's requests in flight, by id
	stream  chan routed            // the GET stream, nil when none is open
	pending []routed               // frames with nowhere to go yet (bounded)
	closed  bool
	active  int       // requests and streams open
	last    time.Time // when the last of them began or ended
}

// use counts a request or stream beginning (1) or ending (-1).
func (s *session) use(d int) {
	s.mu.Lock()
	s.active += d
	s.last = time.Now()
	s.mu.Unlock()
}

// maxPending bounds the server's frames held for a stream to open.
const maxPending = 256

func (s *session) write(line []byte) error {
	s.inMu.Lock()
	defer s.inMu.Unlock()
	_, err := s.in.Write(line)
	return err
}

func (s *session) close() {
	s.mu.Lock()
	closed := s.closed
	s.closed = true
	s.mu.Unlock()
	if !closed {
		s.in.Close()
	}
}

func (s *session) await(id string) chan routed {
	ch := make(chan routed, 64)
	s.mu.Lock()
	s.waiting[id] = ch
	s.mu.Unlock()
	return ch
}

func (s *session) forget(id string) {
	s.mu.Lock()
	delete(s.waiting, id)
	s.mu.Unlock()
}

func (s *session) listen() (chan routed, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stream != nil {
		return nil, false
	}
	s.stream = make(chan routed, maxPending+64)
	for _, f := range s.pending {
		s.stream <- f
	}
	s.pending = nil
	return s.stream, true
}

func (s *session) unlisten(ch chan routed) {
	s.mu.Lock()
	if s.stream == ch {
		s.stream = nil
	}
	s.mu.Unlock()
}

// route reads the gateway's frames until its stdout ends: an answer goes
// to the POST that asked, anything else on the session's GET stream, or on
// a request's stream when none is open (a server's request made while a
// call runs, as the transport allows), or is held until one opens.
func (s *session) route(out io.Reader) {
	br := bufio.NewReaderSize(out, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			s.deliver(t)
		}
		if err != nil {
			return
		}
	}
}

func (s *session) deliver(frame []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	json.Unmarshal(frame, &m)
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.Method == "" && hasID(m.ID) {
		if ch := s.waiting[idKey(m.ID)]; ch != nil {
			select {
			case ch <- routed{frame, true}:
				return
			default: // its POST is gone: the answer has no one to go to
			}
		}
	}
	f := routed{frame: frame}
	if s.stream != nil {
		select {
		case s.stream <- f:
			return
		default:
		}
	}
	for _, ch := range s.waiting {
		select {
		case ch <- f:
			return
		default:
		}
	}
	if len(s.pending) == maxPending {
		s.pending = s.pending[1:]
	}
	s.pending = append(s.pending, f)
}
