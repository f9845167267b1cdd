package main

import (
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/crawlcheck/verifier/internal/winproc"
)

// groupAttr starts a stdio server in a process group of its own, so that a
// Ctrl+C meant for crawlcheck's console is not also the server's (as the
// gateway does, internal/gateway/sys_windows.go).
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// started is when this crawlcheck started: a process below a server in
// the process tree that is older than that is not the server's (Windows
// reuses the id of a process that has exited).
var started = time.Now()

// endGroup ends everything below the child in the process tree
// (winproc.KillBelow), then the child itself (TerminateProcess through the
// handle os/exec holds). Windows has no signal to a process group and no
// SIGTERM for a console program, and a client config's `.cmd` shim makes
// the server a grandchild under cmd.exe: ending cmd.exe alone left the
// server running (seen under wine). The MCP SDK's command transport starts
// the server, so it cannot be put in a job object before it runs, as the
// gateway's is; the tree is walked instead.
func endGroup(p *os.Process) error {
	err := winproc.KillBelow(p.Pid, started)
	if kerr := p.Kill(); kerr != nil && !errors.Is(kerr, os.ErrProcessDone) {
		err = errors.Join(err, kerr)
	}
	return err
}

// groupAlive says whether anything the child started is still running
// (the child itself is waited for by its session).
func groupAlive(p *os.Process) bool {
	return winproc.Alive(p.Pid, started)
}
