package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/internal/boundedread"
	"github.com/crawlcheck/verifier/internal/preflight"
)

// Limits on what is read (docs/cli.md, Limits). Every file a flag names,
// stdin, and every answer of a live server is bounded before it is parsed:
// --max-input, 16 MiB unless raised, never above the core's own cap on a
// request (nothing larger could be checked).
const (
	defaultMaxInput = preflight.DefaultMaxAnswerBytes
	maxMaxInput     = core.MaxRequestBytes
	maxPageCap      = preflight.MaxPages
)

// readLimits are the bounds of this invocation's reads, set from the flags
// when they are parsed.
type readLimits struct {
	max     int64
	timeout time.Duration
}

var inputs = readLimits{max: defaultMaxInput}

// readInput reads a file named by a flag, saying which one failed: at most
// --max-input bytes, and a pipe, FIFO or device within --timeout.
func readInput(what, path string) ([]byte, error) {
	data, err := boundedread.ReadFile(path, inputs.max, inputs.timeout)
	var tl *boundedread.TooLargeError
	if errors.As(err, &tl) {
		return nil, fmt.Errorf("reading %s: %s is larger than %d bytes (--max-input raises the limit, up to %d)", what, path, tl.Limit, maxMaxInput)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	inputRead(len(data))
	return data, nil
}

// readStdin reads stdin to its end, at most --max-input bytes.
func readStdin(r io.Reader) ([]byte, error) {
	data, err := boundedread.Read(r, inputs.max)
	var tl *boundedread.TooLargeError
	if errors.As(err, &tl) {
		return nil, fmt.Errorf("reading stdin: larger than %d bytes (--max-input raises the limit, up to %d)", tl.Limit, maxMaxInput)
	}
	if err != nil {
		return nil, fmt.Errorf("reading stdin: %w", err)
	}
	inputRead(len(data))
	return data, nil
}

// byteSize is a size flag: bytes, or a number with KiB or MiB.
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

func (b *byteSize) Set(s string) error {
	n, unit := s, int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}} {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			n, unit = rest, u.mult
		}
	}
	v, err := strconv.ParseInt(n, 10, 64)
	if err != nil || v <= 0 || v > maxMaxInput/unit {
		return fmt.Errorf("want a size from 1 to %d bytes (64MiB), as bytes or with KiB or MiB", maxMaxInput)
	}
	*b = byteSize(v * unit)
	return nil
}
