package coretest

import (
	"crypto/sha256"
	"encoding/base64"
	"github.com/crawlcheck/verifier/core/internal/ed25519"
	"strconv"
	"strings"
)

// Log is a transparency log built the slow, obvious way of RFC 6962 §2.1
// (recursive MTH, PATH and PROOF), so that tests of core/internal/tlog's
// iterative verifiers compare two independent codings of one definition.
type Log struct {
	Origin  string
	Entries [][]byte
}

// Hash is a tree hash.
type Hash = [32]byte

func leaf(b []byte) Hash { return sha256.Sum256(append([]byte{0}, b...)) }

func node(l, r Hash) Hash { return sha256.Sum256(append(append([]byte{1}, l[:]...), r[:]...)) }

// split is the largest power of two smaller than n (n > 1).
func split(n int) int {
	k := 1
	for k<<1 < n {
		k <<= 1
	}
	return k
}

func mth(d [][]byte) Hash {
	switch len(d) {
	case 0:
		return sha256.Sum256(nil)
	case 1:
		return leaf(d[0])
	}
	k := split(len(d))
	return node(mth(d[:k]), mth(d[k:]))
}

func path(m int, d [][]byte) []Hash {
	if len(d) <= 1 {
		return nil
	}
	k := split(len(d))
	if m < k {
		return append(path(m, d[:k]), mth(d[k:]))
	}
	return append(path(m-k, d[k:]), mth(d[:k]))
}

func subproof(m int, d [][]byte, b bool) []Hash {
	n := len(d)
	if m == n {
		if b {
			return nil
		}
		return []Hash{mth(d)}
	}
	k := split(n)
	if m <= k {
		return append(subproof(m, d[:k], b), mth(d[k:]))
	}
	return append(subproof(m-k, d[k:], false), mth(d[:k]))
}

// Root is the root hash of the first size entries.
func (l *Log) Root(size int) Hash { return mth(l.Entries[:size]) }

// Inclusion is the inclusion proof of entry index in the tree of size.
func (l *Log) Inclusion(index, size int) []Hash { return path(index, l.Entries[:size]) }

// Consistency is the consistency proof from size m to size n.
func (l *Log) Consistency(m, n int) []Hash {
	if m == 0 || m == n {
		return nil
	}
	return subproof(m, l.Entries[:n], true)
}

// B64 spells hashes in base64.
func B64(hs []Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = base64.StdEncoding.EncodeToString(h[:])
	}
	return out
}

// Checkpoint is the signed checkpoint of the first size entries, signed by
// each key under the origin as its name (signers may be empty).
func (l *Log) Checkpoint(size int, signers ...ed25519.PrivateKey) string {
	r := l.Root(size)
	return SignNote(l.Origin+"\n"+strconv.Itoa(size)+"\n"+base64.StdEncoding.EncodeToString(r[:])+"\n", l.Origin, signers...)
}

// SignNote signs a note's text under a key name (c2sp.org/signed-note).
func SignNote(text, name string, signers ...ed25519.PrivateKey) string {
	var b strings.Builder
	b.WriteString(text)
	b.WriteString("\n")
	for _, k := range signers {
		pub := k.Public()
		h := sha256.Sum256(append(append([]byte(name), '\n', 1), pub...))
		sig := append(h[:4:4], ed25519.Sign(k, []byte(text))...)
		b.WriteString("— " + name + " " + base64.StdEncoding.EncodeToString(sig) + "\n")
	}
	return b.String()
}

// Proof is the tlog-proof of entry index against the checkpoint of size.
func (l *Log) Proof(index, size int, signers ...ed25519.PrivateKey) string {
	lines := []string{"c2sp.org/tlog-proof@v1", "index " + strconv.Itoa(index)}
	lines = append(lines, B64(l.Inclusion(index, size))...)
	return strings.Join(lines, "\n") + "\n\n" + l.Checkpoint(size, signers...)
}
