// Package atomicfile writes a file so that a reader sees either the old
// content or the new, never a half-written file: a lockfile cut off by a
// crash or a full disk would otherwise be a baseline that refuses to parse,
// or worse, one that parses.
package atomicfile

import (
	"errors"
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
//
// Only a regular file is ever replaced. A rename puts a regular file in
// place of whatever the name held, so "-o /dev/null" as root would turn
// the device into a file, and a FIFO or a socket would be replaced the
// same way: a target that exists and is not a regular file is refused. A
// symbolic link is followed: the file it finally names is replaced (in its
// own directory) and the link stays; a link that names nothing, or names
// something other than a regular file, is refused.
func Write(path string, data []byte, perm fs.FileMode) error {
	path, fi, err := target(path)
	if err != nil {
		return err
	}
	if fi != nil {
		perm = fi.Mode().Perm()
	}
	tmp, err := writeTemp(path, data, perm)
	if err != nil {
		return err
	}
	if err := replace(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

// Check reports, before any work is done, whether Write (or WriteNew, with
// mustBeNew) could write path: what the name holds (a regular file, or
// nothing yet; for WriteNew nothing at all), and whether its directory
// exists and takes a new file, probed by creating and removing one. The
// error names path as the caller gave it, never a temporary file: a
// command checks its output first, so that a typo in -o costs no server
// run and no scan.
func Check(path string, mustBeNew bool) error {
	dir := filepath.Dir(path)
	d, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("writing %s: the directory %s does not exist", path, dir)
	case err != nil:
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	case !d.IsDir():
		return fmt.Errorf("writing %s: %s is not a directory", path, dir)
	}
	if mustBeNew {
		if _, err := os.Lstat(path); err == nil {
			return fmt.Errorf("writing %s: file exists: refusing to replace it", path)
		}
	}
	resolved, _, err := target(path)
	if err != nil {
		return err
	}
	probe, err := os.CreateTemp(filepath.Dir(resolved), "."+filepath.Base(resolved)+".probe-*")
	if err != nil {
		return fmt.Errorf("writing %s: cannot create a file in %s: %w", path, filepath.Dir(resolved), unwrapPath(err))
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// unwrapPath is the error of a failed file operation without the path it
// was made on (a temporary name the caller never gave).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// target resolves the name Write replaces: path itself, or the file its
// symbolic links lead to. fi is nil when nothing exists there yet.
func target(path string) (string, fs.FileInfo, error) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, nil, nil
	case err != nil:
		return "", nil, fmt.Errorf("writing %s: %w", path, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		resolved, err := filepath.EvalSymlinks(path)
		if err != nil {
			return "", nil, fmt.Errorf("writing %s: a symbolic link that names no file: %w", path, err)
		}
		if fi, err = os.Lstat(resolved); err != nil {
			return "", nil, fmt.Errorf("writing %s: %w", path, err)
		}
		if !fi.Mode().IsRegular() {
			return "", nil, fmt.Errorf("writing %s: it links to %s, %s, not a regular file: refusing to replace it", path, resolved, kind(fi.Mode()))
		}
		return resolved, fi, nil
	case !fi.Mode().IsRegular():
		return "", nil, fmt.Errorf("writing %s: it is %s, not a regular file: refusing to replace it", path, kind(fi.Mode()))
	}
	return path, fi, nil
}

// kind names a file type for a message.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
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
		return "", fmt.Errorf("writing %s: %w", path, unwrapPath(err))
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
