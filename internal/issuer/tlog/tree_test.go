package tlog_test

import (
	"context"
	"crypto/sha256"
	"slices"
	"testing"

	"github.com/crawlcheck/verifier/core/merkle"
	"github.com/crawlcheck/verifier/internal/issuer/tlog"
	"github.com/crawlcheck/verifier/internal/issuer/tlog/tlogtest"
)

// TestFrontierAppend appends batches of 1 to 17 leaves to a tree of up to
// 700 from its frontier alone: each gives the nodes NewNodes gives reading
// the stored tree node by node, the root Root reads and the definition
// computes, and the frontier of the new size as read from the store at
// FrontierNodes' positions; the frontier appended to is left as it was.
func TestFrontierAppend(t *testing.T) {
	ctx := context.Background()
	st := &tlogtest.Mem{}
	var all [][]byte
	var f tlog.Frontier
	sign := func(uint64, tlog.Hash) (string, error) { return "cp", nil }
	for n, b := 0, 1; len(all) < 700; n, b = n+1, b%17+1 {
		var entries [][]byte
		var leaves []tlog.Hash
		for range b {
			e := entry(len(all) + len(entries))
			entries = append(entries, e)
			leaves = append(leaves, merkle.LeafHash(e))
		}
		old := uint64(len(all))
		want, err := tlog.NewNodes(ctx, st, old, leaves)
		if err != nil {
			t.Fatal(err)
		}
		before := slices.Clone(f)
		nodes, next := f.Append(leaves)
		if !slices.Equal(nodes, want) {
			t.Fatalf("append of %d to %d: %d nodes, NewNodes %d (or other hashes)", b, old, len(nodes), len(want))
		}
		if !slices.Equal(f, before) {
			t.Fatalf("append of %d to %d changed the frontier appended to", b, old)
		}
		if _, _, err := st.LogAppend(ctx, entries, sign); err != nil {
			t.Fatal(err)
		}
		all = append(all, entries...)
		size := uint64(len(all))
		stored := tlog.FrontierNodes(size)
		for i, x := range stored {
			if stored[i].Hash, err = st.Hash(ctx, x.Level, x.Index); err != nil {
				t.Fatalf("frontier of %d: %v", size, err)
			}
		}
		if !slices.Equal(next, stored) || next.Size() != size {
			t.Fatalf("frontier after %d: %v, stored %v", size, next, stored)
		}
		root, err := tlog.Root(ctx, st, size)
		if err != nil {
			t.Fatal(err)
		}
		if next.Root() != root || root != tlogtest.RootOf(all) {
			t.Fatalf("root of %d: frontier %x, stored %x, definition %x", size, next.Root(), root, tlogtest.RootOf(all))
		}
		f = next
	}
	if (tlog.Frontier{}).Root() != sha256.Sum256(nil) || len(tlog.FrontierNodes(0)) != 0 {
		t.Fatal("the empty tree's frontier")
	}
}
