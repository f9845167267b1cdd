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

// processTree is the server's process group, which its pid names.
type processTree struct{}

// contain: the process group was made at the start (Setpgid).
func contain(*exec.Cmd) (processTree, string, error) { return processTree{}, "", nil }

// signal sends sig to the process group pid leads.
func (processTree) signal(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }
