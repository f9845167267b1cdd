package core

import "testing"

// TestSameText: the lockfile cache's word-at-a-time comparison is ==.
func TestSameText(t *testing.T) {
	base := "0123456789abcdefghijklmnopqrstuvwxyz"
	for n := 0; n <= len(base); n++ {
		a := base[:n]
		if !sameText(a, string([]byte(a))) {
			t.Fatalf("%q differs from itself", a)
		}
		for i := 0; i < n; i++ {
			b := []byte(a)
			b[i] ^= 0x40
			if sameText(a, string(b)) {
				t.Fatalf("%q equals %q", a, b)
			}
		}
		if n > 0 && sameText(a, a[:n-1]) {
			t.Fatalf("%q equals its prefix", a)
		}
	}
}
