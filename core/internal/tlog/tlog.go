// Package tlog verifies what a transparency log hands out: RFC 6962 Merkle
// inclusion and consistency proofs (the hashing of golang.org/x/mod/sumdb/tlog
// and Certificate Transparency), C2SP signed notes and checkpoints, and
// C2SP tlog-proof files.
//
// A log is a Merkle tree over its entries. A leaf is SHA-256(0x00 || entry),
// an interior node SHA-256(0x01 || left || right); the tree of n entries
// splits at the largest power of two below n. A checkpoint is a signed note
// naming the log (its origin), its size and its root hash; an inclusion proof
// shows one entry under that root; a consistency proof shows that a tree of
// size m is a prefix of the tree of size n, so that a log which showed one
// client one history and another client another is caught by whoever keeps a
// checkpoint.
//
// The package only verifies: the core draws no randomness and reads no
// clock, and the issuer builds its trees with its own code.
package tlog

import (
	"errors"

	"github.com/crawlcheck/verifier/core/digest"
)

// HashSize is the size of a tree hash.
const HashSize = 32

// Hash is a node of the tree.
type Hash [HashSize]byte

// MaxProofHashes bounds the hashes of one proof: a tree of at most 2^63
// entries has proofs of at most 126 hashes (a consistency proof between two
// sizes), and nothing honest is longer.
const MaxProofHashes = 126

// LeafHash is the hash of an entry: SHA-256(0x00 || entry).
func LeafHash(entry []byte) Hash {
	b := make([]byte, 1+len(entry))
	copy(b[1:], entry)
	return digest.Sum256(b)
}

// NodeHash is the hash of an interior node: SHA-256(0x01 || left || right).
func NodeHash(left, right Hash) Hash {
	var b [1 + 2*HashSize]byte
	b[0] = 1
	copy(b[1:], left[:])
	copy(b[1+HashSize:], right[:])
	return digest.Sum256(b[:])
}

// EmptyRoot is the root of the tree of no entries: SHA-256 of nothing.
func EmptyRoot() Hash { return digest.Sum256(nil) }

// Errors of proof verification; each is the reason a record names.
var (
	ErrIndexOutOfRange = errors.New("index_out_of_range")
	ErrProofLength     = errors.New("proof_length")
	ErrRootMismatch    = errors.New("root_mismatch")
	ErrSizeOrder       = errors.New("size_order")
)

// VerifyInclusion checks that leaf is entry index of the tree of size
// entries whose root is root (RFC 9162 §2.1.3.2).
func VerifyInclusion(index, size uint64, leaf Hash, proof []Hash, root Hash) error {
	if index >= size {
		return ErrIndexOutOfRange
	}
	fn, sn := index, size-1
	r := leaf
	for _, p := range proof {
		if sn == 0 {
			return ErrProofLength
		}
		if fn&1 == 1 || fn == sn {
			r = NodeHash(p, r)
			if fn&1 == 0 {
				for fn&1 == 0 && fn != 0 {
					fn >>= 1
					sn >>= 1
				}
			}
		} else {
			r = NodeHash(r, p)
		}
		fn >>= 1
		sn >>= 1
	}
	if sn != 0 {
		return ErrProofLength
	}
	if r != root {
		return ErrRootMismatch
	}
	return nil
}

// VerifyConsistency checks that the tree of size1 entries with root1 is a
// prefix of the tree of size2 entries with root2 (RFC 9162 §2.1.4.2). Equal
// sizes need an empty proof and equal roots; the empty tree is a prefix of
// every tree, with an empty proof.
func VerifyConsistency(size1, size2 uint64, proof []Hash, root1, root2 Hash) error {
	switch {
	case size1 > size2:
		return ErrSizeOrder
	case size1 == size2:
		if len(proof) != 0 {
			return ErrProofLength
		}
		if root1 != root2 {
			return ErrRootMismatch
		}
		return nil
	case size1 == 0:
		if len(proof) != 0 {
			return ErrProofLength
		}
		return nil
	case len(proof) == 0:
		return ErrProofLength
	}
	// When size1 is a power of two its root is the first node of the path.
	if size1&(size1-1) == 0 {
		proof = append([]Hash{root1}, proof...)
	}
	fn, sn := size1-1, size2-1
	for fn&1 == 1 { // drop the levels where the old tree's last node is a right child
		fn >>= 1
		sn >>= 1
	}
	fr, sr := proof[0], proof[0]
	for _, c := range proof[1:] {
		if sn == 0 {
			return ErrProofLength
		}
		if fn&1 == 1 || fn == sn {
			fr = NodeHash(c, fr)
			sr = NodeHash(c, sr)
			if fn&1 == 0 {
				for fn&1 == 0 && fn != 0 {
					fn >>= 1
					sn >>= 1
				}
			}
		} else {
			sr = NodeHash(sr, c)
		}
		fn >>= 1
		sn >>= 1
	}
	if sn != 0 {
		return ErrProofLength
	}
	if fr != root1 || sr != root2 {
		return ErrRootMismatch
	}
	return nil
}
