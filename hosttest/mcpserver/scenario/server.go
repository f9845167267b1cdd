package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// modernVersion is the first protocol version whose handshake is
// server/discover (SEP-2575) instead of initialize.
const modernVersion = "2026-07-28"

// placeholderTool is added to and removed from the SDK's (otherwise empty)
// tool registry to make the SDK send notifications/tools/list_changed; see
// Server.notifyListChanged.
const placeholderTool = "crawlcheck-scenario-list-changed"

// Server serves one scenario over stdio or streamable HTTP.
type Server struct {
	file     *File
	state    *State
	log      *log.Logger
	versions []string // the protocol versions the SDK offers; nil: its own

	mu sync.Mutex
	// sdks are the SDK servers sessions were started on, the newest last:
	// one per value of the instructions (the SDK's are fixed when it is
	// made), each of them notified of a change to the list.
	sdks         []*mcp.Server
	instructions string // the newest's
}

// New builds the server for a validated scenario file. logger receives one
// line per mutation and per error; it must not be stdout when serving stdio.
func New(f *File, logger *log.Logger) *Server {
	s := &Server{file: f, state: NewState(f), log: logger}
	switch f.Handshake {
	case "initialize":
		s.versions = slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v >= modernVersion })
	case "discover":
		s.versions = []string{modernVersion}
	}
	s.sdks, s.instructions = []*mcp.Server{s.newSDK(f.Instructions)}, f.Instructions
	return s
}

// newSDK is an SDK server whose handshake gives these instructions.
func (s *Server) newSDK(instructions string) *mcp.Server {
	return mcp.NewServer(&mcp.Implementation{Name: s.file.Server.Name, Version: s.file.Server.Version}, &mcp.ServerOptions{
		// The SDK's registry stays empty (tools/list, and prompts and
		// resources when offered, are answered below the SDK), so the
		// capabilities are declared here.
		Capabilities:              s.capabilities(),
		SupportedProtocolVersions: s.versions,
		Instructions:              instructions,
	})
}

// sdk is the SDK server a session starting now is served by: one whose
// handshake gives the instructions the state has now.
func (s *Server) sdk() *mcp.Server {
	now := s.state.Instructions()
	s.mu.Lock()
	defer s.mu.Unlock()
	if now != s.instructions {
		s.sdks, s.instructions = append(s.sdks, s.newSDK(now)), now
	}
	return s.sdks[len(s.sdks)-1]
}

// An answer is how the scenario handles one incoming JSON-RPC call.
type answer struct {
	frame []byte // the complete response frame, or nil: let the SDK answer
	hang  bool   // never answer
	done  func() // run after the frame has been written
}

// answer decides whether the scenario answers a call itself. It handles the
// handshake knobs, tools/list (exact bytes) and tools/call.
func (s *Server) answer(id json.RawMessage, method string, params json.RawMessage) answer {
	switch method {
	case "initialize", "server/discover":
		if s.file.HangHandshake {
			return answer{hang: true}
		}
		if method == "server/discover" && s.file.Handshake == "initialize" {
			return answer{frame: errorFrame(id, jsonrpc.CodeMethodNotFound, "Method not found: server/discover", nil)}
		}
		if method == "initialize" && s.file.Handshake == "discover" {
			data := json.RawMessage(`{"supported":["` + modernVersion + `"]}`)
			return answer{frame: errorFrame(id, mcp.CodeUnsupportedProtocolVersion, "Unsupported protocol version: use server/discover", data)}
		}
	case "tools/list":
		return s.listTools(id, params)
	case "prompts/list", "resources/list", "resources/templates/list", "resources/read":
		a, _ := s.answerFeature(id, method, params)
		return a
	case "tools/call":
		var p struct {
			Name string `json:"name"`
		}
		err := json.Unmarshal(params, &p)
		s.state.Called(p.Name)
		if err != nil || !s.state.HasTool(p.Name) {
			return answer{frame: errorFrame(id, jsonrpc.CodeInvalidParams, fmt.Sprintf("unknown tool %q", p.Name), nil)}
		}
		text, _ := json.Marshal("called " + p.Name)
		return answer{frame: resultFrame(id, []byte(`{"content":[{"type":"text","text":`+string(text)+`}]}`))}
	}
	return answer{}
}

func (s *Server) listTools(id, params json.RawMessage) answer {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return answer{frame: errorFrame(id, jsonrpc.CodeInvalidParams, "invalid tools/list params: "+err.Error(), nil)}
		}
	}
	var cursor string
	if p.Cursor != nil {
		cursor = *p.Cursor
	}
	result, last, rerr := s.state.Page(cursor, p.Cursor != nil)
	if rerr != nil {
		return answer{frame: errorFrame(id, rerr.code, rerr.msg, nil)}
	}
	a := answer{frame: resultFrame(id, result)}
	if last {
		a.done = func() {
			notify, err := s.state.ListingCompleted()
			if err != nil {
				s.log.Printf("mutation failed: %v", err)
			}
			if notify {
				s.notifyListChanged()
			}
		}
	}
	return a
}

// resultFrame builds a response by concatenation so that result reaches the
// wire byte for byte, valid JSON or not.
func resultFrame(id, result []byte) []byte {
	return slices.Concat([]byte(`{"jsonrpc":"2.0","id":`), id, []byte(`,"result":`), result, []byte(`}`))
}

func errorFrame(id json.RawMessage, code int, msg string, data json.RawMessage) []byte {
	e := struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}{code, msg, data}
	b, _ := json.Marshal(e)
	return slices.Concat([]byte(`{"jsonrpc":"2.0","id":`), id, []byte(`,"error":`), b, []byte(`}`))
}

// notifyListChanged makes the SDK send notifications/tools/list_changed the
// way it does for a real registry change: to legacy sessions on their
// session stream, to 2026-07-28 sessions on their subscriptions/listen
// stream. The SDK only notifies on a registry change, so a placeholder tool
// is added and removed (the SDK debounces the two into one notification);
// clients never see it, because tools/list is answered by the scenario.
func (s *Server) notifyListChanged() {
	s.mu.Lock()
	sdks := slices.Clone(s.sdks)
	s.mu.Unlock()
	for _, sdk := range sdks {
		sdk.AddTool(&mcp.Tool{Name: placeholderTool, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		sdk.RemoveTools(placeholderTool)
	}
}

// Mutate applies an admin mutation (see State.ApplyAdmin) and sends the
// notification it asks for.
func (s *Server) Mutate(body []byte) error {
	notify, err := s.state.ApplyAdmin(body)
	if err != nil {
		return err
	}
	s.log.Printf("admin mutation applied; tools now %q", s.state.Snapshot().ToolNames)
	if notify {
		s.notifyListChanged()
	}
	var m Mutation
	if json.Unmarshal(body, &m) == nil && m.NotifyPrompts && s.file.PromptsListChanged {
		s.notifyPromptListChanged()
	}
	return nil
}

// ServeStdio serves one session over in and out (newline-delimited JSON)
// until in is closed.
func (s *Server) ServeStdio(ctx context.Context, in io.ReadCloser, out io.Writer) error {
	if err := s.file.checkStdio(); err != nil {
		return err
	}
	w := &frameWriter{w: out}
	t := &stdioTransport{inner: &mcp.IOTransport{Reader: in, Writer: w}, s: s, w: w}
	ss, err := s.sdk().Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("connecting stdio session: %w", err)
	}
	return ss.Wait()
}

// frameWriter serialises whole frames from the SDK and from the scenario
// onto one stream. The SDK writes each frame with a single Write call.
type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (f *frameWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.w.Write(p)
}

func (f *frameWriter) Close() error { return nil }

// stdioTransport wraps the SDK's IOTransport so that the scenario sees each
// incoming call before the SDK does.
type stdioTransport struct {
	inner mcp.Transport
	s     *Server
	w     *frameWriter
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &interceptConn{Connection: c, s: t.s, w: t.w}, nil
}

type interceptConn struct {
	mcp.Connection
	s *Server
	w *frameWriter
}

// Read hands the SDK every message the scenario does not answer itself.
func (c *interceptConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			return msg, nil
		}
		id, err := json.Marshal(req.ID.Raw())
		if err != nil {
			return nil, fmt.Errorf("encoding request id: %w", err)
		}
		a := c.s.answer(id, req.Method, req.Params)
		if a.hang {
			continue
		}
		if a.frame == nil {
			return msg, nil
		}
		if _, err := c.w.Write(append(a.frame, '\n')); err != nil {
			return nil, fmt.Errorf("writing %s response: %w", req.Method, err)
		}
		if a.done != nil {
			a.done()
		}
	}
}

// Handler returns the HTTP handler: the MCP endpoint at /mcp and the admin
// endpoints POST /admin/mutate and GET /admin/state.
//
// The go-sdk serves the 2026-07-28 protocol (server/discover) only from a
// stateless handler and the legacy protocol with sessions (and the GET
// stream that carries legacy notifications) only from a stateful one, so
// requests are routed by their MCP-Protocol-Version header.
func (s *Server) Handler() http.Handler {
	getServer := func(*http.Request) *mcp.Server { return s.sdk() }
	stateful := mcp.NewStreamableHTTPHandler(getServer, nil)
	stateless := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true})
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && s.serveCall(w, r) {
			return
		}
		modern := r.Header.Get("MCP-Protocol-Version") >= modernVersion
		switch {
		case s.file.Handshake == "discover", s.file.Handshake == "both" && modern:
			stateless.ServeHTTP(w, r)
		default:
			stateful.ServeHTTP(w, r)
		}
	})
	mux.HandleFunc("POST /admin/mutate", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err == nil {
			err = s.Mutate(body)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		writeJSON(w, s.state.Snapshot())
	})
	mux.HandleFunc("GET /admin/state", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, s.state.Snapshot())
	})
	return mux
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	b, _ := json.Marshal(v)
	w.Write(append(b, '\n'))
}

// maxBody bounds a request body read by the scenario.
const maxBody = 4 << 20

// serveCall answers a POSTed call the scenario handles itself, reporting
// whether it did; otherwise the body is restored for the SDK.
func (s *Server) serveCall(w http.ResponseWriter, r *http.Request) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, "reading body: "+err.Error(), http.StatusBadRequest)
		return true
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' {
		// A batch would reach the SDK, whose registry is empty.
		http.Error(w, "scenario server: JSON-RPC batches are not supported", http.StatusBadRequest)
		return true
	}
	var c struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &c) != nil || c.ID == nil || c.Method == nil {
		return false
	}
	a := s.answer(c.ID, *c.Method, c.Params)
	if a.hang {
		<-r.Context().Done()
		return true
	}
	if a.frame == nil {
		return false
	}
	if s.file.HTTPSSE {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(sseEvent(a.frame))
	} else {
		w.Header().Set("Content-Type", "application/json")
		w.Write(a.frame)
	}
	if a.done != nil {
		a.done()
	}
	return true
}

// sseEvent frames one message as a server-sent event. A line break in the
// frame (possible only in a raw page) becomes a new data line, which the
// client joins back with "\n", so the bytes survive.
func sseEvent(frame []byte) []byte {
	var b bytes.Buffer
	b.WriteString("event: message\n")
	for _, line := range bytes.Split(frame, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// WatchTrigger polls path (every 20ms, until ctx is done) for a trigger file:
// an empty file applies the next admin mutation, a Mutation document applies
// that one. The server deletes the file once the mutation is applied (that is
// the acknowledgement); on failure it writes the error to path+".err" first.
// Writers should create the file under another name and rename it into
// place, so that a half-written file is never read.
func (s *Server) WatchTrigger(ctx context.Context, path string) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		body, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err == nil {
			err = s.Mutate(body)
		}
		if err != nil {
			s.log.Printf("trigger %s: %v", path, err)
			if werr := os.WriteFile(path+".err", []byte(err.Error()+"\n"), 0o644); werr != nil {
				s.log.Printf("trigger %s: %v", path, werr)
			}
		}
		if err := os.Remove(path); err != nil {
			s.log.Printf("trigger %s: %v", path, err)
		}
	}
}

// URL returns the MCP endpoint URL for a listener address.
func URL(addr string) string { return "http://" + addr + "/mcp" }
