package memo

import "sync"

// Sightings decides what a memo keeps: what it reads often, and more often
// than what keeping it would evict.
//
// Keeping what was read costs a copy and, while it is kept, collector time
// (every collection marks a kept tree; in WebAssembly one runs between
// calls, and a kept 1,000-tool page made each check that misses 30% dearer
// in Node). Bytes seen once are usually never seen again (a changed list,
// each check of a benchmark); bytes seen twice usually come again (the same
// server every session, the same list every check). So a memo notes a
// fingerprint of everything it reads, a hit included, in a window of the
// last SightingsWindow, and keeps what it read only when the window saw it
// at least twice and at least two times more often than each entry keeping
// it evicts (an entry not in the window: none). The window's counts age by
// themselves: a list that stopped coming slides out of it, and a new one
// read again and again outnumbers it within SightingsWindow/2+1 reads.
//
// Why not keep every list seen before, evicting the least recently used:
// a few more lists than a memo holds, read in turn (an issuer serving
// several clients, each with its own list), are each seen before and each
// evict the one needed next, so every call pays the keeping and none hits.
// With the rule the memo keeps some of them and the others are read
// without keeping. The margin of two, not one: lists read in turn are seen
// equally often, but a window cuts a turn where it falls, so its counts of
// two of them differ by one; a margin of one would let them evict each
// other again.
//
// The fingerprint only decides whether to keep, never what a memo answers
// (that is decided by comparing the bytes in full): two byte strings
// sharing one cost at most a copy kept for nothing, or one not kept.
type Sightings struct {
	mu     sync.Mutex
	prints [SightingsWindow]uint64
	next   int
}

// SightingsWindow is the window: how many sightings are remembered. More than
// a memo keeps, so that a few lists read in turn are each seen again; a
// benchmark reading a page not seen before cycles through more than this
// many (internal/benchdata.Unseen).
const SightingsWindow = 16

// Note notes a sighting of the fingerprint f (canon.Fingerprint) and answers how
// many of the window's sightings, this one included, were of f.
func (s *Sightings) Note(f uint64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prints[s.next] = f
	s.next = (s.next + 1) % SightingsWindow
	return s.count(f)
}

// Admits reports whether a memo keeps what it read, seen times in the
// window (Note), when keeping it evicts the entries whose fingerprints are
// evicts (none while the memo has room).
func (s *Sightings) Admits(seen int, evicts ...uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	need := 2
	for _, f := range evicts {
		need = max(need, s.count(f)+2)
	}
	return seen >= need
}

func (s *Sightings) count(f uint64) int {
	n := 0
	for _, p := range s.prints {
		if p == f {
			n++
		}
	}
	return n
}

func (s *Sightings) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prints, s.next = [SightingsWindow]uint64{}, 0
}
