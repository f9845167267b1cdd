package preflight

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/crawlcheck/verifier/internal/corecall"
)

// Log is an append-only JSON-lines file of continuity records, chained: each
// record's prev_record_sha256 is the record_sha256 of the line before it, so
// a record taken out or edited shows (verify_chain, `crawlcheck record
// verify`). One process writes a log at a time; two writers would fork the
// chain.
type Log struct {
	mu   sync.Mutex
	f    *os.File
	head string
}

// OpenLog opens or creates the log at path and finds its head: the
// record_sha256 of its last good record, which the next record must name.
//
// A last line cut off mid-write (no newline, not JSON: a crash during an
// append) is the one damage tolerated: the core reports it as torn_tail,
// and OpenLog truncates those bytes so that the next record starts on a
// line of its own — they never were a record. Any other damage (an edited
// record, a broken link) is an error: appending to a log that no longer
// verifies would hide where it was broken.
func OpenLog(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the record log: %w", err)
	}
	l, err := openLog(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("record log %s: %w", path, err)
	}
	return l, nil
}

func openLog(f *os.File) (*Log, error) {
	data, err := readRegular(f, maxLogBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: a record log is a regular file of at most %d bytes (move a longer one aside to start a new log)", err, maxLogBytes)
	}
	if len(data) == 0 {
		return &Log{f: f}, nil
	}
	chain, err := VerifyChain(data)
	if err != nil {
		return nil, err
	}
	if !chain.Valid {
		return nil, fmt.Errorf("broken at record %d: %s; move it aside to start a new log", chain.BrokenAt+1, chain.Reason)
	}
	switch {
	case chain.TornTail:
		keep := bytes.LastIndexByte(data, '\n') + 1
		if err := f.Truncate(int64(keep)); err != nil {
			return nil, fmt.Errorf("cutting off a torn last line: %w", err)
		}
	case data[len(data)-1] != '\n':
		// A whole last record whose newline was never written.
		if _, err := f.Write([]byte{'\n'}); err != nil {
			return nil, err
		}
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	return &Log{f: f, head: chain.Head}, nil
}

// Head returns the record_sha256 of the last record, "" for an empty log.
func (l *Log) Head() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.head
}

// Append writes the record and a newline in one write, and syncs the file
// before returning, so that a record the caller acted on is on disk. The
// record must name the log's head as its prev_record_sha256.
func (l *Log) Append(r Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("record log: closed")
	}
	if r.PrevRecordSHA256 != l.head {
		return fmt.Errorf("record log: record %s names %q as the record before it, but the log's last record is %q", r.RecordSHA256, r.PrevRecordSHA256, l.head)
	}
	line := make([]byte, 0, len(r.Raw)+1)
	line = append(append(line, r.Raw...), '\n')
	if _, err := l.f.Write(line); err != nil {
		return fmt.Errorf("record log: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("record log: %w", err)
	}
	l.head = r.RecordSHA256
	return nil
}

// Close closes the file.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fs.ErrClosed
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// Chain is the core's verify_chain answer for a JSON-lines log.
type Chain struct {
	Valid    bool   `json:"valid"`
	Count    int    `json:"count"`
	BrokenAt int    `json:"broken_at"`
	Reason   string `json:"reason"`
	Head     string `json:"head"`
	TornTail bool   `json:"torn_tail"`
}

// VerifyChain checks a JSON-lines log with the core: every line one record
// in its canonical form, every record's record_sha256, every link, and the
// start: the first record must start the chain. A log whose first lines
// were deleted is not valid (docs/continuity.md, What the chain proves).
func VerifyChain(lines []byte) (Chain, error) {
	return VerifyChainAnchored(lines, "", "")
}

// VerifyChainAnchored is VerifyChain with anchors kept elsewhere: after, when
// set, is the record_sha256 the first record must follow (a log continued
// from a rotated one); head, when set, is the record_sha256 the last record
// must have (which shows records cut from the end).
func VerifyChainAnchored(lines []byte, after, head string) (Chain, error) {
	req := map[string]any{"records": corecall.Text(lines)}
	if after != "" {
		req["after"] = after
	}
	if head != "" {
		req["head"] = head
	}
	var c Chain
	err := corecall.Into("verify_chain", req, &c)
	return c, err
}
