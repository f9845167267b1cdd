package tlog

import (
	"crypto/sha256"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/core/merkle"

	"github.com/crawlcheck/verifier/core/internal/coretest"
	"github.com/crawlcheck/verifier/core/internal/ed25519"
	"github.com/crawlcheck/verifier/core/internal/sig"
)

func testLog(n int) *coretest.Log {
	l := &coretest.Log{Origin: "test.example/log"}
	for i := range n {
		l.Entries = append(l.Entries, []byte("entry "+strconv.Itoa(i)))
	}
	return l
}

func hashes(hs []coretest.Hash) []merkle.Hash {
	out := make([]merkle.Hash, len(hs))
	for i, h := range hs {
		out[i] = h
	}
	return out
}

// TestInclusion checks every entry of every tree up to 40 entries against
// the recursive definition, and that any changed input fails.
func TestInclusion(t *testing.T) {
	l := testLog(41)
	for size := 1; size <= 40; size++ {
		root := merkle.Hash(l.Root(size))
		for i := range size {
			p := hashes(l.Inclusion(i, size))
			lf := merkle.LeafHash(l.Entries[i])
			if err := merkle.VerifyInclusion(uint64(i), uint64(size), lf, p, root); err != nil {
				t.Fatalf("size %d index %d: %v", size, i, err)
			}
			if merkle.VerifyInclusion(uint64(i), uint64(size), merkle.LeafHash([]byte("other")), p, root) == nil {
				t.Fatalf("size %d index %d: another entry verifies", size, i)
			}
			if size > 1 && merkle.VerifyInclusion(uint64((i+1)%size), uint64(size), lf, p, root) == nil {
				t.Fatalf("size %d index %d: the proof verifies at another index", size, i)
			}
			if merkle.VerifyInclusion(uint64(i), uint64(size+1), lf, p, merkle.Hash(l.Root(size+1))) == nil {
				t.Fatalf("size %d index %d: the proof verifies for another size", size, i)
			}
			if len(p) > 0 && merkle.VerifyInclusion(uint64(i), uint64(size), lf, p[:len(p)-1], root) == nil {
				t.Fatalf("size %d index %d: a shortened proof verifies", size, i)
			}
			if merkle.VerifyInclusion(uint64(i), uint64(size), lf, append(p, root), root) == nil {
				t.Fatalf("size %d index %d: a lengthened proof verifies", size, i)
			}
		}
	}
	if merkle.VerifyInclusion(0, 0, merkle.Hash{}, nil, merkle.EmptyRoot()) != merkle.ErrIndexOutOfRange {
		t.Fatal("an empty tree includes an entry")
	}
}

// TestConsistency checks every pair of sizes up to 40 against the
// recursive definition, and that a tree with one entry changed is caught.
func TestConsistency(t *testing.T) {
	l := testLog(40)
	forked := testLog(40)
	forked.Entries[5] = []byte("rewritten")
	for n := 0; n <= 40; n++ {
		for m := 0; m <= n; m++ {
			p := hashes(l.Consistency(m, n))
			r1, r2 := merkle.Hash(l.Root(m)), merkle.Hash(l.Root(n))
			if err := merkle.VerifyConsistency(uint64(m), uint64(n), p, r1, r2); err != nil {
				t.Fatalf("%d→%d: %v", m, n, err)
			}
			if m > 5 && merkle.VerifyConsistency(uint64(m), uint64(n), p, merkle.Hash(forked.Root(m)), r2) == nil {
				t.Fatalf("%d→%d: a forked old tree is consistent", m, n)
			}
			if m > 0 && m <= 5 && n > 5 && merkle.VerifyConsistency(uint64(m), uint64(n), p, r1, merkle.Hash(forked.Root(n))) == nil {
				t.Fatalf("%d→%d: a forked new tree is consistent", m, n)
			}
			if len(p) > 0 && merkle.VerifyConsistency(uint64(m), uint64(n), p[:len(p)-1], r1, r2) == nil {
				t.Fatalf("%d→%d: a shortened proof verifies", m, n)
			}
		}
	}
	if merkle.VerifyConsistency(3, 2, nil, merkle.Hash{}, merkle.Hash{}) != merkle.ErrSizeOrder {
		t.Fatal("a larger old tree is accepted")
	}
}

func testDirectory(t *testing.T) (*sig.Directory, ed25519.PrivateKey, ed25519.PrivateKey) {
	seed := func(label string) ed25519.PrivateKey {
		s := sha256.Sum256([]byte(label))
		return ed25519.NewKeyFromSeed(s[:])
	}
	active, retired := seed("tlog active"), seed("tlog retired")
	d := &sig.Directory{Issuer: "test.example", Keys: []sig.Key{
		{ID: "k-active", Public: active.Public(), Status: sig.StatusActive},
		{ID: "k-retired", Public: retired.Public(), Status: sig.StatusRetired},
	}}
	return d, active, retired
}

func TestCheckpoint(t *testing.T) {
	dir, active, retired := testDirectory(t)
	l := testLog(7)
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	cp, f := VerifyCheckpoint(l.Checkpoint(7, active), dir, now)
	if f != nil || cp.Size != 7 || cp.Root != merkle.Hash(l.Root(7)) || cp.KeyID != "k-active" {
		t.Fatalf("a good checkpoint: %+v %+v", cp, f)
	}
	_, witness, _ := testDirectory(t)
	stranger := ed25519.NewKeyFromSeed(make([]byte, 32))
	if _, f := VerifyCheckpoint(l.Checkpoint(7, stranger, witness), dir, now); f != nil {
		t.Fatalf("an unknown cosigner's line must be skipped: %+v", f)
	}
	for name, c := range map[string]struct {
		note, reason string
	}{
		"retired":      {l.Checkpoint(7, retired), sig.ReasonRetiredKey},
		"unknown key":  {l.Checkpoint(7, stranger), ReasonKeyUnknown},
		"unsigned":     {l.Checkpoint(7), ReasonMalformedCheckpoint},
		"other origin": {(&coretest.Log{Origin: "evil.example/log", Entries: l.Entries}).Checkpoint(7, active), ReasonOtherOrigin},
		"edited size":  {strings.Replace(l.Checkpoint(7, active), "\n7\n", "\n8\n", 1), ReasonBadSignature},
		"leading zero": {coretest.SignNote("test.example/log\n07\n"+merkle.Hash(l.Root(7)).Encode()+"\n", "test.example/log", active), ReasonMalformedCheckpoint},
		"control char": {coretest.SignNote("test.example/log\n7\n"+merkle.Hash(l.Root(7)).Encode()+"\n\x1b[2J\n", "test.example/log", active), ReasonMalformedCheckpoint},
	} {
		if _, f := VerifyCheckpoint(c.note, dir, now); f == nil || f.Reason != c.reason {
			t.Errorf("%s: got %+v, want reason %s", name, f, c.reason)
		}
	}
}

func TestCheck(t *testing.T) {
	dir, active, _ := testDirectory(t)
	l := testLog(20)
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	v := Check(l.Proof(3, 12, active), l.Entries[3], dir, now, "", nil, false)
	if v.Inclusion != nil || v.Keep != l.Checkpoint(12, active) {
		t.Fatalf("included, nothing kept: %+v", v)
	}
	if v := Check(l.Proof(3, 12, active), []byte("entry 4"), dir, now, "", nil, false); v.Inclusion == nil || v.Inclusion.Reason != "root_mismatch" {
		t.Fatalf("another entry: %+v", v.Inclusion)
	}
	// The kept checkpoint older, then newer, than the proof's.
	kept := l.Checkpoint(5, active)
	if v := Check(l.Proof(3, 12, active), l.Entries[3], dir, now, kept, coretest.B64(l.Consistency(5, 12)), false); v.Consistency != nil || v.Keep != l.Checkpoint(12, active) {
		t.Fatalf("kept 5, proof at 12: %+v", v.Consistency)
	}
	kept = l.Checkpoint(20, active)
	if v := Check(l.Proof(3, 12, active), l.Entries[3], dir, now, kept, coretest.B64(l.Consistency(12, 20)), false); v.Consistency != nil || v.Keep != kept {
		t.Fatalf("kept 20, proof at 12: %+v", v.Consistency)
	}
	// A fork: the log showed this host another history before.
	forked := testLog(20)
	forked.Entries[1] = []byte("rewritten")
	kept = forked.Checkpoint(5, active)
	v = Check(l.Proof(3, 12, active), l.Entries[3], dir, now, kept, coretest.B64(l.Consistency(5, 12)), false)
	if v.Consistency == nil || v.Consistency.Reason != ReasonNotConsistent || v.Keep != kept {
		t.Fatalf("a fork: %+v, keep changed: %v", v.Consistency, v.Keep != kept)
	}
}
