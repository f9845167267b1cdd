//go:build windows

package preflight

import (
	"os"

	"golang.org/x/sys/windows"
)

// logLockOffset is where the record log's lock byte sits: far past any
// byte a log may hold (maxLogBytes). A Windows byte-range lock is
// mandatory, so a lock on the log's own bytes would make another process's
// plain read of them (`crawlcheck record verify`, a report) fail while an
// append is under way; a lock past the end of the file keeps appenders in
// turn and readers unaffected, as flock does on Unix.
const logLockOffset = 1<<62 - 1

// lockFile takes an exclusive lock (LockFileEx) on the log's lock byte for
// one append, waiting for another process's to end; the function returned
// releases it. The lock belongs to the open handle, so it holds across
// every process that opened the log, and Windows drops it when a holder
// dies (its handles close).
func lockFile(f *os.File) (func(), error) {
	h := windows.Handle(f.Fd())
	ol := lockOverlapped()
	if err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, ol); err != nil {
		return nil, err
	}
	return func() { windows.UnlockFileEx(h, 0, 1, 0, lockOverlapped()) }, nil
}

// lockOverlapped names the lock byte's offset, which LockFileEx and
// UnlockFileEx take in an OVERLAPPED.
func lockOverlapped() *windows.Overlapped {
	return &windows.Overlapped{Offset: uint32(logLockOffset & 0xffffffff), OffsetHigh: uint32(logLockOffset >> 32)}
}
