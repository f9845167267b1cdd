package preflight

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/crawlcheck/verifier/core"
)

// maxLogBytes bounds a record log OpenLog reads (the core's
// limits.record_log_bytes): its chain is verified in one request to the
// core, and a JSON string of records takes more bytes than the records
// (every quote is escaped).
const maxLogBytes = core.MaxRecordLogBytes

// readFile reads a file this package is given a path to (the lockfile, the
// issuer replay state): a regular file of at most limit bytes, refused by
// its size before a byte is read. A device or a FIFO (/dev/zero, a pipe)
// would otherwise be read without bound, or block.
func readFile(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readRegular(f, limit)
}

// readRegular reads an open regular file of at most limit bytes.
func readRegular(f *os.File, limit int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%v)", f.Name(), fi.Mode().Type())
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s holds %d bytes, more than the %d this reads", f.Name(), fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		err = fmt.Errorf("%s grew past %d bytes while it was read", f.Name(), limit)
	}
	return data, err
}
