package preflight

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/crawlcheck/verifier/core/textsafe"
	"github.com/crawlcheck/verifier/internal/corecall"
)

// Log is an append-only JSON-lines file of continuity records, chained: each
// record's prev_record_sha256 is the record_sha256 of the line before it, so
// a record taken out or edited shows (verify_chain, `crawlcheck record
// verify`). Several processes may append to one log (a client that starts
// two gateways on one wrapper): every append takes an exclusive lock on the
// file (lockFile), reads the records others appended since (syncHead) and
// chains to the newest, so the chain never forks.
type Log struct {
	mu   sync.Mutex
	f    *os.File
	head string
	// size is the file's length that head covers: bytes past it were
	// appended by another process and are read at the next append.
	size int64
}

// OpenLog opens or creates the log at path and finds its head: the
// record_sha256 of its last good record, which the next record must name.
//
// A last line cut off mid-write (no newline, not JSON: a crash during an
// append) is the one damage tolerated: the core reports it as torn_tail
// and says which bytes to keep (keep_bytes), and OpenLog truncates the
// rest so that the next record starts on a line of its own — they never
// were a record. Any other damage (an edited
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
	unlock, err := lockFile(f)
	if err != nil {
		return nil, fmt.Errorf("locking: %w", err)
	}
	defer unlock()
	data, err := readRegular(f, maxLogBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: a record log is a regular file of at most %d bytes (move a longer one aside to start a new log)", err, maxLogBytes)
	}
	if len(data) == 0 {
		return &Log{f: f}, nil
	}
	size := int64(len(data))
	chain, err := VerifyChain(data)
	if err != nil {
		return nil, err
	}
	if !chain.Valid {
		return nil, fmt.Errorf("broken at record %d: %s; move it aside to start a new log", chain.BrokenAt+1, textsafe.Escape(chain.Reason))
	}
	if size, err = keepHead(f, 0, size, chain); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	return &Log{f: f, head: chain.Head, size: size}, nil
}

// keepHead does to the file what the core's verify_chain says of the bytes
// read from offset at to size: keep its keep_bytes of them (a torn last
// line cut off), and write the newline a whole last record lacks. It
// answers the file's size after.
func keepHead(f *os.File, at, size int64, chain Chain) (int64, error) {
	if keep := at + chain.KeepBytes; keep != size {
		if err := f.Truncate(keep); err != nil {
			return 0, fmt.Errorf("cutting off a torn last line: %w", err)
		}
		size = keep
	}
	if chain.AddNewline {
		if _, err := f.Write([]byte{'\n'}); err != nil {
			return 0, err
		}
		size++
	}
	return size, nil
}

// syncHead, under the file lock, reads the records other processes
// appended since this Log last read or wrote the file, verifies them as the
// continuation of its head (verify_chain, anchored after it) and moves the
// head to the newest. A torn last line (a writer that died mid-append) is
// cut off, as OpenLog cuts it; anything else that does not continue the
// chain is an error, never written after.
func (l *Log) syncHead() error {
	fi, err := l.f.Stat()
	if err != nil {
		return err
	}
	switch {
	case fi.Size() == l.size:
		return nil
	case fi.Size() < l.size:
		return fmt.Errorf("the log is shorter (%d bytes) than when it was last read (%d): it was cut or replaced while open", fi.Size(), l.size)
	case fi.Size() > maxLogBytes:
		return fmt.Errorf("the log holds %d bytes, more than the %d a record log may (move it aside to start a new log)", fi.Size(), maxLogBytes)
	}
	data := make([]byte, fi.Size()-l.size)
	if _, err := l.f.ReadAt(data, l.size); err != nil {
		return fmt.Errorf("reading the records appended by another process: %w", err)
	}
	chain, err := VerifyChainAnchored(data, l.head, "")
	if err != nil {
		return err
	}
	if !chain.Valid {
		return fmt.Errorf("the records appended by another process do not continue the chain (record %d after this process's last: %s)", chain.BrokenAt+1, textsafe.Escape(chain.Reason))
	}
	size, err := keepHead(l.f, l.size, fi.Size(), chain)
	if err != nil {
		return err
	}
	if chain.Count > 0 {
		l.head = chain.Head
	}
	l.size = size
	return nil
}

// Head returns the record_sha256 of the last record this Log read or
// wrote, "" for an empty log. Another process may have appended since:
// AppendNext chains to the head as it is at the append.
func (l *Log) Head() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.head
}

// Append writes the record and a newline in one write, and syncs the file
// before returning, so that a record the caller acted on is on disk. The
// record must name the log's head as its prev_record_sha256: the head as it
// is under the file lock, so a record made before another process appended
// is refused rather than forking the chain (AppendNext makes the record
// under the lock instead).
func (l *Log) Append(r Record) error {
	_, err := l.AppendNext(func(prev string) (Record, error) {
		if r.PrevRecordSHA256 != prev {
			return Record{}, fmt.Errorf("record log: record %s names %q as the record before it, but the log's last record is %q", r.RecordSHA256, r.PrevRecordSHA256, prev)
		}
		return r, nil
	})
	return err
}

// AppendNext makes a record with next, given the record_sha256 of the
// log's last record (the prev_record_sha256 the new record must name), and
// appends it; both under the file lock, so that two processes appending to
// one log each chain to the other's records. next runs under the lock: it
// should only run the core's check.
func (l *Log) AppendNext(next func(prev string) (Record, error)) (Record, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return Record{}, errors.New("record log: closed")
	}
	unlock, err := lockFile(l.f)
	if err != nil {
		return Record{}, fmt.Errorf("record log: locking: %w", err)
	}
	defer unlock()
	if err := l.syncHead(); err != nil {
		return Record{}, fmt.Errorf("record log: %w", err)
	}
	r, err := next(l.head)
	if err != nil {
		return Record{}, err
	}
	if err := l.write(r); err != nil {
		return Record{}, err
	}
	return r, nil
}

// write appends r and syncs; the caller holds mu and the file lock.
func (l *Log) write(r Record) error {
	line := make([]byte, 0, len(r.Raw)+1)
	line = append(append(line, r.Raw...), '\n')
	if _, err := l.f.Write(line); err != nil {
		return fmt.Errorf("record log: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("record log: %w", err)
	}
	l.head = r.RecordSHA256
	l.size += int64(len(line))
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
	// KeepBytes and AddNewline are what a log appended to keeps of the
	// bytes verified, and whether it writes a newline before its next
	// record (a torn last line cut, a whole last record's missing newline
	// added): the core decides both.
	KeepBytes  int64 `json:"keep_bytes"`
	AddNewline bool  `json:"add_newline"`
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
