package jsonframe

import (
	"bytes"
	"encoding/json"
	"sync"
)

// Recent is Members with the large values it framed lately known: a host
// sends the same lockfile and tool list with every check, and scanning
// their 260 KB again for where they end was a twentieth of the issuer's CPU
// a check. It keeps copies of the values, so the bodies it framed may be
// reused, and a hit is only a value that begins with a kept one's exact
// bytes (see Members). The zero value is ready; it is safe for concurrent
// use.
type Recent struct {
	mu     sync.Mutex
	values [][]byte // most recently used first; never changed once kept
}

// What Recent keeps: the last recentKept values of recentMin to recentMax
// bytes (a smaller one is framed about as fast as it is compared; a huge
// one is not kept alive).
const (
	recentKept = 8
	recentMin  = 4 << 10
	recentMax  = 2 << 20
)

// Members frames body as Members does, with the values kept known, and
// keeps body's large values. The large values it answers (recentMin to
// recentMax bytes) are copies, never changed, not body's bytes: a caller
// may keep them (see Owns).
func (r *Recent) Members(body []byte) (map[string]json.RawMessage, bool) {
	r.mu.Lock()
	known := append([][]byte(nil), r.values...)
	r.mu.Unlock()
	var used, fresh [][]byte
	m, ok := members(body, known, func(v []byte, k int) []byte {
		switch {
		case k >= 0:
			used = append(used, known[k])
			return known[k]
		case len(v) >= recentMin && len(v) <= recentMax:
			v = bytes.Clone(v)
			fresh = append(fresh, v)
		}
		return v
	})
	if !ok {
		return m, ok
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// The values fresh and used first, then the others as they were, the
	// oldest dropped; none twice (a fresh value another request kept
	// meanwhile, a value two members had).
	kept := make([][]byte, 0, recentKept+len(fresh)+len(used))
	for _, v := range fresh {
		if !keeps(r.values, v) && !keeps(kept, v) {
			kept = append(kept, v)
		}
	}
	for _, v := range append(used, r.values...) {
		if !keeps(kept, v) {
			kept = append(kept, v)
		}
	}
	r.values = kept[:min(len(kept), recentKept)]
	return m, ok
}

// keeps: v's bytes are one of values'.
func keeps(values [][]byte, v []byte) bool {
	for _, kv := range values {
		if Same(kv, v) || bytes.Equal(kv, v) {
			return true
		}
	}
	return false
}

// Owns: v is a value Members answered as its copy and keeps now. Such a
// value is never changed, so a caller may keep it instead of a copy of its
// own, and compare another with it by identity first.
func (r *Recent) Owns(v []byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, kv := range r.values {
		if Same(kv, v) {
			return true
		}
	}
	return false
}

// Same: a and b are the same bytes in memory (the same slice), which for a
// value Recent answered means the same bytes.
func Same(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
