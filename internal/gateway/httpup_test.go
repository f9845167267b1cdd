package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The gateway in front of a remote server (crawlcheck run --url): the
// scenario server over streamable HTTP, driven by the go-sdk client over
// stdio, as a client's config would start it.

// listen starts a server that prints its URL on its first line of stdout
// (the scenario server's --listen), ended with the test.
func listen(t *testing.T, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("%s printed no URL: %v", argv[0], err)
	}
	return strings.TrimSpace(line)
}

// newHTTPEnv serves tools over streamable HTTP from the scenario server,
// pins it with crawlcheck lock --url, and returns the env and the URL.
func newHTTPEnv(t *testing.T, tools string) (*env, string) {
	t.Helper()
	dir := t.TempDir()
	e := &env{dir: dir, scenario: filepath.Join(dir, "scenario.json"), trigger: filepath.Join(dir, "trigger"), lock: filepath.Join(dir, "lock.json"), log: filepath.Join(dir, "records.jsonl")}
	e.setTools(t, tools)
	url := listen(t, mcpserver, "--scenario", e.scenario, "--trigger", e.trigger, "--listen", "127.0.0.1:0")
	cli(t, "lock", "--url", url, "-o", e.lock)
	return e, url
}

// remoteCmd is crawlcheck run --url as a client's config runs it.
func (e *env) remoteCmd(url string, extra ...string) (*exec.Cmd, *lockedBuffer) {
	args := append([]string{"run", "--lock", e.lock, "--log", e.log, "--lock-poll", "50ms", "--grace", "2s", "--url", url}, extra...)
	cmd := exec.Command(crawlcheck, args...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	return cmd, stderr
}

// TestRemoteProceeds: a remote server as approved, over initialize and
// over the go-sdk's newest handshake: the handed list is the server's,
// calls reach it, and each session's record proceeds, chained.
func TestRemoteProceeds(t *testing.T) {
	e, url := newHTTPEnv(t, threeTools)
	for _, version := range []string{"2025-11-25", ""} {
		t.Run("protocol="+version, func(t *testing.T) {
			cmd, stderr := e.remoteCmd(url)
			s := connectCmd(t, cmd, stderr, nil, version)
			if got := names(t, s); !slices.Equal(got, []string{"t1", "t2", "t3"}) {
				t.Errorf("handed %v", got)
			}
			if r, rpc := call(t, s, "t1"); rpc != nil || text(r) != "called t1" {
				t.Errorf("t1: %v %v\n%s", text(r), rpc, stderr.String())
			}
			if !strings.Contains(stderr.String(), "proceed (enforce mode): 3 tools handed over") {
				t.Errorf("stderr has no verdict:\n%s", stderr.String())
			}
		})
	}
	recs := e.records(t)
	if len(recs) < 2 {
		t.Fatalf("%d records, want one per session at least", len(recs))
	}
	for _, r := range recs {
		if r.Effect != "proceed" || !strings.Contains(string(r.Raw), url) {
			t.Errorf("record: effect %s, want proceed for %s: %s", r.Effect, url, r.Raw)
		}
	}
}

// TestRemoteRugPull: the remote server rewrites t2 mid-session and
// announces it (on the session's GET stream): the gateway re-checks,
// tells the client, withholds t2 and refuses its call.
func TestRemoteRugPull(t *testing.T) {
	e, url := newHTTPEnv(t, threeTools)
	cmd, stderr := e.remoteCmd(url)
	s := connectCmd(t, cmd, stderr, nil, "2025-11-25")
	if got := names(t, s); len(got) != 3 {
		t.Fatalf("handed %v", got)
	}
	e.mutate(t, t2RugPull)
	select {
	case <-s.changed:
	case <-time.After(deadline):
		t.Fatalf("no list_changed reached the client\n%s", stderr.String())
	}
	if got := names(t, s); !slices.Equal(got, []string{"t1", "t3"}) {
		t.Errorf("after the rewrite, handed %v", got)
	}
	if _, rpc := call(t, s, "t2"); rpc == nil || !strings.Contains(rpc.Message, "description_changed") {
		t.Errorf("t2 not refused: %v", rpc)
	}
}

// TestRemoteUnreachable: nothing answers at the URL: the client's
// handshake is answered with an error, and the session's record says
// server_unavailable: the handshake could not reach the server.
func TestRemoteUnreachable(t *testing.T) {
	e, _ := newHTTPEnv(t, threeTools)
	cmd, stderr := e.remoteCmd("http://127.0.0.1:9/mcp")
	client := mcp.NewClient(&mcp.Implementation{Name: "gateway-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}); err == nil {
		cs.Close()
		t.Fatal("connected to nothing")
	}
	recs := e.records(t)
	if len(recs) != 1 || recs[0].Effect == "proceed" || !strings.Contains(string(recs[0].Raw), "the handshake: the server could not be reached") {
		t.Errorf("records %d: %s\nstderr:\n%s", len(recs), recs[0].Raw, stderr.String())
	}
}

// TestEverythingOverHTTP: server-everything (npm, pinned by
// bindings/js/package.json) in its streamable HTTP mode and its legacy
// HTTP+SSE mode, behind crawlcheck run --url: everything
// TestEverythingRoundTrips asks of a stdio server holds over HTTP, the
// server's requests arriving in its answers' event streams (or on the
// legacy stream) and the client's answers POSTed back.
func TestEverythingOverHTTP(t *testing.T) {
	script := everything(t)
	for _, mode := range []struct{ arg, path string }{{"streamableHttp", "/mcp"}, {"sse", "/sse"}} {
		t.Run(mode.arg, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			port := ln.Addr().(*net.TCPAddr).Port
			ln.Close()
			srv := exec.Command(script[0], script[1], mode.arg)
			srv.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				srv.Process.Kill()
				srv.Wait()
			})
			for end := time.Now().Add(deadline); ; time.Sleep(50 * time.Millisecond) {
				if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
					c.Close()
					break
				}
				if time.Now().After(end) {
					t.Fatal("server-everything did not listen")
				}
			}
			url := fmt.Sprintf("http://127.0.0.1:%d%s", port, mode.path)
			dir := t.TempDir()
			e := &env{dir: dir, lock: filepath.Join(dir, "lock.json"), log: filepath.Join(dir, "records.jsonl")}
			source, extra := "--url", []string(nil)
			if mode.arg == "sse" {
				source, extra = "--sse", []string{"--sse"}
			}
			cli(t, "lock", "--capabilities", "roots,sampling,elicitation", "--handshake", "initialize", source, url, "-o", e.lock)
			cmd, stderr := e.remoteCmd(url, extra...)
			roundTrips(t, e, cmd, stderr)
		})
	}
}

// TestRemoteNewSession: the remote server restarts mid-session (a server
// that forgets its sessions answers 404 to the one the gateway holds): the
// gateway opens a new session with the client's handshake, re-checks the
// server now answering (a second record, the new server's tools), and the
// client's ping and call go through in the new session; the client sees
// no break. Then the server comes back with t2 rewritten: the re-check
// withholds it.
func TestRemoteNewSession(t *testing.T) {
	dir := t.TempDir()
	e := &env{dir: dir, scenario: filepath.Join(dir, "scenario.json"), lock: filepath.Join(dir, "lock.json"), log: filepath.Join(dir, "records.jsonl")}
	e.setTools(t, threeTools)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	start := func() func() {
		cmd := exec.Command(mcpserver, "--scenario", e.scenario, "--listen", addr)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		bufio.NewReader(out).ReadString('\n')
		stop := func() {
			cmd.Process.Kill()
			cmd.Wait()
		}
		t.Cleanup(stop)
		return stop
	}
	stop := start()
	url := "http://" + addr + "/mcp"
	cli(t, "lock", "--url", url, "-o", e.lock)
	cmd, stderr := e.remoteCmd(url)
	s := connectCmd(t, cmd, stderr, nil, "2025-11-25")
	if got := names(t, s); len(got) != 3 {
		t.Fatalf("handed %v", got)
	}

	// The scenario server answers tools/list and tools/call itself,
	// whatever the session; ping reaches its SDK, which knows sessions.
	ping := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		if err := s.Ping(ctx, nil); err != nil {
			t.Fatalf("ping after the server restarted: %v\n%s", err, stderr.String())
		}
	}
	stop()
	stop = start()
	ping()
	if r, rpc := call(t, s, "t1"); rpc != nil || text(r) != "called t1" {
		t.Fatalf("t1 after the server restarted: %v %v\n%s", text(r), rpc, stderr.String())
	}
	if !strings.Contains(stderr.String(), "the server ended its session; a new one is open") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	if recs := e.records(t); len(recs) < 2 || recs[len(recs)-1].Effect != "proceed" {
		t.Errorf("%d records after the new session, want a second one, proceeding", len(recs))
	}

	stop()
	e.setTools(t, t2Changed)
	start()
	ping()
	if _, rpc := call(t, s, "t2"); rpc == nil || !strings.Contains(rpc.Message, "description_changed") {
		t.Errorf("t2 of the server that came back changed: %v\n%s", rpc, stderr.String())
	}
}

// TestRemoteSSEUnauthorized: a legacy SSE server that answers its event
// stream's GET with 401: the client's handshake is answered with the
// record's words (HTTP 401, what to do, the resource metadata URL), the
// record says so, and the gateway ends.
func TestRemoteSSEUnauthorized(t *testing.T) {
	e, _ := newHTTPEnv(t, threeTools)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="https://auth.example/.well-known/oauth-protected-resource/sse"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	cmd, stderr := e.remoteCmd(srv.URL+"/sse", "--sse")
	client := mcp.NewClient(&mcp.Implementation{Name: "gateway-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	_, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), "crawlcheck login --url "+srv.URL+"/sse") {
		t.Errorf("the handshake: %v\n%s", err, stderr.String())
	}
	recs := e.records(t)
	if len(recs) != 1 || !strings.Contains(string(recs[0].Raw), "its resource metadata: https://auth.example/.well-known/oauth-protected-resource/sse") {
		t.Errorf("%d records: %s", len(recs), recs[0].Raw)
	}
}

// BenchmarkRemoteCall: one tools/call of the scenario server over
// streamable HTTP, by go-sdk's client directly and through crawlcheck run
// --url (the client over stdio): what the gateway's HTTP side adds to a
// call (docs/gateway.md, "A remote server").
func BenchmarkRemoteCall(b *testing.B) {
	dir := b.TempDir()
	e := &env{dir: dir, scenario: filepath.Join(dir, "scenario.json"), lock: filepath.Join(dir, "lock.json")}
	os.WriteFile(e.scenario, []byte(`{"server":{"name":"shop","version":"1"},"tools":`+threeTools+`}`), 0o644)
	srv := exec.Command(mcpserver, "--scenario", e.scenario, "--listen", "127.0.0.1:0")
	out, _ := srv.StdoutPipe()
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		srv.Process.Kill()
		srv.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	url := strings.TrimSpace(line)
	if out, err := exec.Command(crawlcheck, "lock", "--url", url, "-o", e.lock).CombinedOutput(); err != nil {
		b.Fatalf("lock: %v\n%s", err, out)
	}
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	sopts := &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	run := func(b *testing.B, cs *mcp.ClientSession) {
		defer cs.Close()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t1", Arguments: map[string]any{}}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("direct", func(b *testing.B) {
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, sopts)
		if err != nil {
			b.Fatal(err)
		}
		run(b, cs)
	})
	b.Run("gateway", func(b *testing.B) {
		cmd := exec.Command(crawlcheck, "run", "--lock", e.lock, "--url", url)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, sopts)
		if err != nil {
			b.Fatal(err)
		}
		run(b, cs)
	})
}
