package service

import (
	"bytes"
	"sync"

	"github.com/crawlcheck/verifier/internal/issuer/store"
	"github.com/crawlcheck/verifier/internal/jsonframe"
)

// A receipt carries its inputs so that it can be replayed on its own, and
// for a lock check they are most of it: the tool list, 115 KB of a 100-tool
// check's 116 KB receipt. A host checks one list again and again, so the
// store keeps a receipt's inputs once by their bytes (store.Document's
// Shared) and each receipt's row the rest: what a check writes falls from
// the whole list to about a kilobyte (docs/benchmarks.md).

// sharedMin is the smallest inputs worth a part of their own: below it the
// part's row and digest cost more than the bytes they save.
const sharedMin = 1 << 10

// recentInputs remembers the last few inputs receipts carried, by their
// exact bytes, so that finding them in the next receipt is one comparison
// (jsonframe.Members' known values) instead of a scan of 115 KB for where
// they end.
type recentInputs struct {
	mu      sync.Mutex
	entries [][]byte // most recently used first; each a copy never changed
}

// recentInputsKept is how many inputs are remembered; recentInputsBytes
// caps one, so that at most 4 MB is kept alive.
const (
	recentInputsKept  = 4
	recentInputsBytes = 1 << 20
)

// shared answers where receipt's inputs are, to be stored once: none when
// they are small or the receipt is not an object with inputs (then it is
// stored whole, as it is).
func (c *recentInputs) shared(receipt []byte) []store.Span {
	c.mu.Lock()
	known := append([][]byte(nil), c.entries...)
	c.mu.Unlock()
	m, ok := jsonframe.Members(receipt, known...)
	in := m["inputs"]
	if !ok || len(in) < sharedMin {
		return nil
	}
	// in is a slice of receipt: where it starts is how much shorter its
	// capacity is.
	start := cap(receipt) - cap(in)
	if start < 0 || start+len(in) > len(receipt) || &receipt[start] != &in[0] {
		return nil
	}
	c.remember(in)
	return []store.Span{{Start: start, End: start + len(in)}}
}

// remember puts in first among the inputs remembered.
func (c *recentInputs) remember(in []byte) {
	if len(in) > recentInputsBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if bytes.Equal(e, in) {
			copy(c.entries[1:i+1], c.entries[:i])
			c.entries[0] = e
			return
		}
	}
	c.entries = append([][]byte{bytes.Clone(in)}, c.entries[:min(len(c.entries), recentInputsKept-1)]...)
}
