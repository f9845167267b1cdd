package merkle_test

import (
	"slices"
	"strconv"
	"testing"

	"github.com/crawlcheck/verifier/core/internal/coretest"
	"github.com/crawlcheck/verifier/core/merkle"
)

// stored is a log's stored nodes: the root of every complete aligned
// subtree, as the issuer's store keeps them.
func stored(entries [][]byte) merkle.Reader {
	levels := [][]merkle.Hash{nil}
	for _, e := range entries {
		levels[0] = append(levels[0], merkle.LeafHash(e))
	}
	for l := 0; len(levels[l]) > 1; l++ {
		var up []merkle.Hash
		for i := 0; i+1 < len(levels[l]); i += 2 {
			up = append(up, merkle.NodeHash(levels[l][i], levels[l][i+1]))
		}
		levels = append(levels, up)
	}
	return func(level int, index uint64) (merkle.Hash, error) { return levels[level][index], nil }
}

func same(a []merkle.Hash, b []coretest.Hash) bool {
	return slices.EqualFunc(a, b, func(x merkle.Hash, y coretest.Hash) bool { return x == y })
}

// TestProofs: every root and proof of trees of 1 to 40 entries is the one
// coretest's textbook RFC 6962 (written from the RFC's recursive
// definitions, with crypto/sha256) gives, and verifies; a proof of an entry
// not in the tree, or from a larger tree, is refused.
func TestProofs(t *testing.T) {
	l := &coretest.Log{}
	for i := range 40 {
		l.Entries = append(l.Entries, []byte("entry "+strconv.Itoa(i)))
	}
	r := stored(l.Entries)
	if root, _ := merkle.Root(r, 0); root != merkle.EmptyRoot() {
		t.Fatal("the empty tree's root")
	}
	for n := 1; n <= len(l.Entries); n++ {
		root, err := merkle.Root(r, uint64(n))
		if err != nil || root != l.Root(n) {
			t.Fatalf("root of %d: %x", n, root)
		}
		for i := range n {
			p, err := merkle.InclusionProof(r, uint64(i), uint64(n))
			if err != nil || !same(p, l.Inclusion(i, n)) || merkle.VerifyInclusion(uint64(i), uint64(n), merkle.LeafHash(l.Entries[i]), p, root) != nil {
				t.Fatalf("inclusion of %d in %d", i, n)
			}
		}
		for m := 0; m <= n; m++ {
			p, err := merkle.ConsistencyProof(r, uint64(m), uint64(n))
			old, _ := merkle.Root(r, uint64(m))
			if err != nil || !same(p, l.Consistency(m, n)) || merkle.VerifyConsistency(uint64(m), uint64(n), p, old, root) != nil {
				t.Fatalf("consistency of %d with %d", m, n)
			}
		}
	}
	if _, err := merkle.InclusionProof(r, 5, 5); err != merkle.ErrIndexOutOfRange {
		t.Fatalf("an entry not in the tree: %v", err)
	}
	if _, err := merkle.ConsistencyProof(r, 6, 5); err != merkle.ErrSizeOrder {
		t.Fatalf("from a larger tree: %v", err)
	}
}
