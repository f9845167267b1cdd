// Package readme runs the README's "Run your own issuer" steps as a person
// pastes them into a shell (issue 34, item 7): they must end with the check
// passing, leave no file in the working copy (the issuer's private key
// least of all), fail rather than save an error body as the lockfile, and
// stop the two servers they start.
package readme

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// issuerSteps is the indented block under "## Run your own issuer".
func issuerSteps(t *testing.T, readme []byte) string {
	var b strings.Builder
	in, started := false, false
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Run your own issuer"
		case in && strings.HasPrefix(line, "    "):
			started = true
			b.WriteString(strings.TrimPrefix(line, "    ") + "\n")
		case in && started:
			return b.String()
		}
	}
	t.Fatal("README.md has no indented block under ## Run your own issuer")
	return ""
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func gitStatus(t *testing.T, root string) string {
	out, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=all").Output()
	if err != nil {
		t.Skipf("git status: %v", err)
	}
	return string(out)
}

func TestREADMEIssuerSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three programs and runs two servers")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps := issuerSteps(t, readme)
	for _, want := range []string{"curl -fsS", "kill $mcp_pid $issuer_pid"} {
		if !strings.Contains(steps, want) {
			t.Errorf("the steps lack %q", want)
		}
	}
	// The README's ports, moved to free ones: other tests share the machine.
	steps = strings.NewReplacer("8931", freePort(t), "8443", freePort(t)).Replace(steps)
	before := gitStatus(t, root)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The shell leads a process group of its own: whatever the steps start
	// and leave running is found in it afterwards, and ended.
	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", steps)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// A server the steps leave running holds the output open: stop
	// waiting for it shortly after the shell exits.
	cmd.WaitDelay = 3 * time.Second
	err = cmd.Run()
	left := group(cmd.Process.Pid)
	if len(left) > 0 {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Errorf("the steps leave %d processes running: %v", len(left), left)
	}
	if after := gitStatus(t, root); after != before {
		t.Errorf("the steps left files in the working copy:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if err != nil {
		t.Fatalf("the steps failed: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "verified") {
		t.Errorf("the check's baseline is not verified:\n%s", out.String())
	}
}

// group lists the command lines of the live processes of process group
// pgid, after a moment for killed ones to exit.
func group(pgid int) []string {
	var left []string
	for range 50 {
		left = left[:0]
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
			if err != nil {
				continue
			}
			// pid (comm) state ppid pgrp ...: comm may hold spaces.
			f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
			if len(f) < 3 || f[0] == "Z" || f[2] != strconv.Itoa(pgid) {
				continue
			}
			cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			left = append(left, strconv.Itoa(pid)+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
		if len(left) == 0 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return left
}
