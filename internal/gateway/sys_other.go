//go:build unix && !linux

package gateway

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts the server in a process group of its own (the gateway
// signals the group). These systems have no Pdeathsig: the gateway ends the
// server on every exit path it has, and a gateway killed with SIGKILL
// leaves it to see its stdin close.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the process group pid leads.
func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }

// afterStart has nothing to do here: the process group and (on Linux)
// Pdeathsig are set at the fork.
func afterStart(*exec.Cmd) error { return nil }

// afterExit has nothing to do here: the group is signalled by stop.
func afterExit(int) {}

// termSignal: SIGTERM is the stdio shutdown's second step here.
const termSignal = true
