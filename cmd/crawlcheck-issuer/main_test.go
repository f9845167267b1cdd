package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/hosttest/mcpserver/scenario"
	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/listening"
)

// builtWithKeys builds the command and runs its keys init for
// issuer.test, as an operator starts: the binary and the keys' directory.
func builtWithKeys(t *testing.T) (bin, dir string) {
	t.Helper()
	bin = filepath.Join(t.TempDir(), "crawlcheck-issuer")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir = filepath.Join(t.TempDir(), "keys")
	if out, err := exec.Command(bin, "keys", "init", "--dir", dir, "--issuer", "issuer.test").CombinedOutput(); err != nil {
		t.Fatalf("keys init: %v\n%s", err, out)
	}
	return bin, dir
}

// TestCommand runs the command as an operator types it: keys init,
// operator-token (the token on stdout, its SHA-256 beside the keys), serve
// (its base URL alone on the first line), requests (a correction refused
// without the operator token, taken with it), SIGTERM finishing cleanly;
// then rotate, retire and directory on the same directory.
func TestCommand(t *testing.T) {
	bin, dir := builtWithKeys(t)
	if out, err := exec.Command(bin, "keys", "init", "--dir", dir).CombinedOutput(); err == nil {
		t.Fatalf("a second keys init succeeded: %s", out)
	}
	tokenOut, err := exec.Command(bin, "operator-token", "--dir", dir).Output()
	token := strings.TrimSpace(string(tokenOut))
	if err != nil || !strings.HasPrefix(token, "cco_") {
		t.Fatalf("operator-token: %v %q", err, tokenOut)
	}
	if kept, _ := os.ReadFile(filepath.Join(dir, "operator-token.sha256")); bytes.Contains(kept, []byte(token)) || len(bytes.TrimSpace(kept)) != 64 {
		t.Fatalf("operator-token kept %q, want the token's SHA-256 only", kept)
	}
	cmd := exec.Command(bin, "serve", "--dir", dir, "--listen", "127.0.0.1:0", "--allow-http", "--allow-private", "127.0.0.1/32")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	base, stop, err := listening.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	resp, err := http.Get(base + "/api/v1/keys")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var d struct {
		Issuer string
		Keys   []struct{ KID, Status string }
	}
	if json.Unmarshal(body, &d); d.Issuer != "issuer.test" || len(d.Keys) != 1 || d.Keys[0].Status != "active" {
		t.Fatalf("GET /api/v1/keys: %s", body)
	}
	if _, err := os.Stat(filepath.Join(dir, "issuer.db")); err != nil {
		t.Errorf("the default store is not beside the keys: %v", err)
	}
	correct := func(auth string) int {
		req, _ := http.NewRequest("POST", base+"/api/v1/corrections", strings.NewReader(`{"target":"`+strings.Repeat("ab", 32)+`","reason":"r","reporter":"ops"}`))
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := correct("Bearer cco_not-the-token"); got != http.StatusUnauthorized {
		t.Errorf("a correction with another token: %d, want 401", got)
	}
	if got := correct("Bearer " + token); got != http.StatusNotFound {
		t.Errorf("a correction of an unknown digest with the operator token: %d, want 404", got)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
	if !strings.Contains(stderr.String(), "finishing the requests in flight") {
		t.Errorf("stderr: %s", stderr.String())
	}

	if out, err := exec.Command(bin, "keys", "rotate", "--dir", dir, "--overlap", "1h").CombinedOutput(); err != nil {
		t.Fatalf("keys rotate: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "keys", "retire", "--dir", dir, "--kid", d.Keys[0].KID).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "retired") {
		t.Fatalf("keys retire: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "keys", "directory", "--dir", dir).Output()
	var d2 struct {
		Keys []struct{ KID, Status string }
	}
	if json.Unmarshal(out, &d2); err != nil || len(d2.Keys) != 2 || d2.Keys[0].Status != "active" || d2.Keys[1].Status != "retired" {
		t.Fatalf("keys directory: %v\n%s", err, out)
	}
	os.Chmod(filepath.Join(dir, d2.Keys[0].KID+".seed"), 0o644)
	if out, err := exec.Command(bin, "serve", "--dir", dir, "--listen", "127.0.0.1:0").CombinedOutput(); err == nil || !strings.Contains(string(out), "readable by others") {
		t.Fatalf("serve with a world-readable seed: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "serve", "--dir", dir, "--operator-token-file", filepath.Join(dir, "missing")).CombinedOutput(); err == nil || !strings.Contains(string(out), "operator token file") {
		t.Fatalf("serve with a missing --operator-token-file: %v\n%s", err, out)
	}
	if err := exec.Command(bin, "serve").Run(); err == nil || err.(*exec.ExitError).ExitCode() != 2 {
		t.Fatalf("serve without --dir: %v, want exit 2", err)
	}
}

// TestGracefulShutdown: SIGTERM while a request is in flight (a reading of
// a server that never answers, cut by --read-limit) lets it finish with its
// answer before the process exits.
func TestGracefulShutdown(t *testing.T) {
	buildAll(t)
	dir := filepath.Join(t.TempDir(), "keys")
	if out, err := exec.Command(bins.issuer, "keys", "init", "--dir", dir, "--issuer", "issuer.test").CombinedOutput(); err != nil {
		t.Fatalf("keys init: %v\n%s", err, out)
	}
	// The operator asks: the server is on loopback, its --allow-private range.
	tokenOut, err := exec.Command(bins.issuer, "operator-token", "--dir", dir).Output()
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(tokenOut))
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // only then does the server notice the client going away
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer hang.Close()
	cmd := exec.Command(bins.issuer, "serve", "--dir", dir, "--listen", "127.0.0.1:0", "--allow-http", "--allow-private", "127.0.0.1/32", "--read-limit", "1500ms")
	base, stop, err := listening.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var made struct{ Lock string }
	if err := corecall.Into("make_lock", map[string]any{"tools": json.RawMessage(threeTools), "approved_at": "2026-11-01T00:00:00Z",
		"server": map[string]any{"url": hang.URL + "/mcp"}}, &made); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"lock": made.Lock, "url": hang.URL + "/mcp"})
	type answer struct {
		status int
		body   []byte
		err    error
	}
	got := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest("POST", base+"/api/v1/mcp/lock/check", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- answer{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- answer{status: resp.StatusCode, body: b}
	}()
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	a := <-got
	if a.err != nil || a.status != 200 || !bytes.Contains(a.body, []byte(`"verdict":"unreachable"`)) {
		t.Fatalf("the request in flight at SIGTERM: %d %v %s", a.status, a.err, a.body)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
}

// TestSweepCommand: an operator registers an endpoint with sweep add (on
// the store serve uses), serve reads it at once, and sweep list shows the
// surface it read; what the fetcher would never read is refused at add.
func TestSweepCommand(t *testing.T) {
	bin, dir := builtWithKeys(t)
	f, err := scenario.Parse([]byte(`{"tools":[{"name":"a","description":"A.","inputSchema":{"type":"object"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	mcp := httptest.NewServer(scenario.New(f, log.New(io.Discard, "", 0)).Handler())
	defer mcp.Close()
	if out, err := exec.Command(bin, "sweep", "add", "--dir", dir, "--url", "ftp://x.example/mcp").CombinedOutput(); err == nil {
		t.Fatalf("sweep add of an ftp URL: %s", out)
	}
	if out, err := exec.Command(bin, "sweep", "add", "--dir", dir, "--url", mcp.URL+"/mcp", "--interval", "1h", "--allow-http").CombinedOutput(); err != nil || !strings.Contains(string(out), "swept every 1h0m0s for operator") {
		t.Fatalf("sweep add: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "sweep", "add", "--dir", dir, "--url", mcp.URL+"/mcp", "--interval", "2h", "--owner", "pilot:p1", "--allow-http").CombinedOutput(); err != nil || !strings.Contains(string(out), "swept every 1h0m0s for operator") {
		t.Fatalf("a pilot's sweep add of the operator's endpoint: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "serve", "--dir", dir, "--listen", "127.0.0.1:0", "--allow-http", "--allow-private", "127.0.0.1/32")
	_, stop, err := listening.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	deadline := time.Now().Add(15 * time.Second)
	for {
		out, err := exec.Command(bin, "sweep", "list", "--dir", dir).CombinedOutput()
		if err == nil && strings.Contains(string(out), "  read ") && !strings.Contains(string(out), "no surface yet") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not sweep the endpoint: %v\n%s", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestVersion: both spellings print the version lines; the stamped version
// and commit (make release's -X) win over the build info.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		var out, errs bytes.Buffer
		if code := run([]string{arg}, &out, &errs); code != 0 || !strings.HasPrefix(out.String(), "crawlcheck-issuer ") || !strings.Contains(out.String(), "\ncommit  ") {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", arg, code, out.String(), errs.String())
		}
	}
	defer func(v, c string) { releaseVersion, releaseCommit = v, c }(releaseVersion, releaseCommit)
	releaseVersion, releaseCommit = "9.8.7", "0123456789abcdef0123456789abcdef01234567"
	var out bytes.Buffer
	if code := run([]string{"--version"}, &out, io.Discard); code != 0 || !strings.HasPrefix(out.String(), "crawlcheck-issuer 9.8.7\ncommit  0123456789abcdef0123456789abcdef01234567\n") {
		t.Fatalf("stamped: exit %d, %q", code, out.String())
	}
	if code := run([]string{"version", "extra"}, io.Discard, io.Discard); code != 2 {
		t.Fatalf("version with an argument: exit %d, want the usage's 2", code)
	}
}
