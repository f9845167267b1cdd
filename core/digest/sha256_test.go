package digest

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// TestSum256 pins the wasm build's SHA-256 against crypto/sha256 at every
// length around the padding edges and over several blocks.
func TestSum256(t *testing.T) {
	in := make([]byte, 400)
	for i := range in {
		in[i] = byte(i*131 + i>>3)
	}
	for n := range len(in) {
		if got, want := sum256(in[:n]), sha256.Sum256(in[:n]); got != want {
			t.Fatalf("sum256 of %d bytes: %x, crypto/sha256 says %x", n, got, want)
		}
	}
}

func FuzzSum256(f *testing.F) {
	f.Add([]byte("abc"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := sum256(b), sha256.Sum256(b); got != want {
			t.Fatalf("sum256(%x) = %x, crypto/sha256 says %x", b, got, want)
		}
	})
}

func TestEncode(t *testing.T) {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	if got, want := Encode(b), hex.EncodeToString(b); got != want {
		t.Fatalf("Encode = %s, encoding/hex says %s", got, want)
	}
}
