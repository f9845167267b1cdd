//go:build linux

// Package qemu runs the linux-arm64 CLI and the scenario server, cross-built
// as static binaries, under Debian's qemu-user (make test-qemu,
// docs/release.md): lock, check, run driven over stdio leaving no process
// behind, two runs on one --log.
package qemu

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/hosttest/crossrun"
)

// q is the environment every test runs in, made once by TestMain.
var q struct {
	dir  string // the two binaries and every test's files
	exe  string // crawlcheck, linux/arm64
	srv  string // mcpserver, linux/arm64
	qemu string // qemu-aarch64's path
}

// cc runs the cross-built crawlcheck under the emulator (hosttest/crossrun).
var cc crossrun.CLI

func TestMain(m *testing.M) {
	if os.Getenv("CRAWLCHECK_QEMU") != "1" {
		os.Exit(m.Run()) // every test skips
	}
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "crawlcheck-qemu-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "qemu:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		q.dir = dir
		if err := setup(); err != nil {
			fmt.Fprintln(os.Stderr, "qemu: setup:", err)
			return 1
		}
		cc = crossrun.CLI{Dir: q.dir, Command: qemuCmd, Client: "qemu-test"}
		return m.Run()
	}())
}

// setup finds qemu-aarch64 and cross-builds the two programs, static.
func setup() error {
	var err error
	if q.qemu, err = exec.LookPath("qemu-aarch64"); err != nil {
		return fmt.Errorf("qemu-aarch64 (Debian's qemu-user; make test-qemu installs it): %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		return err
	}
	q.exe = filepath.Join(q.dir, "crawlcheck")
	q.srv = filepath.Join(q.dir, "mcpserver")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, b := range [][2]string{{q.exe, "./cmd/crawlcheck"}, {q.srv, "./hosttest/mcpserver"}} {
		cmd := exec.Command("go", "build", "-trimpath", "-o", b[0], b[1])
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func need(t *testing.T) {
	t.Helper()
	if os.Getenv("CRAWLCHECK_QEMU") != "1" {
		t.Skip("CRAWLCHECK_QEMU=1 runs the linux-arm64 builds under qemu-user (make test-qemu)")
	}
}

// serverArgv is the argv a client config gives for the arm64 server. The
// CLI starts it with execve, which qemu-user passes to this machine's
// kernel: an arm64 program runs only where binfmt_misc hands it to qemu,
// which a container (this one) often lacks. So the server's command is
// qemu-aarch64 with the server as its argument, as it would be on such a
// machine; the CLI's part (finding the command on PATH, its process group,
// its stdio) is the same.
func serverArgv(sc string) []string {
	return []string{q.qemu, q.srv, "--scenario", sc}
}

// qemuCmd is the arm64 crawlcheck with args, under qemu-aarch64.
func qemuCmd(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, q.qemu, append([]string{q.exe}, args...)...)
	cmd.Dir = q.dir
	// A process crawlcheck left behind may hold its stdout: the test then
	// fails on what was left, rather than wait for it.
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// lock pins the scenario server and returns the lockfile and the argv a
// client config gives run (the words --server was given).
func lock(t *testing.T, sc string) (lockfile string, argv []string) {
	t.Helper()
	lockfile = filepath.Join(filepath.Dir(sc), "server.lock.json")
	argv = serverArgv(sc)
	if out, errOut, code := cc.Run(t, "lock", "--server", strings.Join(argv, " "), "-o", lockfile); code != 0 {
		t.Fatalf("lock: exit %d\n%s%s", code, out, errOut)
	}
	return lockfile, argv
}

// TestArm64 makes sure the binaries under test are the arm64 ones, so that
// a build that fell back to this machine's architecture cannot pass.
func TestArm64(t *testing.T) {
	need(t)
	out, errOut, code := cc.Run(t, "--version")
	if code != 0 || !strings.Contains(out, "linux/arm64") {
		t.Fatalf("crawlcheck --version: exit %d, want linux/arm64\n%s%s", code, out, errOut)
	}
	for _, p := range []string{q.exe, q.srv} {
		b := make([]byte, 20)
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadFull(f, b)
		f.Close()
		// ELF, 64-bit, e_machine 183 (EM_AARCH64), little-endian.
		if err != nil || string(b[:4]) != "\x7fELF" || b[4] != 2 || b[18] != 183 || b[19] != 0 {
			t.Fatalf("%s is not a 64-bit arm ELF: % x", p, b)
		}
	}
}

// TestLockCheck: lock and check against the arm64 scenario server, a
// record per check in one log; a changed description is drift (exit 1).
func TestLockCheck(t *testing.T) {
	need(t)
	sc, marker := cc.Scenario(t, "Echoes its input.")
	lockfile, argv := lock(t, sc)
	cc.CheckDrift(t, sc, marker, lockfile, strings.Join(argv, " "))
}

// TestRun: run between a client and the server; the client closes its
// stdin and nothing is left: not the gateway, not the server.
func TestRun(t *testing.T) {
	need(t)
	sc, marker := cc.Scenario(t, "Echoes its input.")
	lockfile, argv := lock(t, sc)
	cc.RunLeavesNothing(t, marker, lockfile, argv)
}

// TestRunKilled: the gateway killed outright (SIGKILL, as a client that
// crashes): the server ends with it (its stdin's EOF, and the Pdeathsig
// the CLI sets, which qemu-user passes to this machine's kernel).
func TestRunKilled(t *testing.T) {
	need(t)
	sc, marker := cc.Scenario(t, "Echoes its input.")
	lockfile, argv := lock(t, sc)
	cc.KilledLeavesNothing(t, marker, lockfile, argv, 1)
}

// TestTwoRunsOneLog: two gateways on one server at once (Claude Desktop
// starts two), three times, all appending to one --log: the chain
// verifies and holds every record.
func TestTwoRunsOneLog(t *testing.T) {
	need(t)
	sc, marker := cc.Scenario(t, "Echoes its input.")
	lockfile, argv := lock(t, sc)
	cc.TwoRunsOneLog(t, sc, marker, lockfile, argv)
}
