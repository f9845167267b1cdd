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
	"testing"

	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/listening"
)

// TestTenantToken: tenant-token prints a token once and keeps its SHA-256
// only; serve takes it, and a list the tenant hands over comes back signed
// as submitted by that tenant; anonymous gets no lockfile without
// --anonymous-locks; a revoked token opens nothing; an id the core would
// never write is a usage error.
func TestTenantToken(t *testing.T) {
	buildAll(t)
	bin := bins.issuer
	dir := filepath.Join(t.TempDir(), "keys")
	if out, err := exec.Command(bin, "keys", "init", "--dir", dir, "--issuer", "issuer.test").CombinedOutput(); err != nil {
		t.Fatalf("keys init: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "tenant-token", "--dir", dir, "--tenant", "acme").Output()
	token := strings.TrimSpace(string(out))
	if err != nil || !strings.HasPrefix(token, "cctt.acme.") {
		t.Fatalf("tenant-token: %v %q", err, out)
	}
	if kept, _ := os.ReadFile(filepath.Join(dir, "tenant-tokens.json")); bytes.Contains(kept, []byte(token)) || !bytes.Contains(kept, []byte(`"acme"`)) {
		t.Fatalf("tenant-tokens.json holds %q, want the token's SHA-256 under its id only", kept)
	}
	if err := exec.Command(bin, "tenant-token", "--dir", dir, "--tenant", "no spaces").Run(); err == nil || err.(*exec.ExitError).ExitCode() != 2 {
		t.Errorf("tenant-token of an id the core refuses: %v, want exit 2", err)
	}
	serve := func(args ...string) (string, func()) {
		cmd := exec.Command(bin, append([]string{"serve", "--dir", dir, "--listen", "127.0.0.1:0", "--sweep=false"}, args...)...)
		cmd.Stderr = os.Stderr
		base, stop, err := listening.Start(cmd)
		if err != nil {
			t.Fatal(err)
		}
		return base, stop
	}
	lock := func(base, auth string) (int, []byte) {
		req, _ := http.NewRequest("POST", base+"/api/v1/mcp/lock", strings.NewReader(`{"tools":`+threeTools+`,"server":{"url":"https://mcp.example.com/mcp"}}`))
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	base, stop := serve()
	status, body := lock(base, token)
	var v struct {
		Provenance map[string]string `json:"provenance"`
	}
	if err := corecall.Into("verify_lock", map[string]any{"lock": string(body), "now": "2030-01-01T00:00:00Z"}, &v); status != 200 || err != nil ||
		v.Provenance["source"] != "submitted" || v.Provenance["by"] != "tenant:acme" {
		t.Fatalf("the tenant's list: %d %v %v\n%s", status, err, v.Provenance, body)
	}
	if status, _ := lock(base, ""); status != http.StatusUnauthorized {
		t.Errorf("an anonymous list: %d, want 401", status)
	}
	stop()
	if out, err := exec.Command(bin, "tenant-token", "--dir", dir, "--tenant", "acme", "--revoke").CombinedOutput(); err != nil {
		t.Fatalf("tenant-token --revoke: %v\n%s", err, out)
	}
	base, stop = serve()
	defer stop()
	if status, _ := lock(base, token); status != http.StatusUnauthorized {
		t.Errorf("a revoked tenant token: %d, want 401", status)
	}
	var kept map[string]string
	b, _ := os.ReadFile(filepath.Join(dir, "tenant-tokens.json"))
	if json.Unmarshal(b, &kept); len(kept) != 0 {
		t.Errorf("after --revoke the file holds %s", b)
	}
}
