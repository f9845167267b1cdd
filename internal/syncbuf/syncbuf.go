// Package syncbuf is a buffer that one goroutine or process writes while
// another reads it: in tests, the stderr of a gateway, a proxy or a
// crawlcheck process, which a test reads for a verdict (or shows when it
// fails) while the process may still be writing.
package syncbuf

import (
	"strings"
	"sync"
)

// Buffer is safe for one writer and any readers at once; its zero value is
// empty and ready.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

// Write appends p; it never fails.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is all written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
