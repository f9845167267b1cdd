package main

import (
	"errors"
	"os"
	"syscall"
)

// groupAttr starts a stdio server in a process group of its own, so that a
// Ctrl+C meant for crawlcheck's console is not also the server's (as the
// gateway does, internal/gateway/sys_windows.go).
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// endGroup ends the child itself (TerminateProcess). Windows has no signal
// to a process group and no SIGTERM for a console program, so what the
// child started (npx's node) is not ended with it here; a session's normal
// end closes the server's stdin first, as the stdio transport says, and a
// server that honours it takes its own children with it (docs/release.md).
func endGroup(p *os.Process) error {
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// groupAlive: with no process-group signals there is no group to ask
// about; the child itself is waited for by its session.
func groupAlive(*os.Process) bool {
	return false
}
