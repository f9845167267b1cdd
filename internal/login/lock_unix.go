//go:build unix

package login

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f, waiting for it (flock: released
// when the process ends, whatever its end).
func lockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
