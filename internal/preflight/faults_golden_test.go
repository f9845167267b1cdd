package preflight_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/hosttest/vectors"
	"github.com/crawlcheck/verifier/internal/preflight"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// faultGolden is testdata/faults.json (docs/testdata.md): host faults, the
// live server each comes from, and the record every host must give.
type faultGolden struct {
	TimeoutMS int `json:"timeout_ms"`
	Cases     []struct {
		Name   string
		Server *struct {
			URL     string   `json:"url"`
			Command []string `json:"command"`
		}
		Request struct {
			Now  string
			Lock json.RawMessage
		}
		Record json.RawMessage
		// DeadlineMS, when set, is the case's deadline instead of TimeoutMS.
		DeadlineMS int `json:"deadline_ms"`
	}
}

// readGolden reads the golden file testdata/name into a G.
func readGolden[G any](t *testing.T, name string) G {
	t.Helper()
	return vectors.Golden[G](t, repoPath("testdata", name))
}

// goldenDeadline is a golden case's deadline: its own (deadlineMS) when it
// has one, else the file's timeoutMS.
func goldenDeadline(timeoutMS, deadlineMS int) time.Duration {
	if deadlineMS != 0 {
		return time.Duration(deadlineMS) * time.Millisecond
	}
	return time.Duration(timeoutMS) * time.Millisecond
}

// openRecord opens a session on tr with cfg and answers its record: the
// session's (closed then) or, when Open refused, the refusal's. Any other
// error fails t: a golden fault is always a record.
func openRecord(t *testing.T, tr mcp.Transport, cfg preflight.Config) preflight.Record {
	t.Helper()
	s, err := preflight.Open(context.Background(), impl, nil, tr, nil, cfg)
	var refused *preflight.RefusedError
	switch {
	case err == nil:
		rec := s.Record()
		s.Close()
		return rec
	case errors.As(err, &refused):
		return refused.Record
	}
	t.Fatalf("Open: %v, want a record", err)
	return preflight.Record{}
}

// TestFaultsGolden: a session opened on each fault's live server (a port
// nothing listens on, a command that does not start, one that exits, one
// that hangs) is refused with exactly the golden record: the record's
// detail is the core's wording of the fault, never the SDK's error text,
// so the JS and Python preflights and the CLI give the same bytes.
func TestFaultsGolden(t *testing.T) {
	g := readGolden[faultGolden](t, "faults.json")
	for _, c := range g.Cases {
		if c.Server == nil {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			lockPath := filepath.Join(t.TempDir(), "lock.json")
			if err := os.WriteFile(lockPath, c.Request.Lock, 0o644); err != nil {
				t.Fatal(err)
			}
			now, err := time.Parse(time.RFC3339, c.Request.Now)
			if err != nil {
				t.Fatal(err)
			}
			var tr mcp.Transport
			if c.Server.URL != "" {
				tr = &mcp.StreamableClientTransport{Endpoint: c.Server.URL, MaxRetries: -1}
			} else {
				tr = &mcp.CommandTransport{Command: exec.Command(c.Server.Command[0], c.Server.Command[1:]...), TerminateDuration: time.Second}
			}
			cfg := preflight.Config{LockPath: lockPath, Now: func() time.Time { return now }, Timeout: goldenDeadline(g.TimeoutMS, c.DeadlineMS)}
			cfg.Mode = "enforce"
			// A fault in the handshake leaves no session, one at tools/list a
			// session whose record pauses it.
			rec := openRecord(t, tr, cfg)
			var want bytes.Buffer
			if err := json.Compact(&want, c.Record); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(rec.Raw, want.Bytes()) {
				t.Errorf("record differs\n got  %s\n want %s", rec.Raw, want.Bytes())
			}
		})
	}
}
