package canon

import "sync"

// Sightings decides what a memo keeps: only bytes it has seen before.
//
// Keeping what was read costs a copy and, while it is kept, collector time
// (every collection marks a kept tree; in WebAssembly one runs between
// calls, and a kept 1,000-tool page made each check that misses 30% dearer
// in Node). Bytes seen once are usually never seen again (a changed list,
// each check of a benchmark); bytes seen twice usually come again (the same
// server every session, the same list every check). So a memo first notes
// a fingerprint of what it read, and keeps it when it is read again. The
// fingerprint only decides whether to keep, never what a memo answers (that
// is decided by comparing the bytes in full): two byte strings sharing one
// cost at most a copy kept for nothing.
type Sightings struct {
	mu     sync.Mutex
	prints [sightingsKept]uint64
	next   int
}

// sightingsKept is how many fingerprints are remembered: more than a memo
// keeps, so that a few lists read in turn are each seen again.
const sightingsKept = 16

// SeenBefore notes the fingerprint of parts and reports whether it was
// noted before (among the last sightingsKept).
func (s *Sightings) SeenBefore(parts ...string) bool {
	f := fingerprint(parts)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.prints {
		if p == f {
			return true
		}
	}
	s.prints[s.next] = f
	s.next = (s.next + 1) % sightingsKept
	return false
}

// fingerprint is FNV-1a over each part's length and up to 64 of its
// eight-byte words, evenly spaced, and its last eight bytes: a few hundred
// bytes of a megabyte page, cheap to take on every read. Never 0, the
// value of a fingerprint slot not yet used.
func fingerprint(parts []string) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	mix := func(x uint64) { h = (h ^ x) * prime }
	for _, s := range parts {
		mix(uint64(len(s)))
		if len(s) < 8 {
			for i := 0; i < len(s); i++ {
				mix(uint64(s[i]))
			}
			continue
		}
		step := max(8, (len(s)-8)/64)
		for i := 0; i+8 <= len(s); i += step {
			mix(load8(s, i))
		}
		mix(load8(s, len(s)-8))
	}
	return h | 1
}
