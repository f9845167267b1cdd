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

// processTree is the server's process group, which its pid names.
type processTree struct{}

// contain: the process group was made at the start (Setpgid).
func contain(*exec.Cmd) (processTree, string, error) { return processTree{}, "", nil }

// signal sends sig to the process group pid leads.
func (processTree) signal(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }
