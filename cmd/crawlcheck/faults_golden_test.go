package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/hosttest/vectors"
)

// readGolden reads the golden file testdata/name into a G.
func readGolden[G any](t *testing.T, name string) G {
	t.Helper()
	return vectors.Golden[G](t, filepath.Join("..", "..", "testdata", name))
}

// goldenDeadline is a golden case's deadline as a flag takes it: its own
// (deadlineMS) when it has one, else the file's timeoutMS.
func goldenDeadline(timeoutMS, deadlineMS int) string {
	if deadlineMS != 0 {
		timeoutMS = deadlineMS
	}
	return strconv.Itoa(timeoutMS) + "ms"
}

// TestFaultsGolden: `crawlcheck check` of each host fault's live server in
// testdata/faults.json prints exactly the golden record (exit 1), the same
// bytes as the Go, JS and Python preflights give: the detail is the core's
// wording of the fault, never the SDK's error text.
func TestFaultsGolden(t *testing.T) {
	g := readGolden[struct {
		TimeoutMS int `json:"timeout_ms"`
		Cases     []struct {
			Name    string
			Server  *struct{ URL string }
			Request struct {
				Now      string
				Lock     json.RawMessage
				Observed struct{ Endpoint string }
			}
			Record     json.RawMessage
			DeadlineMS int `json:"deadline_ms"`
		}
	}](t, "faults.json")
	for _, c := range g.Cases {
		if c.Server == nil {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			lock := filepath.Join(t.TempDir(), "lock.json")
			if err := os.WriteFile(lock, c.Request.Lock, 0o644); err != nil {
				t.Fatal(err)
			}
			source := []string{"--url", c.Server.URL}
			if c.Server.URL == "" {
				// The endpoint is "stdio:" and the command's words quoted as
				// a POSIX shell reads them: what --server takes.
				source = []string{"--server", strings.TrimPrefix(c.Request.Observed.Endpoint, "stdio:")}
			}
			var stdout, stderr bytes.Buffer
			args := append([]string{"--now", c.Request.Now, "--timeout", goldenDeadline(g.TimeoutMS, c.DeadlineMS), "check", "--json", "--lock", lock, "--mode", "enforce"}, source...)
			if code := run(args, nil, &stdout, &stderr); code != 1 {
				t.Fatalf("exit %d, want 1\n%s", code, stderr.String())
			}
			var want bytes.Buffer
			if err := json.Compact(&want, c.Record); err != nil {
				t.Fatal(err)
			}
			if got := bytes.TrimSpace(stdout.Bytes()); !bytes.Equal(got, want.Bytes()) {
				t.Errorf("record differs\n got  %s\n want %s", got, want.Bytes())
			}
		})
	}
}
