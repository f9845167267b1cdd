package boundedread

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestLimits(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("12345"), 0o644)
	if b, err := ReadFile(small, 5, time.Second); err != nil || string(b) != "12345" {
		t.Fatalf("%q %v", b, err)
	}
	var tl *TooLargeError
	if _, err := ReadFile(small, 4, time.Second); !errors.As(err, &tl) || tl.Limit != 4 {
		t.Fatalf("a file over the limit: %v", err)
	}
	// /dev/zero never ends: bounded by the limit (issue 10: 12 GB in 60 s).
	if _, err := ReadFile("/dev/zero", 1<<20, time.Second); !errors.As(err, &tl) {
		t.Fatalf("/dev/zero: %v", err)
	}
	if _, err := ReadFile(dir, 10, time.Second); err == nil {
		t.Fatal("read a directory")
	}
}

// TestFIFO: a FIFO nobody writes to does not block (issue 10: --lock FIFO
// blocked forever); one whose writer never finishes ends at the deadline.
func TestFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ReadFile(fifo, 1<<20, 200*time.Millisecond)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Logf("FIFO without a writer: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO without a writer blocked")
	}
	w, err := os.OpenFile(fifo, os.O_RDWR, 0) // a writer that never closes
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Write([]byte("{"))
	start := time.Now()
	if _, err := ReadFile(fifo, 1<<20, 200*time.Millisecond); err == nil {
		t.Fatal("a FIFO whose writer never finishes read as complete")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("took %v", d)
	}
}
