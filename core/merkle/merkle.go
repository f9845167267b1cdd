// Package merkle is the project's one RFC 6962 Merkle tree (the hashing of
// Certificate Transparency and golang.org/x/mod/sumdb/tlog): leaf and node
// hashes, the proofs a log hands out (RFC 6962 §2.1), and their
// verification (RFC 9162 §2.1.3.2, §2.1.4.2). The issuer's log
// (internal/issuer/tlog) builds its trees and proofs with it; the core
// (core/internal/tlog) verifies what a log hands out with it, so the two
// cannot disagree on a hash.
//
// A leaf is SHA-256(0x00 || entry), an interior node SHA-256(0x01 || left
// || right); the tree of n entries splits at the largest power of two
// below n. Proofs are made from the roots of complete aligned subtrees,
// node (level l, index i) being the root of leaves [i·2^l, (i+1)·2^l),
// which is what a log stores: a Reader answers them.
//
// It hashes with core/digest (crypto/sha256 natively), links no fmt and
// reads no clock: it is core code, which the core's wasm build carries.
package merkle

import (
	"encoding/base64"
	"errors"

	"github.com/crawlcheck/verifier/core/digest"
)

// HashSize is the size of a tree hash.
const HashSize = 32

// Hash is a node of the tree.
type Hash [HashSize]byte

// Encode is the hash in standard base64, as notes and proofs write it.
func (h Hash) Encode() string { return base64.StdEncoding.EncodeToString(h[:]) }

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

// Reader answers a stored node: the root of the complete aligned subtree
// at (level, index).
type Reader func(level int, index uint64) (Hash, error)

// split is the largest power of two smaller than n (n > 1).
func split(n uint64) uint64 {
	k := uint64(1)
	for k<<1 < n {
		k <<= 1
	}
	return k
}

// rangeHash is MTH(D[lo:hi]): a stored node when the range is a complete
// aligned subtree, else the hash of its two halves split as RFC 6962 does.
func rangeHash(r Reader, lo, hi uint64) (Hash, error) {
	n := hi - lo
	if n&(n-1) == 0 {
		level := 0
		for uint64(1)<<level < n {
			level++
		}
		return r(level, lo>>level)
	}
	k := split(n)
	left, err := rangeHash(r, lo, lo+k)
	if err != nil {
		return Hash{}, err
	}
	right, err := rangeHash(r, lo+k, hi)
	if err != nil {
		return Hash{}, err
	}
	return NodeHash(left, right), nil
}

// Root is the root of the tree of size leaves (EmptyRoot for none).
func Root(r Reader, size uint64) (Hash, error) {
	if size == 0 {
		return EmptyRoot(), nil
	}
	return rangeHash(r, 0, size)
}

// InclusionProof is PATH(index, D[0:size]) (RFC 6962 §2.1.1), leaf to
// root; ErrIndexOutOfRange when index is not in the tree.
func InclusionProof(r Reader, index, size uint64) ([]Hash, error) {
	if index >= size {
		return nil, ErrIndexOutOfRange
	}
	var proof []Hash
	lo, hi := uint64(0), size
	// Walk down from the root, collecting the sibling of each step, then
	// reverse: the proof runs leaf to root.
	for hi-lo > 1 {
		k := split(hi - lo)
		var sib Hash
		var err error
		if index < lo+k {
			sib, err = rangeHash(r, lo+k, hi)
			hi = lo + k
		} else {
			sib, err = rangeHash(r, lo, lo+k)
			lo += k
		}
		if err != nil {
			return nil, err
		}
		proof = append(proof, sib)
	}
	for i, j := 0, len(proof)-1; i < j; i, j = i+1, j-1 {
		proof[i], proof[j] = proof[j], proof[i]
	}
	return proof, nil
}

// ConsistencyProof is PROOF(m, D[0:n]) (RFC 6962 §2.1.2); empty when m is
// 0 or m equals n; ErrSizeOrder when m > n.
func ConsistencyProof(r Reader, m, n uint64) ([]Hash, error) {
	if m > n {
		return nil, ErrSizeOrder
	}
	if m == 0 || m == n {
		return nil, nil
	}
	return subproof(r, m, 0, n, true)
}

func subproof(r Reader, m, lo, hi uint64, whole bool) ([]Hash, error) {
	n := hi - lo
	if m == n {
		if whole {
			return nil, nil
		}
		h, err := rangeHash(r, lo, hi)
		return []Hash{h}, err
	}
	k := split(n)
	if m <= k {
		p, err := subproof(r, m, lo, lo+k, whole)
		if err != nil {
			return nil, err
		}
		h, err := rangeHash(r, lo+k, hi)
		return append(p, h), err
	}
	p, err := subproof(r, m-k, lo+k, hi, false)
	if err != nil {
		return nil, err
	}
	h, err := rangeHash(r, lo, lo+k)
	return append(p, h), err
}

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
