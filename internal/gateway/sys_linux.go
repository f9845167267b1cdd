package gateway

import "syscall"

// sysProcAttr puts the server in a process group of its own (the gateway
// signals the group) and has the kernel SIGKILL it should the gateway die
// without ending it (Pdeathsig): a gateway killed with SIGKILL, or one that
// crashed, leaves no server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup sends sig to the process group pid leads.
func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }
