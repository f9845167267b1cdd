package gateway

import (
	"errors"
	"syscall"
)

// sysProcAttr starts the server in a process group of its own, so that a
// Ctrl+C meant for the client's console is not also the server's. Windows
// has no Pdeathsig and no SIGTERM for a console program: the gateway ends
// the server by closing its stdin, as the stdio transport says, and then
// with TerminateProcess (docs/gateway.md, Windows).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// signalGroup: Windows has no process-group signals; the caller falls back
// to the process itself (os.Process.Signal, which kills on SIGKILL).
func signalGroup(int, syscall.Signal) error {
	return errors.New("no process-group signals on Windows")
}
