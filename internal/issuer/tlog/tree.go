// Package tlog is the issuer's transparency log (docs/log.md): one
// append-only Merkle tree (RFC 6962 hashing) over every lockfile and receipt
// the issuer signs, served as C2SP tlog-tiles (/log/checkpoint,
// /log/tile/<L>/<N>, /log/tile/entries/<N>) and proved to each signing
// answer's reader with a C2SP tlog-proof.
//
// The tree is kept as the hashes of its complete subtrees: node (level l,
// index i) is the root of leaves [i·2^l, (i+1)·2^l). Every hash a root, a
// proof or a tile needs is one of those, so a store holds exactly them
// (store.Log*) and nothing is ever rewritten: an append adds the new
// leaves' nodes and a new checkpoint. The tree itself, its hashes and its
// proofs, is core/merkle, the one RFC 6962 implementation, with which the
// core (core/internal/tlog) verifies what this package serves.
package tlog

import (
	"context"
	"fmt"

	"github.com/crawlcheck/verifier/core/merkle"
)

// Hash is a tree node.
type Hash = merkle.Hash

// HashReader reads stored nodes: the root of the complete subtree at
// (level, index).
type HashReader interface {
	Hash(ctx context.Context, level int, index uint64) (Hash, error)
}

// nodes is r under ctx as core/merkle reads nodes.
func nodes(ctx context.Context, r HashReader) merkle.Reader {
	return func(level int, index uint64) (Hash, error) { return r.Hash(ctx, level, index) }
}

// Root is the root of the tree of size leaves (SHA-256 of nothing for none).
func Root(ctx context.Context, r HashReader, size uint64) (Hash, error) {
	return merkle.Root(nodes(ctx, r), size)
}

// InclusionProof is PATH(index, D[0:size]) (RFC 6962 §2.1.1).
func InclusionProof(ctx context.Context, r HashReader, index, size uint64) ([]Hash, error) {
	if index >= size {
		return nil, fmt.Errorf("tlog: index %d is not in a tree of %d entries", index, size)
	}
	return merkle.InclusionProof(nodes(ctx, r), index, size)
}

// ConsistencyProof is PROOF(m, D[0:n]) (RFC 6962 §2.1.2); empty when m is 0
// or m equals n.
func ConsistencyProof(ctx context.Context, r HashReader, m, n uint64) ([]Hash, error) {
	if m > n {
		return nil, fmt.Errorf("tlog: no consistency proof from %d entries to %d", m, n)
	}
	return merkle.ConsistencyProof(nodes(ctx, r), m, n)
}

// Node is a stored node: what an append writes.
type Node struct {
	Level int
	Index uint64
	Hash  Hash
}

// NewNodes are the nodes appending leaves to a tree of size old adds: each
// leaf, and every subtree the leaves complete. left reads the nodes
// already stored (the left siblings of the new subtrees).
func NewNodes(ctx context.Context, left HashReader, old uint64, leaves []Hash) ([]Node, error) {
	added := map[[2]uint64]Hash{}
	var out []Node
	get := func(level int, index uint64) (Hash, error) {
		if h, ok := added[[2]uint64{uint64(level), index}]; ok {
			return h, nil
		}
		return left.Hash(ctx, level, index)
	}
	for i, h := range leaves {
		idx := old + uint64(i)
		node := Node{0, idx, h}
		for {
			added[[2]uint64{uint64(node.Level), node.Index}] = node.Hash
			out = append(out, node)
			if node.Index&1 == 0 {
				break
			}
			sib, err := get(node.Level, node.Index-1)
			if err != nil {
				return nil, err
			}
			node = Node{node.Level + 1, node.Index >> 1, merkle.NodeHash(sib, node.Hash)}
		}
	}
	return out, nil
}

// Frontier is a tree's right edge: the complete subtrees it is made of, one
// for each set bit of its size, the largest (leftmost) first, at the
// positions FrontierNodes names. An append reads no other stored node: the
// left sibling of every subtree it completes is one of them, and so is each
// part of the new root that no new leaf is under. So a store reads the
// frontier in one query (or keeps it), where NewNodes and Root read node
// after node.
type Frontier []Node

// FrontierNodes are the positions of the frontier of a tree of size
// leaves, their hashes unset: (k, size>>k - 1) for each set bit k, highest
// first.
func FrontierNodes(size uint64) Frontier {
	var f Frontier
	for k := 63; k >= 0; k-- {
		if size>>k&1 == 1 {
			f = append(f, Node{Level: k, Index: size>>k - 1})
		}
	}
	return f
}

// Size is the number of leaves under the frontier.
func (f Frontier) Size() uint64 {
	var n uint64
	for _, x := range f {
		n += 1 << x.Level
	}
	return n
}

// Root is the root of the tree (Root): its subtrees hashed together from
// the right, as RFC 6962 splits a tree at the largest power of two below
// its size.
func (f Frontier) Root() Hash {
	if len(f) == 0 {
		return merkle.EmptyRoot()
	}
	r := f[len(f)-1].Hash
	for i := len(f) - 2; i >= 0; i-- {
		r = merkle.NodeHash(f[i].Hash, r)
	}
	return r
}

// Append is NewNodes from the frontier alone: the nodes appending leaves
// adds, and the frontier of the tree they make. f is left as it was.
func (f Frontier) Append(leaves []Hash) (nodes []Node, next Frontier) {
	next = append(make(Frontier, 0, len(f)+1), f...)
	old := f.Size()
	for i, h := range leaves {
		node := Node{0, old + uint64(i), h}
		for {
			nodes = append(nodes, node)
			if node.Index&1 == 0 {
				break
			}
			// The left sibling completed before this leaf came: the
			// frontier's lowest subtree, of this one's level.
			sib := next[len(next)-1]
			next = next[:len(next)-1]
			node = Node{node.Level + 1, node.Index >> 1, merkle.NodeHash(sib.Hash, node.Hash)}
		}
		next = append(next, node)
	}
	return nodes, next
}
