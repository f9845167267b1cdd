package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/hosttest/vectors"
	"github.com/crawlcheck/verifier/internal/listening"
)

// TestIssuerFaultsGolden: `crawlcheck check --issuer` of testdata/issuer-faults.json's
// server, with an issuer that gives nothing to judge (nothing listening,
// hanging, answering 500, too much, or what is not JSON), prints exactly
// the golden record (exit 1): the issuer member names the step and the
// fault, the core words the detail, and the Go, JS and Python preflights
// give the same bytes.
func TestIssuerFaultsGolden(t *testing.T) {
	g := readGolden[struct {
		TimeoutMS int `json:"timeout_ms"`
		Cases     []struct {
			Name       string
			Down       string
			Request    map[string]json.RawMessage
			Record     json.RawMessage
			DeadlineMS int `json:"deadline_ms"`
		}
	}](t, "issuer-faults.json")
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/crawlcheck/verifier/hosttest/issuer").CombinedOutput(); err != nil {
		t.Fatalf("building the test issuer: %v\n%s", err, out)
	}
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			lock := filepath.Join(dir, "lock.json")
			if err := os.WriteFile(lock, c.Request["lock"], 0o644); err != nil {
				t.Fatal(err)
			}
			var now, endpoint string
			var observed struct{ Endpoint string }
			var trace map[string]any
			json.Unmarshal(c.Request["now"], &now)
			json.Unmarshal(c.Request["observed"], &observed)
			json.Unmarshal(c.Request["issuer"], &trace)
			endpoint = observed.Endpoint
			url := trace["url"].(string)
			if c.Down != "" {
				cmd := exec.Command(filepath.Join(bin, "issuer"), "--listen", "127.0.0.1:0", "--keys", filepath.Join("..", "..", "testdata", "keys"), "--down", c.Down)
				u, stop, err := listening.Start(cmd)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(stop)
				url = u
			}
			// The endpoint is "stdio:" and the command's words quoted as a
			// POSIX shell reads them: what --server takes.
			args := []string{"--now", now, "check", "--json", "--lock", lock, "--mode", "enforce",
				"--server", strings.TrimPrefix(endpoint, "stdio:"),
				"--issuer", url}
			if d, ok := c.Request["key_directory"]; ok {
				keys := filepath.Join(dir, "directory.json")
				if err := os.WriteFile(keys, d, 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--issuer-keys", keys)
			}
			if p, ok := c.Request["pinned_keys"]; ok {
				var pins []struct {
					KID       string `json:"kid"`
					PublicKey string `json:"public_key"`
				}
				json.Unmarshal(p, &pins)
				for _, k := range pins {
					args = append(args, "--issuer-pin", k.KID+":"+k.PublicKey)
				}
			}
			args = append(args, "--issuer-timeout", goldenDeadline(g.TimeoutMS, c.DeadlineMS))
			var stdout, stderr bytes.Buffer
			if code := run(args, nil, &stdout, &stderr); code != 1 {
				t.Fatalf("exit %d, want 1\n%s", code, stderr.String())
			}
			want, err := vectors.IssuerFaultRecord(c.Request, c.Record, url, core.Call)
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.TrimSpace(stdout.Bytes()); !bytes.Equal(got, want) {
				t.Errorf("record differs\n got  %s\n want %s", got, want)
			}
		})
	}
}
