package gateway

import (
	"errors"
	"os/exec"
	"sync"
	"syscall"

	"github.com/crawlcheck/verifier/internal/winproc"
)

// sysProcAttr starts the server in a process group of its own, so that a
// Ctrl+C meant for the client's console is not also the server's, and
// suspended, so that afterStart can put it in its job before it runs a
// single instruction (and so before it starts anything: a `.cmd` shim's
// cmd.exe starts the real server at once).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | 0x4 /* CREATE_SUSPENDED */}
}

// jobs are the running servers' job objects, by process id.
var jobs sync.Map

// afterStart puts the suspended server in a kill-on-close job object and
// resumes it. Windows has no process-group signal and no Pdeathsig: the
// job is both. Terminating it ends the server and everything it started
// (cmd.exe and the node or python under it), and Windows terminates it
// should the gateway die without doing so, since the gateway holds the
// job's only handle. A Windows that refuses the job (before Windows 8, a
// gateway itself in a job that forbids nesting) runs the server without
// one: it is ended by TerminateProcess alone, as before.
func afterStart(cmd *exec.Cmd) error {
	pid := cmd.Process.Pid
	if job, err := winproc.NewJob(); err == nil {
		if job.Assign(pid) == nil {
			jobs.Store(pid, job)
		} else {
			job.Close()
		}
	}
	if err := winproc.Resume(pid); err != nil {
		cmd.Process.Kill()
		return err
	}
	return nil
}

// afterExit closes the exited server's job, which ends what the server
// left running (a grandchild is no one's once its parent is gone).
func afterExit(pid int) {
	if job, ok := jobs.LoadAndDelete(pid); ok {
		job.(*winproc.Job).Close()
	}
}

// signalGroup: Windows has no signals to send; SIGKILL terminates the
// server's job (the server and all it started), anything else is refused
// and the caller falls back to the process itself (os.Process.Signal,
// which refuses all but SIGKILL).
func signalGroup(pid int, sig syscall.Signal) error {
	job, ok := jobs.Load(pid)
	if !ok || sig != syscall.SIGKILL {
		return errors.New("no process-group signals on Windows")
	}
	return job.(*winproc.Job).Terminate()
}

// termSignal: a Windows console program has no SIGTERM to be sent, so the
// stdio shutdown goes from the closed stdin straight to the kill.
const termSignal = false
