//go:build linux

package wine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/hosttest/crossrun"
)

// w is the wine environment every test runs in, made once by TestMain.
var w struct {
	dir string   // the harness's files: the prefix, the .exe files, bin/
	exe string   // crawlcheck.exe
	srv string   // mcpserver.exe
	bin string   // a folder on the Windows PATH holding srv.cmd
	env []string // the environment every wine process gets
}

// cc runs the cross-built crawlcheck under the emulator (hosttest/crossrun).
var cc crossrun.CLI

func TestMain(m *testing.M) {
	if os.Getenv("CRAWLCHECK_WINE") != "1" {
		os.Exit(m.Run()) // every test skips
	}
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "crawlcheck-wine-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "wine:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		w.dir = dir
		w.env = append(os.Environ(),
			"WINEPREFIX="+filepath.Join(dir, "prefix"), "WINEDEBUG=-all",
			// The prefix's bcryptprimitives.dll is the shim (scripts/wine).
			"WINEDLLOVERRIDES=bcryptprimitives=n",
			// What a client's "command": "srv" finds, as "npx" is found.
			"WINEPATH="+winPath(filepath.Join(dir, "bin")))
		// The prefix's wineserver lingers a few seconds after its last
		// process; it is stopped before the prefix is removed.
		defer func() {
			k := exec.Command("wineserver", "-k")
			k.Env = w.env
			k.Run()
		}()
		if err := setup(); err != nil {
			fmt.Fprintln(os.Stderr, "wine: setup:", err)
			return 1
		}
		cc = crossrun.CLI{Dir: w.dir, Command: wineCmd, Client: "wine-test"}
		return m.Run()
	}())
}

// setup makes the prefix and cross-builds the two programs, side by side.
func setup() error {
	root, err := filepath.Abs("../..")
	if err != nil {
		return err
	}
	zigpy := os.Getenv("ZIGPY")
	if zigpy == "" {
		return fmt.Errorf("ZIGPY is not set: a python with PyPI's ziglang builds the prefix's bcryptprimitives.dll (make test-wine sets it)")
	}
	w.exe = filepath.Join(w.dir, "crawlcheck.exe")
	w.srv = filepath.Join(w.dir, "mcpserver.exe")
	w.bin = filepath.Join(w.dir, "bin")
	if err := os.Mkdir(w.bin, 0o755); err != nil {
		return err
	}
	// A shim as npm writes them (npx.cmd): cmd.exe runs the real program,
	// which is then a grandchild of whoever started the shim.
	shim := "@ECHO off\r\n\"" + winPath(w.srv) + "\" %*\r\n"
	if err := os.WriteFile(filepath.Join(w.bin, "srv.cmd"), []byte(shim), 0o644); err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	run := func(i int, cmd *exec.Cmd) {
		defer wg.Done()
		if out, err := cmd.CombinedOutput(); err != nil {
			errs[i] = fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
		}
	}
	prefix := exec.Command(filepath.Join(root, "scripts/wine/prefix.sh"), filepath.Join(w.dir, "prefix"))
	prefix.Env = append(os.Environ(), "ZIGPY="+zigpy)
	wg.Add(3)
	go run(0, prefix)
	for i, b := range [][2]string{{w.exe, "./cmd/crawlcheck"}, {w.srv, "./hosttest/mcpserver"}} {
		cmd := exec.Command("go", "build", "-trimpath", "-o", b[0], b[1])
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
		go run(i+1, cmd)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// winPath is a path of this machine as a Windows program names it (wine
// maps / to Z:).
func winPath(p string) string { return "Z:" + strings.ReplaceAll(p, "/", `\`) }

// slashPath is the same path with forward slashes, which Windows takes too:
// what goes in --server, whose words are split as a POSIX shell splits them
// (a backslash escapes).
func slashPath(p string) string { return "Z:" + p }

func need(t *testing.T) {
	t.Helper()
	if os.Getenv("CRAWLCHECK_WINE") != "1" {
		t.Skip("CRAWLCHECK_WINE=1 runs the Windows builds under wine (make test-wine)")
	}
}

// wineCmd is crawlcheck.exe with args, under wine.
func wineCmd(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "wine", append([]string{w.exe}, args...)...)
	cmd.Env = w.env
	cmd.Dir = w.dir
	// A process crawlcheck.exe left behind may hold its stdout: the test
	// then fails on what was left, rather than wait for it.
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// TestLockCheck: lock and check against the scenario server's .exe, a
// record per check in one log; a changed description is drift (exit 1).
func TestLockCheck(t *testing.T) {
	need(t)
	sc, marker := cc.Scenario(t, "Echoes its input.")
	lock := filepath.Join(filepath.Dir(sc), "server.lock.json")
	server := slashPath(w.srv) + " --scenario " + slashPath(sc)
	if out, errOut, code := cc.Run(t, "lock", "--server", server, "-o", lock); code != 0 {
		t.Fatalf("lock: exit %d\n%s%s", code, out, errOut)
	}
	cc.CheckDrift(t, sc, marker, lock, server)
}

// TestCmdShim: lock and check through a .cmd shim found on PATH by its
// bare name, as a client config's "command": "npx" is; the server under the
// shim's cmd.exe ends with the check.
func TestCmdShim(t *testing.T) {
	need(t)
	sc, marker := cc.Scenario(t, "Echoes its input.")
	lock := filepath.Join(filepath.Dir(sc), "server.lock.json")
	server := "srv --scenario " + slashPath(sc)
	if out, errOut, code := cc.Run(t, "lock", "--server", server, "-o", lock); code != 0 {
		t.Fatalf("lock through srv.cmd: exit %d\n%s%s", code, out, errOut)
	}
	crossrun.NoneLeft(t, marker, 5*time.Second)
	if out, errOut, code := cc.Run(t, "check", "--lock", lock, "--server", server); code != 0 {
		t.Fatalf("check through srv.cmd: exit %d\n%s%s", code, out, errOut)
	}
	crossrun.NoneLeft(t, marker, 5*time.Second)
}

// lockShim locks the scenario server behind srv.cmd and returns the
// lockfile and the argv a client config gives run.
func lockShim(t *testing.T, sc string) (lock string, argv []string) {
	t.Helper()
	lock = filepath.Join(filepath.Dir(sc), "server.lock.json")
	argv = []string{"srv", "--scenario", slashPath(sc)}
	if out, errOut, code := cc.Run(t, "lock", "--server", strings.Join(argv, " "), "-o", lock); code != 0 {
		t.Fatalf("lock: exit %d\n%s%s", code, out, errOut)
	}
	return lock, argv
}

// TestRunCmdShim: run between a client and srv.cmd; the client closes its
// stdin and nothing is left: not the gateway, not cmd.exe, not the server.
func TestRunCmdShim(t *testing.T) {
	need(t)
	sc, marker := cc.Scenario(t, "Echoes its input.")
	lock, argv := lockShim(t, sc)
	cc.RunLeavesNothing(t, marker, lock, argv)
}

// TestRunKilled: the gateway killed outright (as a client that crashes, or
// Task Manager's End task): the server's job is closed with it, so the
// server and the shim's cmd.exe end too.
func TestRunKilled(t *testing.T) {
	need(t)
	sc, marker := cc.Scenario(t, "Echoes its input.")
	lock, argv := lockShim(t, sc)
	// The shim's cmd.exe and the server; the kill is of wine's process for
	// crawlcheck.exe.
	cc.KilledLeavesNothing(t, marker, lock, argv, 2)
}

// TestTwoRunsOneLog: two gateways on one wrapper at once (Claude Desktop
// starts two), three times, all appending to one --log: the chain
// verifies and holds every record.
func TestTwoRunsOneLog(t *testing.T) {
	need(t)
	sc, marker := cc.Scenario(t, "Echoes its input.")
	lock := filepath.Join(filepath.Dir(sc), "server.lock.json")
	// The lockfile names the server by the words --server gave; run is
	// given the same argv, as a config that was locked is.
	server := []string{slashPath(w.srv), "--scenario", slashPath(sc)}
	if out, errOut, code := cc.Run(t, "lock", "--server", strings.Join(server, " "), "-o", lock); code != 0 {
		t.Fatalf("lock: exit %d\n%s%s", code, out, errOut)
	}
	cc.TwoRunsOneLog(t, sc, marker, lock, server)
}
