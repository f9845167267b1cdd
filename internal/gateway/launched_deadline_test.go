package gateway_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestLaunchedWithinCheckDeadline: the package a command line launches is
// resolved within the check's deadline (--timeout), beside the listing,
// never on a clock of its own before it. The command line reads as `npx -y
// pkg` (a dist-tag, which only the registry resolves), and the registry
// npx would ask accepts connections and never answers. The gate before
// the start and the gateway's first check each give it up at --timeout
// (the record then says it was not resolved, and the lockfile pins no
// package, so the tools are handed over); the client's handshake and
// listing wait no longer than that, not the registry's own 20 s twice.
func TestLaunchedWithinCheckDeadline(t *testing.T) {
	dir := t.TempDir()
	scenario := filepath.Join(dir, "scenario.json")
	if err := os.WriteFile(scenario, []byte(`{"server":{"name":"shop","version":"1"},"tools":`+threeTools+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A command whose name is npx: it runs the scenario server, whatever
	// its arguments say.
	npx := filepath.Join(dir, "npx")
	if err := os.WriteFile(npx, []byte("#!/bin/sh\nexec "+mcpserver+" --scenario "+scenario+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		var held []net.Conn // accepted and never answered
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	base := append(os.Environ(), "npm_config_cache="+filepath.Join(dir, "npm-cache"))
	lock, log := filepath.Join(dir, "lock.json"), filepath.Join(dir, "records.jsonl")
	// Locked while the registry refuses at once: no package is pinned.
	lockCmd := exec.Command(crawlcheck, "lock", "--server", npx+" -y probe-pkg", "-o", lock)
	lockCmd.Env = append(base, "npm_config_registry=http://127.0.0.1:1/")
	if out, err := lockCmd.CombinedOutput(); err != nil {
		t.Fatalf("lock: %v\n%s", err, out)
	}

	const timeout = 3 * time.Second
	cmd := exec.Command(crawlcheck, "--timeout", timeout.String(), "run", "--lock", lock, "--log", log, "--lock-poll", "50ms", "--grace", "2s", "--", npx, "-y", "probe-pkg")
	cmd.Env = append(base, "npm_config_registry=http://"+silent.Addr().String()+"/")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	start := time.Now()
	s := connectCmd(t, cmd, stderr, nil, "")
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	res, err := s.ListTools(ctx, nil)
	took := time.Since(start)
	if err != nil || len(res.Tools) != 3 {
		t.Fatalf("tools/list: %+v %v\n%s", res, err, stderr.String())
	}
	// Two checks' deadlines and the start, with room for a loaded machine;
	// the registry's own limit alone is 20 s.
	if took > 4*timeout {
		t.Errorf("the handshake and the listing took %s: the launched package was not resolved within --timeout %s\n%s", took, timeout, stderr.String())
	}
}
