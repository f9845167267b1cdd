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
// keeps body's large values.
func (r *Recent) Members(body []byte) (map[string]json.RawMessage, bool) {
	r.mu.Lock()
	known := append([][]byte(nil), r.values...)
	r.mu.Unlock()
	var used, fresh [][]byte
	m, ok := members(body, known, func(v []byte, k int) {
		switch {
		case k >= 0:
			used = append(used, known[k])
		case len(v) >= recentMin && len(v) <= recentMax:
			fresh = append(fresh, v)
		}
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
			kept = append(kept, bytes.Clone(v))
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
		if len(kv) == len(v) && (&kv[0] == &v[0] || bytes.Equal(kv, v)) {
			return true
		}
	}
	return false
}
