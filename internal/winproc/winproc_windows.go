//go:build windows

package winproc

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

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

// KillBelow ends every process Descendants finds below pid; pid itself is
// left to its caller, who holds its handle (os.Process), which names that
// process alone even after it has exited and its id is reused.
func KillBelow(pid int, since time.Time) error {
	below, err := Descendants(pid, since)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range below {
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
