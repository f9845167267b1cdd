package main

import (
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

// endGroup ends the child and everything below it in the process tree
// (winproc.KillTree). Windows has no signal to a process group and no
// SIGTERM for a console program, and a client config's `.cmd` shim makes
// the server a grandchild under cmd.exe: ending cmd.exe alone left the
// server running (seen under wine). The MCP SDK's command transport starts
// the server, so it cannot be put in a job object before it runs, as the
// gateway's is; the tree is walked instead.
func endGroup(p *os.Process) error {
	return winproc.KillTree(p.Pid, started)
}

// groupAlive says whether anything the child started is still running
// (the child itself is waited for by its session).
func groupAlive(p *os.Process) bool {
	return winproc.Alive(p.Pid, started)
}
