//go:build windows

package winproc

import (
	"errors"
	"fmt"

	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Job is a job object with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: every
// process in it (the server, and whatever it starts, which inherits the
// job) is ended by Terminate, and by Windows when the job's last handle
// closes, which is also when its owner dies however it dies.
type Job struct{ h windows.Handle }

// NewJob makes an empty kill-on-close job.
func NewJob() (*Job, error) {
	h, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("CreateJobObject: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(h, windows.JobObjectExtendedLimitInformation, uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("SetInformationJobObject: %w", err)
	}
	return &Job{h: h}, nil
}

// Assign puts the process pid into the job. A process started with
// CREATE_SUSPENDED has run nothing yet, so all it will start is in the job
// too (StartSuspended's caller resumes it after Assign).
func (j *Job) Assign(pid int) error {
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return fmt.Errorf("OpenProcess: %w", err)
	}
	defer windows.CloseHandle(p)
	if err := windows.AssignProcessToJobObject(j.h, p); err != nil {
		return fmt.Errorf("AssignProcessToJobObject: %w", err)
	}
	return nil
}

// Terminate ends every process in the job.
func (j *Job) Terminate() error {
	return windows.TerminateJobObject(j.h, 1)
}

// Close closes the job's handle, which ends whatever is still in it.
func (j *Job) Close() error {
	return windows.CloseHandle(j.h)
}

// Resume resumes every thread of the process pid: a process started with
// CREATE_SUSPENDED has one, its main thread, whose handle os/exec does not
// keep, so it is found in a snapshot of the system's threads.
func Resume(pid int) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("CreateToolhelp32Snapshot: %w", err)
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != uint32(pid) {
			continue
		}
		t, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return fmt.Errorf("OpenThread: %w", err)
		}
		_, err = windows.ResumeThread(t)
		windows.CloseHandle(t)
		if err != nil {
			return fmt.Errorf("ResumeThread: %w", err)
		}
		resumed++
	}
	if resumed == 0 {
		return fmt.Errorf("no thread of process %d to resume", pid)
	}
	return nil
}

// Descendants returns the processes below pid in the process tree (its
// children, theirs, ...) created at or after since. Windows reuses the
// id of a process that has exited, so a process whose parent id names one
// of ours but that is older than since was never ours.
func Descendants(pid int, since time.Time) ([]int, error) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil, fmt.Errorf("CreateToolhelp32Snapshot: %w", err)
	}
	defer windows.CloseHandle(snap)
	children := map[uint32][]uint32{}
	pe := windows.ProcessEntry32{Size: uint32(unsafe.Sizeof(windows.ProcessEntry32{}))}
	for err = windows.Process32First(snap, &pe); err == nil; err = windows.Process32Next(snap, &pe) {
		if pe.ProcessID != pe.ParentProcessID {
			children[pe.ParentProcessID] = append(children[pe.ParentProcessID], pe.ProcessID)
		}
	}
	var out []int
	queue := []uint32{uint32(pid)}
	seen := map[uint32]bool{uint32(pid): true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if seen[c] || !createdSince(c, since) {
				continue
			}
			seen[c] = true
			out = append(out, int(c))
			queue = append(queue, c)
		}
	}
	return out, nil
}

// createdSince reports whether the live process pid was created at or
// after since (false when it cannot be asked: it has exited).
func createdSince(pid uint32, since time.Time) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var created, exited, kernel, user windows.Filetime
	if windows.GetProcessTimes(h, &created, &exited, &kernel, &user) != nil {
		return false
	}
	// The clocks differ in resolution: a second's slack, as a process
	// started within it of ours is one the server started.
	return time.Unix(0, created.Nanoseconds()).After(since.Add(-time.Second))
}

// KillTree ends the process pid and every descendant Descendants finds.
func KillTree(pid int, since time.Time) error {
	below, err := Descendants(pid, since)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range append([]int{pid}, below...) {
		h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(p))
		if err != nil {
			continue // exited meanwhile
		}
		if err := windows.TerminateProcess(h, 1); err != nil && !errors.Is(err, windows.ERROR_ACCESS_DENIED) {
			errs = append(errs, err)
		}
		windows.CloseHandle(h)
	}
	return errors.Join(errs...)
}

// Alive reports whether any process below pid (created since) is running.
func Alive(pid int, since time.Time) bool {
	below, err := Descendants(pid, since)
	return err == nil && len(below) > 0
}
