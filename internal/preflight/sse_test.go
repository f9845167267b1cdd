package preflight_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/crawlcheck/verifier/internal/preflight"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The legacy HTTP+SSE transport (protocol 2024-11-05), through the SDK's own
// server and client transports: the GET stream's first event names the
// message endpoint, and every answer arrives on the stream.

// sseServer serves an SDK server with the given tool descriptions over the
// SDK's SSE server transport, each session announcing messageURL(base) as
// its endpoint (base is the server's own URL); it returns the stream's URL
// and a count of the POSTs that reached the server.
func sseServer(t *testing.T, descriptions []string, messageURL func(base string) string) (string, *atomic.Int32) {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "sse-test", Version: "1"}, nil)
	for i, d := range descriptions {
		server.AddTool(&mcp.Tool{Name: "t" + string(rune('1'+i)), Description: d, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	var (
		session atomic.Pointer[mcp.SSEServerTransport]
		posts   atomic.Int32
		base    string
	)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		tr := &mcp.SSEServerTransport{Endpoint: messageURL(base), Response: w}
		session.Store(tr)
		ss, err := server.Connect(r.Context(), tr, nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer ss.Close()
		<-r.Context().Done()
	})
	mux.HandleFunc("POST /message", func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		session.Load().ServeHTTP(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	base = srv.URL
	return srv.URL + "/sse", &posts
}

func sseCheck(t *testing.T, url string, opts *preflight.Options) preflight.Observation {
	t.Helper()
	tr, err := preflight.Wrap(&mcp.SSEClientTransport{Endpoint: url})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Endpoint() != url {
		t.Errorf("endpoint %q, want the stream's URL %q", tr.Endpoint(), url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, obs := preflight.Connect(ctx, client, tr, nil, opts)
	if cs != nil {
		cs.Close()
	}
	return obs
}

func TestSSETransport(t *testing.T) {
	for name, endpoint := range map[string]func(string) string{
		"relative":             func(string) string { return "/message?session=1" },
		"absolute same origin": func(base string) string { return base + "/message?session=1" },
	} {
		t.Run(name, func(t *testing.T) {
			url, _ := sseServer(t, []string{"first", "second"}, endpoint)
			obs := sseCheck(t, url, nil)
			mustPass(t, obs)
			if obs.Endpoint != url || obs.Handshake != "initialize" {
				t.Errorf("endpoint %q handshake %q, want %q initialize", obs.Endpoint, obs.Handshake, url)
			}
			want := []string{
				`{"description":"first","inputSchema":{"type":"object"},"name":"t1"}`,
				`{"description":"second","inputSchema":{"type":"object"},"name":"t2"}`,
			}
			if got := toolsOf(t, obs); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("tools\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// A message endpoint of another origin is refused before anything is sent
// to it: here localhost names the same server, which the SDK would reach.
func TestSSEEndpointOfAnotherOrigin(t *testing.T) {
	for name, endpoint := range map[string]func(string) string{
		"another host": func(base string) string { return strings.Replace(base, "127.0.0.1", "localhost", 1) + "/message" },
		"another port": func(string) string { return "http://127.0.0.1:1/message" },
		"scheme-relative": func(base string) string {
			return "//" + strings.Replace(strings.TrimPrefix(base, "http://"), "127.0.0.1", "localhost", 1) + "/message"
		},
	} {
		t.Run(name, func(t *testing.T) {
			url, posts := sseServer(t, []string{"first"}, endpoint)
			obs := sseCheck(t, url, nil)
			if obs.Failure != preflight.FaultSessionFailed || obs.FailureAt != preflight.AtHandshake || len(obs.Pages) != 0 {
				t.Errorf("failure %q at %q, %d pages; want session_failed at the handshake", obs.Failure, obs.FailureAt, len(obs.Pages))
			}
			if n := posts.Load(); n != 0 {
				t.Errorf("%d POSTs reached the server, want none", n)
			}
		})
	}
}

// An answer on the stream longer than MaxAnswerBytes is cut off unread:
// answer_too_large, as over every transport.
func TestSSEAnswerTooLarge(t *testing.T) {
	url, _ := sseServer(t, []string{strings.Repeat("x", 64<<10)}, func(string) string { return "/message" })
	obs := sseCheck(t, url, &preflight.Options{MaxAnswerBytes: 16 << 10})
	if obs.Failure != preflight.FailureTooLarge || obs.FailureDetail != "16384" {
		t.Errorf("failure %q (%s), want %s (16384)", obs.Failure, obs.FailureDetail, preflight.FailureTooLarge)
	}
}
