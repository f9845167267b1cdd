package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// exampleServer is the TypeScript SDK's example streamable HTTP server
// (@modelcontextprotocol/sdk, pinned by bindings/js/package.json), whose
// --oauth runs its in-memory authorization server beside it. make test
// installs it (npm ci) and sets CRAWLCHECK_NEED_SERVERS, so there it cannot
// be skipped.
func exampleServer(t *testing.T) string {
	t.Helper()
	path, _ := filepath.Abs(filepath.Join("..", "..", "bindings", "js", "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "examples", "server", "simpleStreamableHttp.js"))
	_, err := os.Stat(path)
	_, nodeErr := exec.LookPath("node")
	if err != nil || nodeErr != nil {
		if os.Getenv("CRAWLCHECK_NEED_SERVERS") != "" {
			t.Fatalf("the TypeScript SDK's example server is missing (%v, %v): cd bindings/js && npm ci", err, nodeErr)
		}
		t.Skip("the TypeScript SDK's example server is not installed (cd bindings/js && npm ci)")
	}
	return path
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// example is one test's run of the SDK example server: its script, the
// ports it and its authorization server listen on (kept across restarts,
// so that a lockfile and a login made before one stay good after it) and
// its URL.
type example struct {
	script            string
	mcpPort, authPort int
	url               string
}

// newExample picks the example's ports; it is not started yet.
func newExample(t *testing.T, script string) *example {
	t.Helper()
	x := &example{script: script, mcpPort: freePort(t), authPort: freePort(t)}
	x.url = fmt.Sprintf("http://localhost:%d/mcp", x.mcpPort)
	return x
}

// start runs the example server with args, until it listens; stopped at
// the test's end or by the returned func.
func (x *example) start(t *testing.T, args ...string) func() {
	t.Helper()
	cmd := exec.Command("node", append([]string{x.script}, args...)...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("MCP_PORT=%d", x.mcpPort), fmt.Sprintf("MCP_AUTH_PORT=%d", x.authPort))
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() {
		cmd.Process.Kill()
		cmd.Wait()
	}
	t.Cleanup(stop)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("localhost:%d", x.mcpPort)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the example server did not listen within 20 s")
		}
	}
	return stop
}

// loginSetting gives a test a login store of its own (XDG_CONFIG_HOME, so
// that no login of the machine's or of another test's is read or kept)
// and a directory for its lockfile and logs: the store's directory, that
// directory and the lockfile's path.
func loginSetting(t *testing.T) (config, dir, lock string) {
	t.Helper()
	config = t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	dir = t.TempDir()
	return config, dir, filepath.Join(dir, "lock.json")
}

// lockOpen locks the server at url, open (before any login), at now.
func lockOpen(t *testing.T, now, url, lock string) {
	t.Helper()
	if code, _, stderr := runCLI("--now", now, "lock", "--url", url, "-o", lock); code != 0 {
		t.Fatalf("lock of the open server: exit %d, %s", code, stderr)
	}
}

// loginBy runs crawlcheck login --no-browser and, as the person would in
// a browser, follows the authorization URL it prints (the example's
// authorization server approves at once and redirects to the loopback).
func loginBy(t *testing.T, url string) string {
	t.Helper()
	pr, pw := io.Pipe()
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"login", "--url", url, "--no-browser"}, strings.NewReader(""), pw, &stderr)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("login printed no URL: %v; %s", err, stderr.String())
	}
	go io.Copy(io.Discard, pr)
	resp, err := http.Get(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("following the authorization URL: %v", err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if code := <-done; code != 0 {
		t.Fatalf("login exited %d: %s (the redirect answered %s)", code, stderr.String(), page)
	}
	return stderr.String()
}

// TestLoginAgainstTheSDKExample: against the TypeScript SDK's example
// server with --oauth, and with --oauth-strict (tokens must name it as
// their resource, RFC 8707):
// without a login, check records HTTP 401 with what to do and the
// resource metadata URL; after crawlcheck login, check gives the same
// record as the server gave open, and scan, ci and approve read it, the
// token kept in a 0600 file and in no output; a server elsewhere is never sent it; after logout, 401 again.
func TestLoginAgainstTheSDKExample(t *testing.T) {
	script := exampleServer(t)
	for _, mode := range [][]string{{"--oauth"}, {"--oauth", "--oauth-strict"}} {
		t.Run(mode[len(mode)-1], func(t *testing.T) { loginExample(t, script, mode) })
	}
}

func loginExample(t *testing.T, script string, mode []string) {
	config, dir, lock := loginSetting(t)
	x := newExample(t, script)
	url, mcpPort := x.url, x.mcpPort
	now := "2026-11-30T12:00:00Z"
	var outputs []string
	check := func() (int, string) {
		code, stdout, stderr := runCLI("--now", now, "check", "--lock", lock, "--url", url, "--json")
		outputs = append(outputs, stdout, stderr)
		return code, stdout
	}

	stop := x.start(t)
	lockOpen(t, now, url, lock)
	_, open := check()
	stop()

	x.start(t, mode...)
	code, rec := check()
	if code == 0 || !strings.Contains(rec, "HTTP 401") || !strings.Contains(rec, "crawlcheck login --url "+url) ||
		!strings.Contains(rec, fmt.Sprintf("its resource metadata: http://localhost:%d/.well-known/oauth-protected-resource/mcp", mcpPort)) {
		t.Fatalf("check before login: exit %d, %s", code, rec)
	}

	outputs = append(outputs, loginBy(t, url))
	store := filepath.Join(config, "crawlcheck", "tokens.json")
	info, err := os.Stat(store)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the token store: %v, %v", info, err)
	}
	if code, rec := check(); code != 0 || rec != open {
		t.Errorf("check after login: exit %d\n%s\nwant the open server's record\n%s", code, rec, open)
	}
	for _, args := range [][]string{
		{"scan", "--url", url},
		{"ci", "--lock", lock},
		{"approve", "--lock", lock, "--yes", "-o", filepath.Join(dir, "approved.json")},
	} {
		code, stdout, stderr := runCLI(append([]string{"--now", now}, args...)...)
		outputs = append(outputs, stdout, stderr)
		if code != 0 {
			t.Errorf("%s after login: exit %d, %s", args[0], code, stderr)
		}
	}

	// Another server, even on the same machine, is never sent the token.
	var sent []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent = append(sent, r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer other.Close()
	runCLI("--now", now, "check", "--lock", lock, "--url", other.URL+"/mcp", "--json")
	runCLI("--now", now, "check", "--lock", lock, "--url", fmt.Sprintf("http://localhost:%d/other", mcpPort), "--json")
	for _, auth := range sent {
		if auth != "" {
			t.Errorf("another server was sent Authorization %q", auth)
		}
	}

	kept, _ := os.ReadFile(store)
	var token string
	if i := strings.Index(string(kept), `"access_token": "`); i >= 0 {
		token, _, _ = strings.Cut(string(kept)[i+len(`"access_token": "`):], `"`)
	}
	if token == "" {
		t.Fatalf("no access token kept: %s", kept)
	}
	lockBytes, _ := os.ReadFile(lock)
	for i, out := range append(outputs, string(lockBytes)) {
		if strings.Contains(out, token) {
			t.Errorf("output %d holds the access token", i)
		}
	}

	if code, _, stderr := runCLI("logout", "--url", url); code != 0 {
		t.Fatalf("logout: exit %d, %s", code, stderr)
	}
	if code, rec := check(); code == 0 || !strings.Contains(rec, "HTTP 401") {
		t.Errorf("check after logout: exit %d, %s", code, rec)
	}
}
