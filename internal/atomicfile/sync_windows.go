//go:build windows

package atomicfile

import "golang.org/x/sys/windows"

// replace moves the finished temporary file over path with MoveFileEx and
// MOVEFILE_WRITE_THROUGH, which returns only once the move is on disk: on
// Windows that is how a rename is made durable, since a directory cannot
// be opened for writing and flushed (FlushFileBuffers on one is refused
// with "Access denied", which made every `lock -o` fail there).
func replace(tmp, path string) error {
	from, err := windows.UTF16PtrFromString(tmp)
	if err != nil {
		return err
	}
	to, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return err
	}
	return windows.MoveFileEx(from, to, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH)
}

// syncDir has nothing to do on Windows: replace's move is written through,
// and a hard link (WriteNew) is metadata the file system journals; no
// directory handle can be flushed there.
func syncDir(string) error { return nil }
