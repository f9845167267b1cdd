// Package boundedread reads what a command line names — a lockfile, a tool
// list, a policy, a key — within a size limit, and without hanging on
// something that is not a file.
//
// os.ReadFile reads until the end: "--tools /dev/zero" took 12 GB in a
// minute, and a FIFO nobody writes to blocked forever at open. Here a
// regular file larger than the limit is refused by its size before a byte
// is read; anything else (a pipe, a FIFO, a device, /dev/stdin) is opened
// without blocking and read up to the limit, within a deadline.
package boundedread

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// TooLargeError is a read that went past its limit.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %d bytes", e.Path, e.Limit)
}

// ReadFile reads the file at path, at most limit bytes; for anything but a
// regular file the read must end within timeout (0: no deadline). A FIFO
// with no writer reads as empty.
func ReadFile(path string, limit int64, timeout time.Duration) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory", path)
	}
	if fi.Mode().IsRegular() {
		if fi.Size() > limit {
			return nil, &TooLargeError{Path: path, Limit: limit}
		}
	} else if timeout > 0 {
		// Pipes and FIFOs opened non-blocking are pollable: the deadline
		// holds. A device that is not (a terminal may be) is still bounded
		// by the limit.
		_ = f.SetReadDeadline(time.Now().Add(timeout))
	}
	var size int64
	if fi.Mode().IsRegular() {
		size = fi.Size()
	}
	data, err := read(f, limit, size)
	var tl *TooLargeError
	switch {
	case errors.As(err, &tl):
		tl.Path = path
		return nil, tl
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, fmt.Errorf("%s: nothing more to read within %v (a pipe or device that does not end)", path, timeout)
	}
	return data, err
}

// Read reads r to its end, at most limit bytes.
func Read(r io.Reader, limit int64) ([]byte, error) { return read(r, limit, 0) }

// read is Read into a buffer of size bytes to start with (a regular file's
// size, so a 1 MB lockfile is read without growing and copying the buffer
// a dozen times); a file that grew meanwhile is still read to the limit.
func read(r io.Reader, limit, size int64) ([]byte, error) {
	if size <= 0 {
		data, err := io.ReadAll(io.LimitReader(&eagainRetry{r: r}, limit+1))
		return checked(data, err, limit)
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	_, err := buf.ReadFrom(io.LimitReader(&eagainRetry{r: r}, limit+1))
	return checked(buf.Bytes(), err, limit)
}

func checked(data []byte, err error, limit int64) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: "the input", Limit: limit}
	}
	return data, nil
}

// eagainRetry hides EAGAIN from a descriptor the runtime could not poll (a
// non-blocking character device): it waits a little and reads again. The
// limit and the caller's deadline bound the loop.
type eagainRetry struct{ r io.Reader }

func (e *eagainRetry) Read(p []byte) (int, error) {
	for {
		n, err := e.r.Read(p)
		if n == 0 && errors.Is(err, syscall.EAGAIN) {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		return n, err
	}
}
