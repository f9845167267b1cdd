//go:build !windows

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalEndsChildren: kill -TERM of crawlcheck while it waits on a
// stdio server (lock, check) leaves no process of the server behind: not
// the server, not what it started (issue 34, item 5). The server is a
// shell that starts a sleeper and then waits on its stdin forever.
func TestSignalEndsChildren(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "crawlcheck")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building crawlcheck: %v\n%s", err, out)
	}
	tools, lock := filepath.Join(dir, "tools.json"), filepath.Join(dir, "lock.json")
	if err := os.WriteFile(tools, []byte(`[{"name":"t","inputSchema":{"type":"object"}}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "lock", "--tools", tools, "-o", lock).CombinedOutput(); err != nil {
		t.Fatalf("lock --tools: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"lock"}, {"check", "--lock", lock}} {
		t.Run(args[0], func(t *testing.T) {
			pids := filepath.Join(t.TempDir(), "pids")
			server := "sh -c 'sleep 300 & echo $$ $! > " + pids + "; exec cat >/dev/null'"
			cmd := exec.Command(bin, append(args, "--timeout", "60s", "--server", server)...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var ps []int
			for i := 0; i < 200 && len(ps) < 2; i++ {
				time.Sleep(25 * time.Millisecond)
				b, _ := os.ReadFile(pids)
				ps = ps[:0]
				for _, f := range strings.Fields(string(b)) {
					if n, err := strconv.Atoi(f); err == nil {
						ps = append(ps, n)
					}
				}
			}
			if len(ps) < 2 {
				cmd.Process.Kill()
				t.Fatalf("the server did not start (pids %v)", ps)
			}
			cmd.Process.Signal(syscall.SIGTERM)
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
				t.Errorf("crawlcheck ended with %v, want exit status %d", err, 128+int(syscall.SIGTERM))
			}
			for _, pid := range ps {
				alive := true
				for i := 0; i < 100 && alive; i++ {
					alive = syscall.Kill(pid, 0) == nil && !zombie(pid)
					if alive {
						time.Sleep(20 * time.Millisecond)
					}
				}
				if alive {
					syscall.Kill(pid, syscall.SIGKILL)
					t.Errorf("process %d of the server outlived crawlcheck", pid)
				}
			}
		})
	}
}

// zombie reports whether pid has exited and waits only to be reaped (by
// init, its parent gone).
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// TestSignalLeavesNoRecord: a server that exits at once on SIGTERM while
// something it started ignores it (npx's node and its children) reads, to
// the session, as one that exited before answering, a second before its
// process group is killed. A kill -TERM of crawlcheck must not turn that
// into a record (or an exit status) blaming the server: the signal's exit
// status, and the log as it was.
func TestSignalLeavesNoRecord(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "crawlcheck")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building crawlcheck: %v\n%s", err, out)
	}
	tools, lock, log := filepath.Join(dir, "tools.json"), filepath.Join(dir, "lock.json"), filepath.Join(dir, "records.jsonl")
	if err := os.WriteFile(tools, []byte(`[{"name":"t","inputSchema":{"type":"object"}}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "lock", "--tools", tools, "-o", lock).CombinedOutput(); err != nil {
		t.Fatalf("lock --tools: %v\n%s", err, out)
	}
	started := filepath.Join(dir, "started")
	// cat, the server, ends on TERM; the sleeper in its group ignores it
	// until the SIGKILL a second later.
	server := `sh -c '(trap "" TERM; exec sleep 30) >/dev/null 2>&1 </dev/null & touch ` + started + `; exec cat >/dev/null'`
	cmd := exec.Command(bin, "check", "--lock", lock, "--log", log, "--timeout", "60s", "--server", server)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		if _, err := os.Stat(started); err == nil {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // the handshake sent, its answer awaited
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Errorf("crawlcheck ended with %v, want exit status %d", err, 128+int(syscall.SIGTERM))
	}
	if b, err := os.ReadFile(log); err == nil && len(b) > 0 {
		t.Errorf("a record was logged after the signal: %s", b)
	}
}
