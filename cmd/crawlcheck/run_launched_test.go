package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRunLaunchedAfterStart: the gateway compares the launched package
// after the server started, not only before. server-memory is locked with
// the real npx into a cache of the test's own, then its npx install is
// removed, so that before the start the approved version is not installed
// (run's gate cannot compare it) and npx installs it as the server starts:
// the gateway's record, resolved after the start, compares what npx ran
// (server.launched identity match), byte for byte the record crawlcheck
// check --json writes. The install's integrity is then edited
// under the running server and the lockfile touched: the re-check that
// follows resolves again and denies (launched_package_changed), and the
// client is told its tool list changed.
func TestRunLaunchedAfterStart(t *testing.T) {
	npx := needNpx(t)
	tmp := t.TempDir()
	bin := buildCrawlcheck(t, tmp)
	cache := filepath.Join(tmp, "npm-cache")
	if err := os.Mkdir(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "npm_config_cache="+cache)
	const spec = "@modelcontextprotocol/server-memory@2026.8.31"
	lock, log := filepath.Join(tmp, "mem.lock"), filepath.Join(tmp, "records.jsonl")
	lockCmd := exec.Command(bin, "--timeout", "120s", "lock", "--server", npx+" -y "+spec, "-o", lock)
	lockCmd.Dir, lockCmd.Env = tmp, env
	if out, err := lockCmd.CombinedOutput(); err != nil {
		t.Fatalf("lock: %v\n%s", err, out)
	}
	// The install goes; npm's own tarball cache stays, so npx installs the
	// same tarball again at the start without the network.
	if err := os.RemoveAll(filepath.Join(cache, "_npx")); err != nil {
		t.Fatal(err)
	}

	const now = "2026-12-01T12:00:00Z"
	cmd := exec.Command(bin, "--timeout", "120s", "run", "--now", now, "--lock", lock, "--log", log, "--lock-poll", "50ms", "--", npx, "-y", spec)
	cmd.Dir, cmd.Env = tmp, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	changed := make(chan struct{}, 4)
	client := mcp.NewClient(&mcp.Implementation{Name: "run-launched-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list: %+v %v\n%s", tools, err, stderr.String())
	}
	type record struct {
		Effect       string             `json:"effect"`
		Observations recordObservations `json:"observations"`
		Server       struct {
			Launched struct {
				Identity string `json:"identity"`
			} `json:"launched"`
		} `json:"server"`
	}
	records := func() []record {
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		var out []record
		for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			var r record
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	if r := records()[0]; r.Effect != "proceed" || r.Server.Launched.Identity != "match" {
		t.Fatalf("the first record, after npx installed the approved version at the start: %+v\n%s", r, stderr.String())
	}
	// The same record crawlcheck check --json writes, which reads the
	// package after its own session.
	check := exec.Command(bin, "--timeout", "120s", "check", "--now", now, "--handshake", "initialize", "--json", "--lock", lock, "--server", npx+" -y "+spec)
	check.Dir, check.Env = tmp, env
	want, _ := check.Output()
	got, _ := os.ReadFile(log)
	if first := got[:bytes.IndexByte(got, '\n')]; !bytes.Equal(first, bytes.TrimSpace(want)) {
		t.Errorf("the gateway's first record:\n%s\ncrawlcheck check --json:\n%s", first, want)
	}

	// Another tarball under the approved version in the install npx ran.
	installs, _ := filepath.Glob(filepath.Join(cache, "_npx", "*", "package-lock.json"))
	if len(installs) != 1 {
		t.Fatalf("%d npx installs, want the one npx made at the start", len(installs))
	}
	var pinned struct {
		Launched struct{ Integrity string } `json:"launched"`
	}
	raw, _ := os.ReadFile(lock)
	json.Unmarshal(raw, &pinned)
	b, err := os.ReadFile(installs[0])
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), pinned.Launched.Integrity, "sha512-"+strings.Repeat("A", 86)+"==", 1)
	if pinned.Launched.Integrity == "" || edited == string(b) {
		t.Fatalf("%s does not hold the pinned integrity %q", installs[0], pinned.Launched.Integrity)
	}
	if err := os.WriteFile(installs[0], []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	// The lockfile rewritten (the same bytes plus a newline: approve's
	// act, as far as the gateway's watch can tell) makes it check again.
	if err := os.WriteFile(lock, append(raw, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(time.Minute):
		t.Fatalf("the client was not told its tools changed\n%s", stderr.String())
	}
	rs := records()
	last := rs[len(rs)-1]
	if last.Effect != "deny" || last.Server.Launched.Identity != "changed" || !last.Observations.has("launched_package_changed") {
		t.Errorf("the re-check after the install changed: %+v\n%s", last, stderr.String())
	}
	if tools, err := cs.ListTools(ctx, nil); err != nil || len(tools.Tools) != 0 {
		t.Errorf("tools/list after the deny: %d tools, %v", len(tools.Tools), err)
	}
}
