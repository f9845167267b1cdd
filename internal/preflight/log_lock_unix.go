//go:build unix

package preflight

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock (flock) on a record log for one
// append, waiting for another process's to end; the function returned
// releases it. flock locks the open file, so it holds across every process
// that opened the log, and the kernel drops it when a holder dies.
func lockFile(f *os.File) (func(), error) {
	fd := int(f.Fd())
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		return func() { syscall.Flock(fd, syscall.LOCK_UN) }, nil
	}
}
