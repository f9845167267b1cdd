package gateway

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts the server in a process group of its own (the gateway
// signals the group) and has the kernel SIGKILL it should the gateway die
// without ending it (Pdeathsig): a gateway killed with SIGKILL, or one that
// crashed, leaves no server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
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
