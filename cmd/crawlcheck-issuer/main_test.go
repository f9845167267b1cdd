package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/listening"
)

// TestCommand runs the command as an operator types it: keys init, serve
// (its base URL alone on the first line), a request, SIGTERM finishing
// cleanly; then rotate, retire and directory on the same directory.
func TestCommand(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "crawlcheck-issuer")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := filepath.Join(t.TempDir(), "keys")
	if out, err := exec.Command(bin, "keys", "init", "--dir", dir, "--issuer", "issuer.test").CombinedOutput(); err != nil {
		t.Fatalf("keys init: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "keys", "init", "--dir", dir).CombinedOutput(); err == nil {
		t.Fatalf("a second keys init succeeded: %s", out)
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
	if err := exec.Command(bin, "serve").Run(); err == nil || err.(*exec.ExitError).ExitCode() != 2 {
		t.Fatalf("serve without --dir: %v, want exit 2", err)
	}
}
