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
	attacker, cli, approved, tools := buildAttacker(t)
	list, err := exec.Command(attacker, "--list").Output()
	if err != nil {
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
			want := checkRecords(t, cli, "--lock", lock, "--server", server, "--now", now)

			handed, records := openRecording(t, &mcp.CommandTransport{Command: exec.Command(attacker, "--attack", attack)}, lock, clock)
			// The instructions a framework reads are the core's handoff:
			// the bytes of the member it covered, byte for byte, never
			// go-sdk's case-folding, last-wins parse of the answer (an
			// "Instructions" member, a repeated "instructions" key).
			if handed.Handoff == nil {
				t.Fatalf("the record carries no handoff: %s", handed.Raw)
			}
			exposed, _ := json.Marshal(handed.Handoff.Instructions)
			if want := attackerSays(t, attacker, "--instructions", attack); string(exposed) != want {
				t.Errorf("the session exposes instructions %s, the core hands %s", exposed, want)
			}
			// The first check's records come first; a background re-check
			// (a list_changed the attack sent) may have added more since.
			got := records()
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

// buildAttacker builds the attacker and the CLI into a temporary directory
// and writes the attacker's approved tool list beside them.
func buildAttacker(t *testing.T) (attacker, cli, approved string, tools []byte) {
	t.Helper()
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin, "github.com/crawlcheck/verifier/hosttest/attacker", "github.com/crawlcheck/verifier/cmd/crawlcheck")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the attacker and the CLI: %v\n%s", err, out)
	}
	attacker, cli = filepath.Join(bin, "attacker"), filepath.Join(bin, "crawlcheck")
	approved = filepath.Join(bin, "approved.json")
	tools, err := exec.Command(attacker, "--tools").Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(approved, tools, 0o644); err != nil {
		t.Fatal(err)
	}
	return attacker, cli, approved, tools
}

// checkRecords is what `crawlcheck check ARGS --json` prints: one record a
// line (exit 1, a check that withholds, still answers).
func checkRecords(t *testing.T, cli string, args ...string) []string {
	t.Helper()
	var out bytes.Buffer
	check := exec.Command(cli, append([]string{"check"}, append(args, "--json")...)...)
	check.Stdout = &out
	if err := check.Run(); err != nil && !isExit(err) {
		t.Fatalf("crawlcheck check: %v", err)
	}
	return strings.Split(strings.TrimSpace(out.String()), "\n")
}

// openRecording opens a Session over transport at clock, keeping every
// record it writes; it answers the record whose handoff a framework reads
// (the session's, or the refusal's) and the records so far. A session is
// closed when the test ends; Open failing without a record fails the test.
func openRecording(t *testing.T, transport mcp.Transport, lock string, clock time.Time) (preflight.Record, func() []string) {
	t.Helper()
	var (
		mu   sync.Mutex
		recs []string
	)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	sess, err := preflight.Open(ctx, &mcp.Implementation{Name: "identity-driver", Version: "1.0.0"}, nil, transport, nil,
		preflight.Config{LockPath: lock, Now: func() time.Time { return clock }, Timeout: 10 * time.Second,
			OnRecord: func(r preflight.Record) { mu.Lock(); recs = append(recs, string(r.Raw)); mu.Unlock() }})
	records := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), recs...)
	}
	var refused *preflight.RefusedError
	switch {
	case err == nil:
		t.Cleanup(func() { _ = sess.Close() })
		return sess.Record(), records
	case errors.As(err, &refused):
		return refused.Record, records
	default:
		t.Fatalf("Open failed without a record: %v", err)
		return preflight.Record{}, nil
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
	attacker, cli, approved, _ := buildAttacker(t)
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
			want := checkRecords(t, cli, "--lock", lock, "--url", url, "--now", now)

			_, records := openRecording(t, &mcp.StreamableClientTransport{Endpoint: url}, lock, clock)
			got := records()
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("the records differ:\nSession:\n%s\ncrawlcheck check:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
