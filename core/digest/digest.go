// Package digest is the core's one SHA-256 and its one hex encoding.
//
// Every hash the core computes goes through Sum256, so a build whose own
// SHA-256 is slow can hand the work to its host: the wasm module uses the
// host's crypto.sha256 import when the host has a fast one (docs/abi.md),
// after checking it against known answers. Native builds never replace it.
//
// Native builds hash with crypto/sha256 (assembly, SHA-NI); the wasm build
// with the package's own SHA-256 (sha256.go), because crypto/sha256 links the
// FIPS module's self-tests, DRBG, AES, GCM, SHA-3 and HMAC, a tenth of the
// module, and has no assembly there anyway. sha256_test.go pins one against
// the other.
package digest

// host is the replacement SHA-256, nil for the build's own. It is set once,
// before the first call, and never changes while an op runs.
var host func([]byte) [32]byte

// SetHost makes f the SHA-256 of every later Sum256; nil restores the
// build's own (Builtin). Only a build's start-up code calls it.
func SetHost(f func([]byte) [32]byte) { host = f }

// Sum256 is the SHA-256 of b.
func Sum256(b []byte) [32]byte {
	if host != nil {
		return host(b)
	}
	return Builtin(b)
}

// Hex is the lowercase hex SHA-256 of b.
func Hex(b []byte) string {
	sum := Sum256(b)
	return Encode(sum[:])
}

// Encode is b in lowercase hex (encoding/hex links fmt for its errors).
func Encode(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i] = digits[c>>4]
		out[2*i+1] = digits[c&15]
	}
	return string(out)
}
