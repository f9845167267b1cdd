package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/gateway"
	"github.com/crawlcheck/verifier/internal/preflight"
	"github.com/crawlcheck/verifier/internal/proxy"
	"github.com/crawlcheck/verifier/internal/syncbuf"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gatewaySession runs crawlcheck run with args in this process, the go-sdk
// client on its stdin and stdout (at protocol 2025-11-25, as the JS and
// Python clients speak), and returns the session (nil and the error when
// the handshake failed) and the gateway's stderr. The gateway ends when
// the client closes its side, before the test's end.
func gatewaySession(t *testing.T, args ...string) (*mcp.ClientSession, *syncbuf.Buffer, error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &syncbuf.Buffer{}
	done := make(chan struct{})
	go func() {
		run(args, inR, outW, stderr)
		outW.Close()
		inR.Close()
		close(done)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("the gateway did not end after its client went")
		}
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "runurl-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		inW.Close()
		return nil, stderr, err
	}
	t.Cleanup(func() { cs.Close() })
	return cs, stderr, nil
}

// readLog is a record log's bytes.
func readLog(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the record log: %v", err)
	}
	return string(b)
}

// TestRunURLAgainstTheSDKExample: crawlcheck run --url in front of the
// TypeScript SDK's example server, open and then with --oauth (and
// --oauth-strict: tokens must name it as their resource): open, the
// session proceeds and calls reach the server; behind the login without
// one, the client's handshake is refused with the record's words and the
// record names HTTP 401, what to do and the resource metadata URL; after
// crawlcheck login, the gateway (the OAuth client itself) gives the same
// record, byte for byte, as the open server's session did, never shows
// the token, and never sends it to another server, even on the same host.
func TestRunURLAgainstTheSDKExample(t *testing.T) {
	script := exampleServer(t)
	for _, mode := range [][]string{{"--oauth"}, {"--oauth", "--oauth-strict"}} {
		t.Run(mode[len(mode)-1], func(t *testing.T) { runURLExample(t, script, mode) })
	}
}

func runURLExample(t *testing.T, script string, mode []string) {
	config, dir, lock := loginSetting(t)
	x := newExample(t, script)
	url, mcpPort := x.url, x.mcpPort
	now := "2026-11-30T12:00:00Z"
	session := func(log string) (*mcp.ClientSession, *syncbuf.Buffer, error) {
		return gatewaySession(t, "--now", now, "run", "--lock", lock, "--log", filepath.Join(dir, log), "--url", url)
	}

	stop := x.start(t)
	lockOpen(t, now, url, lock)
	cs, stderr, err := session("open.jsonl")
	if err != nil {
		t.Fatalf("the open server through the gateway: %v\n%s", err, stderr)
	}
	listed := toolNames(t, cs)
	if len(listed) == 0 {
		t.Fatalf("no tools handed over:\n%s", stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "gateway"}}); err != nil || res.IsError {
		t.Errorf("greet through the gateway: %v %v", res, err)
	}
	cs.Close()
	stop()

	x.start(t, mode...)
	_, stderr, err = session("refused.jsonl")
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), "crawlcheck login --url "+url) {
		t.Errorf("the handshake without a login: %v", err)
	}
	refused := readLog(t, filepath.Join(dir, "refused.jsonl"))
	if !strings.Contains(refused, "HTTP 401") || !strings.Contains(refused, "crawlcheck login --url "+url) ||
		!strings.Contains(refused, fmt.Sprintf("its resource metadata: http://localhost:%d/.well-known/oauth-protected-resource/mcp", mcpPort)) {
		t.Errorf("the record without a login:\n%s\nstderr:\n%s", refused, stderr)
	}

	loginBy(t, url)
	cs, stderr, err = session("login.jsonl")
	if err != nil {
		t.Fatalf("the gateway after login: %v\n%s", err, stderr)
	}
	if got := toolNames(t, cs); strings.Join(got, " ") != strings.Join(listed, " ") {
		t.Errorf("after login handed %v, open %v", got, listed)
	}
	cs.Close()
	if open, after := readLog(t, filepath.Join(dir, "open.jsonl")), readLog(t, filepath.Join(dir, "login.jsonl")); open != after {
		t.Errorf("the record after login:\n%s\nwant the open server's:\n%s", after, open)
	}
	access, _, _ := keptToken(t, config, url)
	if access == "" || strings.Contains(stderr.String(), access) {
		t.Errorf("no token kept, or the gateway showed it")
	}

	// crawlcheck proxy in front of it, as the command makes it (the
	// login kept for the upstream): the client's session through it gives
	// the open server's record too.
	proxied := proxySession(t, url, lock, filepath.Join(dir, "proxied.jsonl"), now)
	if got := toolNames(t, proxied); strings.Join(got, " ") != strings.Join(listed, " ") {
		t.Errorf("through the proxy handed %v, open %v", got, listed)
	}
	proxied.Close()
	if open, after := readLog(t, filepath.Join(dir, "open.jsonl")), readLog(t, filepath.Join(dir, "proxied.jsonl")); open != after {
		t.Errorf("the record through the proxy:\n%s\nwant the open server's:\n%s", after, open)
	}

	// Another server, even on the same host, is never sent the token:
	// the gateway's handshake there is refused, and recorded as its 401.
	var sent []string
	var mu sync.Mutex
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent = append(sent, r.Header.Get("Authorization"))
		mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer other.Close()
	for _, to := range []string{other.URL + "/mcp", fmt.Sprintf("http://localhost:%d/other", mcpPort)} {
		if _, _, err := gatewaySession(t, "--now", now, "run", "--lock", lock, "--url", to); err == nil {
			t.Errorf("a session with %s, which has no login", to)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) == 0 {
		t.Error("the other server was never asked")
	}
	for _, auth := range sent {
		if auth != "" {
			t.Errorf("another server was sent Authorization %q", auth)
		}
	}
}

// TestRunURLRefreshesItsLogin: a server whose tokens an Authlib
// authorization server issues (2-second tokens, rotating refresh tokens),
// locked while it was open: behind the login, after crawlcheck login, the
// gateway's record is the open server's byte for byte; a gateway session
// outlives its token: the next request's token is refreshed (under the
// store's lock, with its resource) and the call goes through.
func TestRunURLRefreshesItsLogin(t *testing.T) {
	const rsSecret = "rs-secret-7a2e"
	as := authlibServer(t, rsSecret, tokenLife)
	var need atomic.Value
	need.Store([]string(nil))
	endpoint := introspectedServer(t, as, rsSecret, &need)
	config, dir, lock := loginSetting(t)
	now := "2026-11-30T12:00:00Z"

	lockOpen(t, now, endpoint, lock)
	open, stderr, err := gatewaySession(t, "--now", now, "run", "--lock", lock, "--log", filepath.Join(dir, "open.jsonl"), "--url", endpoint)
	if err != nil {
		t.Fatalf("the gateway to the open server: %v\n%s", err, stderr)
	}
	toolNames(t, open)
	open.Close()

	need.Store([]string{"tools"})
	loginBy(t, endpoint)
	first, _, _ := keptToken(t, config, endpoint)
	cs, stderr, err := gatewaySession(t, "--now", now, "run", "--lock", lock, "--log", filepath.Join(dir, "login.jsonl"), "--url", endpoint)
	if err != nil {
		t.Fatalf("the gateway after login: %v\n%s", err, stderr)
	}
	if got := toolNames(t, cs); strings.Join(got, " ") != "get_issue" {
		t.Fatalf("handed %v\n%s", got, stderr)
	}
	time.Sleep(tokenLife*time.Second + 200*time.Millisecond) // expired, at the server too
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_issue", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Fatalf("a call after the token expired: %v %v\n%s", res, err, stderr)
	}
	if access, _, _ := keptToken(t, config, endpoint); access == first {
		t.Error("the call went with the expired token: no refresh")
	}
	cs.Close()
	if open, after := readLog(t, filepath.Join(dir, "open.jsonl")), readLog(t, filepath.Join(dir, "login.jsonl")); open != after {
		t.Errorf("the record after login:\n%s\nwant the open server's:\n%s", after, open)
	}
}

// toolNames lists the tools the session is handed.
func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var out []string
	for _, tool := range res.Tools {
		out = append(out, tool.Name)
	}
	return out
}

// proxySession serves crawlcheck proxy in front of url as cmdProxy makes
// it (remoteOf: the login kept for url), until the test ends, and
// connects go-sdk's streamable HTTP client to it as gatewaySession's
// client connects over stdio.
func proxySession(t *testing.T, url, lock, log, now string) *mcp.ClientSession {
	t.Helper()
	c := &cli{stderr: io.Discard, timeout: 10 * time.Second}
	rem, err := remoteOf(c, url, false, &headerFlags{})
	if err != nil {
		t.Fatal(err)
	}
	at, _ := time.Parse(time.RFC3339, now)
	const token = "proxy-token-for-the-test-0123456789abcdef"
	p, err := proxy.Listen(proxy.Config{Listen: "127.0.0.1:0", Token: token, Gateway: gateway.Config{
		LockPath: lock, LogPath: log, Remote: rem, Now: func() time.Time { return at }, Stderr: io.Discard,
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		p.Serve(ctx)
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "runurl-test", Version: "1"}, nil)
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ccancel()
	cs, err := client.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: p.URL(), MaxRetries: -1,
		HTTPClient: &http.Client{Transport: preflight.HeaderTransport(nil, p.URL(), http.Header{"Authorization": {"Bearer " + token}})}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("a session through the proxy: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
