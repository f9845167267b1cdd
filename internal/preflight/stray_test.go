package preflight_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/preflight"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStrayLines: a stdio server that writes lines that are no JSON-RPC
// message to its stdout (as @azure/mcp 2.0.5 prints "No X display
// available…" before its answer) is read whole, as the official TypeScript
// and Python clients read it: each such line is skipped and counted, over
// the SDK's own session and over a check-only one, and the record carries
// the count. A line that starts as a message and is malformed stays the
// page (TestInvalidJSONPage).
func TestStrayLines(t *testing.T) {
	dir := t.TempDir()
	scenario := filepath.Join(dir, "scenario.json")
	if err := os.WriteFile(scenario, []byte(`{"page_size":2,"tools":`+fiveTools+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The banner, a blank line (no line at all: not counted) and a log
	// line, before the server's first byte.
	script := `printf 'No X display available, browser login disabled\n\n  [info] starting\n'; exec "$0" --scenario "$1"`
	for _, checkOnly := range []bool{false, true} {
		cmd := exec.Command("sh", "-c", script, serverBin, scenario)
		cmd.Stderr = os.Stderr
		tr, err := preflight.Wrap(&mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
		client := mcp.NewClient(&mcp.Implementation{Name: "preflight-test", Version: "0"}, nil)
		cs, obs := preflight.Connect(ctx, client, tr, nil, &preflight.Options{CheckOnly: checkOnly})
		cancel()
		if cs != nil {
			cs.Close()
		}
		mustPass(t, obs)
		if got := len(toolsOf(t, obs)); got != 5 || len(obs.Pages) != 3 {
			t.Fatalf("check-only %v: %d tools on %d pages, want 5 on 3", checkOnly, got, len(obs.Pages))
		}
		if obs.StrayLines != 2 {
			t.Fatalf("check-only %v: %d stray lines, want 2", checkOnly, obs.StrayLines)
		}
	}
}
