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
