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

func readFaultGolden(t *testing.T) faultGolden {
	t.Helper()
	raw, err := os.ReadFile(repoPath("testdata", "faults.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g faultGolden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestFaultsGolden: a session opened on each fault's live server (a port
// nothing listens on, a command that does not start, one that exits, one
// that hangs) is refused with exactly the golden record: the record's
// detail is the core's wording of the fault, never the SDK's error text,
// so the JS and Python preflights and the CLI give the same bytes.
func TestFaultsGolden(t *testing.T) {
	g := readFaultGolden(t)
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
			deadline := g.TimeoutMS
			if c.DeadlineMS != 0 {
				deadline = c.DeadlineMS
			}
			cfg := preflight.Config{LockPath: lockPath, Now: func() time.Time { return now }, Timeout: time.Duration(deadline) * time.Millisecond}
			cfg.Mode = "enforce"
			// A fault in the handshake leaves no session, one at tools/list a
			// session whose record pauses it.
			var rec preflight.Record
			s, err := preflight.Open(context.Background(), impl, nil, tr, nil, cfg)
			var refused *preflight.RefusedError
			switch {
			case err == nil:
				rec = s.Record()
				s.Close()
			case errors.As(err, &refused):
				rec = refused.Record
			default:
				t.Fatalf("Open: %v, want a record", err)
			}
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
