package preflight_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/hosttest/vectors"
	"github.com/crawlcheck/verifier/internal/preflight"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// issuerFaultGolden is testdata/issuer-faults.json (docs/testdata.md): an
// issuer that gives nothing to judge, and the record every host must give.
type issuerFaultGolden struct {
	TimeoutMS int `json:"timeout_ms"`
	Server    struct {
		Command []string `json:"command"`
	}
	Cases []issuerFaultGoldenCase
}

type issuerFaultGoldenCase struct {
	Name       string
	Down       string
	Request    map[string]json.RawMessage
	Record     json.RawMessage
	DeadlineMS int `json:"deadline_ms"`
}

// TestIssuerFaultsGolden: a session checked with an issuer that gives
// nothing to judge (nothing listening, hanging past its deadline,
// answering 500, too much, or what is not JSON) records exactly the golden
// record: the issuer member names the step and the fault, and the core
// words the detail, so the CLI, JS and Python give the same bytes.
func TestIssuerFaultsGolden(t *testing.T) {
	g := readGolden[issuerFaultGolden](t, "issuer-faults.json")
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			var lock, now string
			json.Unmarshal(c.Request["now"], &now)
			lock = filepath.Join(t.TempDir(), "lock.json")
			if err := os.WriteFile(lock, c.Request["lock"], 0o644); err != nil {
				t.Fatal(err)
			}
			at, err := time.Parse(time.RFC3339, now)
			if err != nil {
				t.Fatal(err)
			}
			var trace struct{ URL string }
			json.Unmarshal(c.Request["issuer"], &trace)
			url := trace.URL
			if c.Down != "" {
				iss := startIssuer(t)
				iss.knobs(t, `{"down":"`+c.Down+`"}`)
				url = iss.url
			}
			cfg := preflight.Config{LockPath: lock, Now: func() time.Time { return at }, Timeout: 10 * time.Second,
				Issuer: &preflight.Issuer{URL: url, Timeout: goldenDeadline(g.TimeoutMS, c.DeadlineMS)}}
			cfg.Mode = "enforce"
			if d, ok := c.Request["key_directory"]; ok {
				cfg.KeyDirectory = d
			}
			if p, ok := c.Request["pinned_keys"]; ok {
				if err := json.Unmarshal(p, &cfg.Issuer.PinnedKeys); err != nil {
					t.Fatal(err)
				}
			}
			tr := &mcp.CommandTransport{Command: exec.Command(g.Server.Command[0], g.Server.Command[1:]...), TerminateDuration: time.Second}
			rec := openRecord(t, tr, cfg)
			want, err := vectors.IssuerFaultRecord(c.Request, c.Record, url, core.Call)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(rec.Raw, want) {
				t.Errorf("record differs\n got  %s\n want %s", rec.Raw, want)
			}
		})
	}
}
