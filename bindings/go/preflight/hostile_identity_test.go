package preflight_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/bindings/go/preflight"
	"github.com/crawlcheck/verifier/core"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHostileIdentity is the Go preflight's part of the cross-host identity
// test against the red team's server (issue 22, F12): for every attack
// hosttest/attacker serves, the first check a Session makes (Open, over the
// go-sdk's own CommandTransport) leaves the records `crawlcheck check`
// leaves, byte for byte, at the same clock. JS (test/hostile-identity.test.js,
// SDK 1.x and 2.x) and Python (tests/test_hostile_identity.py, mcp 1.x and
// 2.x) are held to the same records.
func TestHostileIdentity(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the attacker once per attack, twice")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin, "github.com/crawlcheck/verifier/hosttest/attacker", "github.com/crawlcheck/verifier/cmd/crawlcheck")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the attacker and the CLI: %v\n%s", err, out)
	}
	attacker, cli := filepath.Join(bin, "attacker"), filepath.Join(bin, "crawlcheck")
	list, err := exec.Command(attacker, "--list").Output()
	if err != nil {
		t.Fatal(err)
	}
	approved := filepath.Join(bin, "approved.json")
	tools, err := exec.Command(attacker, "--tools").Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(approved, tools, 0o644); err != nil {
		t.Fatal(err)
	}
	const now = "2026-11-30T12:00:00.000Z"
	clock, _ := time.Parse(time.RFC3339, now)
	for _, attack := range strings.Fields(string(list)) {
		t.Run(attack, func(t *testing.T) {
			dir := t.TempDir()
			lock := filepath.Join(dir, "crawlcheck.lock.json")
			server := attacker + " --attack " + attack
			if hs := attackerSays(t, attacker, "--handshake", attack); hs != "null" {
				pinHandshake(t, lock, "stdio:"+server, hs, tools)
			} else if out, err := exec.Command(cli, "--now", "2026-11-01T00:00:00Z", "lock", "--tools", approved, "--url", "stdio:"+server, "-o", lock).CombinedOutput(); err != nil {
				t.Fatalf("crawlcheck lock: %v\n%s", err, out)
			}
			var stdout bytes.Buffer
			check := exec.Command(cli, "check", "--lock", lock, "--server", server, "--now", now, "--json")
			check.Stdout = &stdout
			if err := check.Run(); err != nil && !isExit(err) {
				t.Fatalf("crawlcheck check: %v", err)
			}
			want := strings.Split(strings.TrimSpace(stdout.String()), "\n")

			var (
				mu   sync.Mutex
				recs []string
			)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			sess, err := preflight.Open(ctx, &mcp.Implementation{Name: "identity-driver", Version: "1.0.0"}, nil,
				&mcp.CommandTransport{Command: exec.Command(attacker, "--attack", attack)}, nil,
				preflight.Config{LockPath: lock, Now: func() time.Time { return clock }, Timeout: 10 * time.Second,
					OnRecord: func(r preflight.Record) { mu.Lock(); recs = append(recs, string(r.Raw)); mu.Unlock() }})
			var refused *preflight.RefusedError
			handed := refused // the record whose handoff a framework reads
			switch {
			case err == nil:
				defer sess.Close()
				handed = &preflight.RefusedError{Record: sess.Record()}
			case errors.As(err, &refused):
				handed = refused
			default:
				t.Fatalf("Open failed without a record: %v", err)
			}
			// The instructions a framework reads are the core's handoff:
			// the bytes of the member it covered, byte for byte, never
			// go-sdk's case-folding, last-wins parse of the answer (an
			// "Instructions" member, a repeated "instructions" key).
			if handed.Record.Handoff == nil {
				t.Fatalf("the record carries no handoff: %s", handed.Record.Raw)
			}
			exposed, _ := json.Marshal(handed.Record.Handoff.Instructions)
			if want := attackerSays(t, attacker, "--instructions", attack); string(exposed) != want {
				t.Errorf("the session exposes instructions %s, the core hands %s", exposed, want)
			}
			mu.Lock()
			// The first check's records come first; a background re-check
			// (a list_changed the attack sent) may have added more since.
			got := append([]string(nil), recs...)
			mu.Unlock()
			if len(got) < len(want) {
				t.Fatalf("the first check left %d records, crawlcheck check %d:\n%s\n%s", len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("record %d differs:\nSession:         %.900s\ncrawlcheck check: %.900s", i+1, got[i], want[i])
				}
			}
		})
	}
}

// attackerSays is what `attacker FLAG attack` prints: the handshake its
// lock pins (--handshake), or the instructions a host may expose
// (--instructions); JSON, null for none.
func attackerSays(t *testing.T, attacker, flag, attack string) string {
	t.Helper()
	out, err := exec.Command(attacker, flag, attack).Output()
	if err != nil {
		t.Fatalf("attacker %s %s: %v", flag, attack, err)
	}
	return strings.TrimSpace(string(out))
}

// pinHandshake writes a lockfile approving tools (one page) and the
// handshake result hs for endpoint, as make_lock pins what a host saw.
func pinHandshake(t *testing.T, lock, endpoint, hs string, tools []byte) {
	t.Helper()
	req, _ := json.Marshal(map[string]any{"approved_at": "2026-11-01T00:00:00Z", "observed": map[string]any{
		"endpoint": endpoint, "handshake_result": hs, "pages": []string{`{"tools":` + strings.TrimSpace(string(tools)) + `}`}}})
	raw := core.Call("make_lock", req)
	var ans struct {
		Result struct {
			Lock string `json:"lock"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil || ans.Result.Lock == "" {
		t.Fatalf("make_lock: %v: %s", err, raw)
	}
	if err := os.WriteFile(lock, []byte(ans.Result.Lock), 0o644); err != nil {
		t.Fatal(err)
	}
}

func isExit(err error) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit)
}

// httpAttacks are the attacks whose bite is in the streamable HTTP framing:
// each is served by `attacker --http` too.
var httpAttacks = []string{"sse_other_event"}

// TestHostileIdentityHTTP holds a Session over go-sdk's own
// StreamableClientTransport to the records `crawlcheck check --url` leaves
// against the attacks written over streamable HTTP (a decoy answer in an
// event of type "other" before the real one), as the JS and Python tests
// hold their streamable HTTP transports.
func TestHostileIdentityHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the attacker once per attack")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin, "github.com/crawlcheck/verifier/hosttest/attacker", "github.com/crawlcheck/verifier/cmd/crawlcheck")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the attacker and the CLI: %v\n%s", err, out)
	}
	attacker, cli := filepath.Join(bin, "attacker"), filepath.Join(bin, "crawlcheck")
	approved := filepath.Join(bin, "approved.json")
	tools, err := exec.Command(attacker, "--tools").Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(approved, tools, 0o644); err != nil {
		t.Fatal(err)
	}
	const now = "2026-11-30T12:00:00.000Z"
	clock, _ := time.Parse(time.RFC3339, now)
	for _, attack := range httpAttacks {
		t.Run(attack, func(t *testing.T) {
			srv := exec.Command(attacker, "--attack", attack, "--http", "127.0.0.1:0")
			stdout, err := srv.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil {
				t.Fatalf("reading the attacker's URL: %v", err)
			}
			url := strings.TrimSpace(line)
			lock := filepath.Join(t.TempDir(), "crawlcheck.lock.json")
			if out, err := exec.Command(cli, "--now", "2026-11-01T00:00:00Z", "lock", "--tools", approved, "--url", url, "-o", lock).CombinedOutput(); err != nil {
				t.Fatalf("crawlcheck lock: %v\n%s", err, out)
			}
			var out bytes.Buffer
			check := exec.Command(cli, "check", "--lock", lock, "--url", url, "--now", now, "--json")
			check.Stdout = &out
			if err := check.Run(); err != nil && !isExit(err) {
				t.Fatalf("crawlcheck check: %v", err)
			}
			want := strings.Split(strings.TrimSpace(out.String()), "\n")

			var (
				mu   sync.Mutex
				recs []string
			)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			sess, err := preflight.Open(ctx, &mcp.Implementation{Name: "identity-driver", Version: "1.0.0"}, nil,
				&mcp.StreamableClientTransport{Endpoint: url}, nil,
				preflight.Config{LockPath: lock, Now: func() time.Time { return clock }, Timeout: 10 * time.Second,
					OnRecord: func(r preflight.Record) { mu.Lock(); recs = append(recs, string(r.Raw)); mu.Unlock() }})
			var refused *preflight.RefusedError
			switch {
			case err == nil:
				defer sess.Close()
			case errors.As(err, &refused):
			default:
				t.Fatalf("Open failed without a record: %v", err)
			}
			mu.Lock()
			got := append([]string(nil), recs...)
			mu.Unlock()
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("the records differ:\nSession:\n%s\ncrawlcheck check:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
