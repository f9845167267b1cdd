package canon

// Fingerprint is FNV-1a over each part's length and up to 64 of its
// eight-byte words, evenly spaced, and its last eight bytes: a few hundred
// bytes of a megabyte page, cheap to take on every read. Never 0, the
// value of a window slot not yet used.
func Fingerprint(parts ...string) uint64 {
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
