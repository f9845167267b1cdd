package gateway

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// sysProcAttr starts the server in a process group of its own, so that a
// Ctrl+C meant for the client's console is not also the server's, and
// suspended, so that it is in its Job object (contain) before it runs a
// single instruction: nothing it starts (a .cmd shim's node) can escape the
// job by being started first.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | windows.CREATE_SUSPENDED}
}

// processTree is the server's Job object: every process it starts is in it
// too. It is made kill-on-close and its handle is never closed by the
// gateway: when the gateway exits, or is killed, the system closes the
// handle and ends whatever of the tree is left (Windows' Pdeathsig, for
// the whole tree). Windows has no SIGTERM for a console program: the
// gateway ends the server by closing its stdin, as the stdio transport
// says, and then the job with TerminateJobObject (docs/gateway.md,
// Windows).
type processTree struct{ job windows.Handle }

// contain puts the suspended child cmd started into a new kill-on-close Job
// object and lets it run. A child that cannot be put in one (a system that
// refuses nested jobs) still runs, ended by TerminateProcess alone, and
// note says so; a child that cannot be resumed is killed (err).
func contain(cmd *exec.Cmd) (tree processTree, note string, err error) {
	pid := uint32(cmd.Process.Pid)
	tree, jobErr := newJob(pid)
	if err := resume(pid); err != nil {
		cmd.Process.Kill()
		return processTree{}, "", fmt.Errorf("resuming the server: %w", err)
	}
	if jobErr != nil {
		return processTree{}, "the server is not in a Job object, so what it starts is not ended with it: " + jobErr.Error(), nil
	}
	return tree, "", nil
}

func newJob(pid uint32) (processTree, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return processTree{}, err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation, uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return processTree{}, err
	}
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, pid)
	if err != nil {
		windows.CloseHandle(job)
		return processTree{}, err
	}
	defer windows.CloseHandle(p)
	if err := windows.AssignProcessToJobObject(job, p); err != nil {
		windows.CloseHandle(job)
		return processTree{}, err
	}
	return processTree{job: job}, nil
}

// resume resumes the threads of the suspended process pid (its one main
// thread: os/exec does not hand out the thread handle CreateProcess gave).
func resume(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		t, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return err
		}
		_, err = windows.ResumeThread(t)
		windows.CloseHandle(t)
		if err != nil {
			return err
		}
		resumed++
	}
	if resumed == 0 {
		return errors.New("no thread of the server found")
	}
	return nil
}

// signal ends the whole tree on SIGKILL (TerminateJobObject); Windows has
// no other signal for it, and the caller falls back to the process itself
// (os.Process.Signal, which kills on SIGKILL and refuses the rest).
func (t processTree) signal(_ int, sig syscall.Signal) error {
	if sig != syscall.SIGKILL || t.job == 0 {
		return errors.New("no process-group signals on Windows")
	}
	return windows.TerminateJobObject(t.job, 1)
}
