// Package ed25519 is the core's Ed25519 (RFC 8032, pure Ed25519, no
// context), the same in every build.
//
// The standard library's crypto/ed25519 links crypto/rand for GenerateKey,
// and through it math/big, fmt, reflect and the FIPS module's DRBG with AES,
// GCM and SHA-3, none of which the core uses: it never makes a key, it only
// derives one from a seed, signs and verifies. In the wasm build they were a
// tenth of the module. So the core does the three operations itself on top of
// filippo.io/edwards25519, the group arithmetic the standard library's own
// Ed25519 is built from (same author, same code), with its own SHA-512
// (sha512.go). Signatures are deterministic, so every build gives the same
// bytes; verification is the standard library's cofactorless check (the
// signature's S must be canonical, non-canonical encodings of A and R are
// decoded as crypto/ed25519 decodes them), pinned against crypto/ed25519 by
// ed25519_test.go, a fuzz target included.
package ed25519

import (
	"crypto/subtle"

	"filippo.io/edwards25519"
)

// Sizes, as in crypto/ed25519.
const (
	PublicKeySize  = 32
	PrivateKeySize = 64 // the seed, then the public key
	SignatureSize  = 64
	SeedSize       = 32
)

// PublicKey is a 32-byte Ed25519 public key.
type PublicKey []byte

// PrivateKey is the 32-byte seed followed by the public key, the layout of
// crypto/ed25519's PrivateKey.
type PrivateKey []byte

// Public is the key's public half.
func (priv PrivateKey) Public() PublicKey {
	pub := make([]byte, PublicKeySize)
	copy(pub, priv[SeedSize:])
	return pub
}

// NewKeyFromSeed derives the private key of a 32-byte seed. It panics if the
// seed is not 32 bytes (callers check).
func NewKeyFromSeed(seed []byte) PrivateKey {
	if len(seed) != SeedSize {
		panic("ed25519: the seed must be 32 bytes")
	}
	s, _ := expand(seed)
	pub := new(edwards25519.Point).ScalarBaseMult(s).Bytes()
	priv := make([]byte, 0, PrivateKeySize)
	return append(append(priv, seed...), pub...)
}

// expand is the seed's secret scalar and the prefix that makes nonces
// (RFC 8032, 5.1.5).
func expand(seed []byte) (*edwards25519.Scalar, []byte) {
	h := sum512(seed)
	s, err := new(edwards25519.Scalar).SetBytesWithClamping(h[:32])
	if err != nil {
		panic("ed25519: clamping 32 bytes cannot fail: " + err.Error())
	}
	return s, h[32:]
}

// Sign is priv's signature of message (RFC 8032, 5.1.6).
func Sign(priv PrivateKey, message []byte) []byte {
	if len(priv) != PrivateKeySize {
		panic("ed25519: a private key must be 64 bytes")
	}
	s, prefix := expand(priv[:SeedSize])
	pub := priv[SeedSize:]

	r := reduce(sum512(prefix, message))
	R := new(edwards25519.Point).ScalarBaseMult(r).Bytes()
	k := reduce(sum512(R, pub, message))
	S := new(edwards25519.Scalar).MultiplyAdd(k, s, r)

	sig := make([]byte, 0, SignatureSize)
	return append(append(sig, R...), S.Bytes()...)
}

// Verify reports whether sig is pub's signature of message (RFC 8032, 5.1.7,
// checking [S]B = R + [k]A without the cofactor, as crypto/ed25519 does).
func Verify(pub PublicKey, message, sig []byte) bool {
	if len(pub) != PublicKeySize || len(sig) != SignatureSize || sig[63]&224 != 0 {
		return false
	}
	A, err := new(edwards25519.Point).SetBytes(pub)
	if err != nil {
		return false
	}
	S, err := new(edwards25519.Scalar).SetCanonicalBytes(sig[32:])
	if err != nil {
		return false
	}
	k := reduce(sum512(sig[:32], pub, message))
	minusA := new(edwards25519.Point).Negate(A)
	R := new(edwards25519.Point).VarTimeDoubleScalarBaseMult(k, minusA, S)
	return subtle.ConstantTimeCompare(sig[:32], R.Bytes()) == 1
}

// reduce is a 64-byte hash taken modulo the group order.
func reduce(h [64]byte) *edwards25519.Scalar {
	s, err := new(edwards25519.Scalar).SetUniformBytes(h[:])
	if err != nil {
		panic("ed25519: 64 bytes are always uniform bytes: " + err.Error())
	}
	return s
}
