// Package digest is the core's one SHA-256.
//
// Every hash the core computes goes through Sum256, so a build whose own
// SHA-256 is slow can hand the work to its host: the wasm module uses the
// host's crypto.sha256 import when the host has a fast one (docs/abi.md),
// after checking it against known answers. Native builds never replace it.
package digest

import (
	"crypto/sha256"
	"encoding/hex"
)

// host is the replacement SHA-256, nil for crypto/sha256. It is set once,
// before the first call, and never changes while an op runs.
var host func([]byte) [32]byte

// SetHost makes f the SHA-256 of every later Sum256; nil restores
// crypto/sha256. Only a build's start-up code calls it.
func SetHost(f func([]byte) [32]byte) { host = f }

// Sum256 is the SHA-256 of b.
func Sum256(b []byte) [32]byte {
	if host != nil {
		return host(b)
	}
	return sha256.Sum256(b)
}

// Hex is the lowercase hex SHA-256 of b.
func Hex(b []byte) string {
	sum := Sum256(b)
	return hex.EncodeToString(sum[:])
}
