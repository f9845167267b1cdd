//go:build windows

package preflight

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockOffset is the byte the record log's lock takes, far past any log's
// end: a LockFileEx range is mandatory on Windows (a locked byte cannot be
// read or written through another handle), so a lock on the records
// themselves would make `crawlcheck log verify` and the other gateways'
// reads of the chain's head fail while one appends. A range past the end
// of the file may be locked; it holds no data to refuse.
const lockOffset = 1 << 62

// lockFile takes an exclusive lock (LockFileEx) on a record log for one
// append, waiting for another process's to end; the function returned
// releases it. The lock is the open file's, so it holds across every
// process that opened the log, and the system drops it when a holder's
// handle closes (a holder that dies), as flock's does on Unix.
func lockFile(f *os.File) (func(), error) {
	h := windows.Handle(f.Fd())
	ol := func() *windows.Overlapped {
		return &windows.Overlapped{Offset: uint32(lockOffset & 0xffffffff), OffsetHigh: uint32(lockOffset >> 32)}
	}
	if err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, ol()); err != nil {
		return nil, err
	}
	return func() { windows.UnlockFileEx(h, 0, 1, 0, ol()) }, nil
}
