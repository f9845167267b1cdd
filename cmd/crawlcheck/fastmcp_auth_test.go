package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/internal/listening"
)

// fastmcpAuthServer starts hosttest/fastmcpauth (a FastMCP server of the
// mcp package behind its bearer-token verifier, in the venv make
// fastmcp-deps builds: $(BUILD)/py-fastmcp) accepting token, and returns
// its URL.
func fastmcpAuthServer(t *testing.T, token string) string {
	t.Helper()
	python := os.Getenv("CRAWLCHECK_FASTMCP_PYTHON")
	if python == "" {
		python, _ = filepath.Abs(filepath.Join("..", "..", "build", "py-fastmcp", "bin", "python"))
	}
	if _, err := os.Stat(python); err != nil {
		if os.Getenv("CRAWLCHECK_NEED_SERVERS") != "" {
			t.Fatalf("the FastMCP venv is missing (%v): make fastmcp-deps", err)
		}
		t.Skip("the FastMCP venv is not built (make fastmcp-deps)")
	}
	script, _ := filepath.Abs(filepath.Join("..", "..", "hosttest", "fastmcpauth", "server.py"))
	cmd := exec.Command(python, script, token)
	// FastMCP logs every session (and a traceback for each event stream a
	// client leaves): shown only if the test fails.
	var logged strings.Builder
	cmd.Stderr = &logged
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the FastMCP server's stderr:\n%s", logged.String())
		}
	})
	url, stop, err := listening.Start(cmd)
	if err != nil {
		t.Fatalf("the FastMCP server: %v", err)
	}
	t.Cleanup(stop)
	return url
}

// TestFastMCPBehindABearerVerifier: a FastMCP server whose token verifier
// accepts one token. Without it, lock refuses and check, scan and run
// --url record HTTP 401 with what to do and the resource metadata URL
// FastMCP names; with it (--header-env), lock pins the list, check and
// scan pass, and the gateway hands the tool over and its call goes
// through; the token is in no output, lockfile or record.
func TestFastMCPBehindABearerVerifier(t *testing.T) {
	const token = "fastmcp-token-6c1d9e"
	url := fastmcpAuthServer(t, token)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no login kept
	t.Setenv("FASTMCP_TOKEN", "Bearer "+token)
	dir := t.TempDir()
	lock := filepath.Join(dir, "lock.json")
	now := "2026-11-30T12:00:00Z"
	var outputs []string
	cli := func(args ...string) (int, string, string) {
		code, stdout, stderr := runCLI(append([]string{"--now", now}, args...)...)
		outputs = append(outputs, stdout, stderr)
		return code, stdout, stderr
	}
	auth := []string{"--header-env", "Authorization=FASTMCP_TOKEN"}
	want401 := func(what, out string) {
		t.Helper()
		if !strings.Contains(out, "HTTP 401") || !strings.Contains(out, "crawlcheck login --url "+url) || !strings.Contains(out, "its resource metadata: http://127.0.0.1:") {
			t.Errorf("%s without the token:\n%s", what, out)
		}
	}

	code, _, stderr := cli("lock", "--url", url, "-o", lock)
	if code == 0 {
		t.Fatal("lock without the token pinned a list")
	}
	want401("lock", stderr)
	if code, _, stderr := cli(append([]string{"lock", "--url", url, "-o", lock}, auth...)...); code != 0 {
		t.Fatalf("lock with the token: exit %d, %s", code, stderr)
	}
	code, rec, _ := cli("check", "--lock", lock, "--url", url, "--json")
	if code == 0 {
		t.Error("check without the token passed")
	}
	want401("check", rec)
	code, stdout, stderr := cli("scan", "--url", url)
	if code == 0 {
		t.Error("scan without the token passed")
	}
	want401("scan", stdout+stderr)
	if code, _, stderr := cli(append([]string{"check", "--lock", lock, "--url", url}, auth...)...); code != 0 {
		t.Errorf("check with the token: exit %d, %s", code, stderr)
	}
	if code, stdout, stderr := cli(append([]string{"scan", "--url", url}, auth...)...); code != 0 {
		t.Errorf("scan with the token: exit %d, %s %s", code, stdout, stderr)
	}

	log := filepath.Join(dir, "records.jsonl")
	_, gwErr, err := gatewaySession(t, "--now", now, "run", "--lock", lock, "--log", log, "--url", url)
	if err == nil {
		t.Fatal("the gateway without the token opened a session")
	}
	want401("run --url (the client's error)", err.Error())
	cs, gwErr, err := gatewaySession(t, append([]string{"--now", now, "run", "--lock", lock, "--log", log, "--url", url}, auth...)...)
	if err != nil {
		t.Fatalf("the gateway with the token: %v\n%s", err, gwErr)
	}
	if got := toolNames(t, cs); strings.Join(got, " ") != "get_issue" {
		t.Errorf("handed %v", got)
	}
	cs.Close()
	records := readLog(t, log)
	want401("run --url (the record)", records)
	if !strings.Contains(records, `"effect":"proceed"`) {
		t.Errorf("no record proceeds:\n%s", records)
	}
	lockBytes, _ := os.ReadFile(lock)
	for i, out := range append(outputs, string(lockBytes), records, gwErr.String()) {
		if strings.Contains(out, token) {
			t.Errorf("output %d holds the token", i)
		}
	}
}
