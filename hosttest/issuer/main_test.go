package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/crawlcheck/verifier/core"
)

// TestCommand builds the command and runs it as other languages' tests do:
// the first line of stdout is its base URL, the flags set the knobs, and
// SIGTERM ends it.
func TestCommand(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "issuer")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--keys", "../../testdata/keys", "--key", "retired", "--reuse-nonce",
		"--now", "2026-11-30T12:00:00Z")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSpace(line)
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("first line %q is not the base URL", line)
	}
	get := func(path string) []byte {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	var dir struct{ Kind string }
	json.Unmarshal(get("/api/v1/keys"), &dir)
	var knobs map[string]any
	json.Unmarshal(get("/admin/knobs"), &knobs)
	if dir.Kind != "crawlcheck-key-directory" || knobs["key"] != "retired" || knobs["reuse_nonce"] != true || len(knobs) != 2 {
		t.Errorf("key directory kind %q, knobs %v", dir.Kind, knobs)
	}
	// --now: a receipt is issued at that instant, whatever the clock says.
	var made struct {
		OK     bool
		Result struct{ Lock string }
	}
	json.Unmarshal(core.Call("make_lock", []byte(`{"tools":[],"approved_at":"2026-10-07T10:45:00Z","server":{"url":"http://127.0.0.1:1/mcp"}}`)), &made)
	if !made.OK {
		t.Fatal("make_lock refused an empty list")
	}
	body, _ := json.Marshal(map[string]any{"lock": made.Result.Lock, "tools": []any{}})
	resp, err := http.Post(base+"/api/v1/mcp/lock/check", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var receipt struct {
		IssuedAt string `json:"issued_at"`
	}
	json.NewDecoder(resp.Body).Decode(&receipt)
	resp.Body.Close()
	if receipt.IssuedAt != "2026-11-30T12:00:00.000Z" {
		t.Errorf("with --now, issued_at %q", receipt.IssuedAt)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v", err)
	}
}
