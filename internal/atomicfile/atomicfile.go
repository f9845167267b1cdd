// Package atomicfile writes a file so that a reader sees either the old
// content or the new, never a half-written file: a lockfile cut off by a
// crash or a full disk would otherwise be a baseline that refuses to parse,
// or worse, one that parses.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with data: a temporary file in the same directory
// (so the rename cannot cross file systems) is written, synced and renamed
// over path, then the directory is synced so the rename itself survives a
// crash. A file that already exists keeps its permission bits; a new one
// gets perm.
func Write(path string, data []byte, perm fs.FileMode) error {
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	tmp, err := writeTemp(path, data, perm)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

// WriteNew is Write for a file that must not exist yet, such as a private
// key. The finished temporary file is hard-linked into place, which fails
// if path exists, so an existing file is never replaced, even by a race.
func WriteNew(path string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTemp(path, data, perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

// writeTemp writes data to a new synced file beside path and returns its name.
func writeTemp(path string, data []byte, perm fs.FileMode) (name string, err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("writing %s: %w", path, cerr)
		}
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(data); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Name(), nil
}

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
