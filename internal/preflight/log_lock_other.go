//go:build !unix && !windows

package preflight

import (
	"errors"
	"os"
)

// lockFile: the record log's cross-process lock is flock, which this
// platform does not have. A log is refused rather than appended to without
// it (two writers would fork the chain).
func lockFile(*os.File) (func(), error) {
	return nil, errors.New("the record log's file lock (flock) is not available on this platform")
}
