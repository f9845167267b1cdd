//go:build wasm

package canon

import "unsafe"

// Same is a == b, eight bytes at a time: Go's string comparison in
// WebAssembly compares byte by byte, which showed in V8's profile of a
// check wherever long strings are compared (a lockfile with the cached
// one, every covered member's hash with the approved one). The same
// string (one pointer, as the lockfile cache and the long-string memo
// share their text) is equal without reading it, as with == natively.
func Same(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || unsafe.StringData(a) == unsafe.StringData(b) {
		return true
	}
	i := 0
	for ; i+8 <= len(a); i += 8 {
		if load8(a, i) != load8(b, i) {
			return false
		}
	}
	return a[i:] == b[i:]
}
