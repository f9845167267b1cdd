//go:build !windows

package atomicfile

import (
	"fmt"
	"os"
)

// replace renames the finished temporary file over path (rename(2): atomic
// within a directory).
func replace(tmp, path string) error { return os.Rename(tmp, path) }

// syncDir syncs a directory, so that a rename or a link made in it
// survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}
