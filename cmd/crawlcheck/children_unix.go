//go:build !windows

package main

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// groupAttr starts a stdio server in a process group of its own, so that
// what it starts (npx's node, a wrapper script's server) ends with it.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// endGroup ends a child's process group: SIGTERM, then SIGKILL to whatever
// of it is left after childEndWait.
func endGroup(p *os.Process) error {
	pgid := p.Pid
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return nil
		}
		return err
	}
	for end := time.Now().Add(childEndWait); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(-pgid, 0) != nil {
			return nil
		}
	}
	return syscall.Kill(-pgid, syscall.SIGKILL)
}

// groupAlive says whether anything of the child's process group is left.
func groupAlive(p *os.Process) bool {
	return syscall.Kill(-p.Pid, 0) == nil
}
