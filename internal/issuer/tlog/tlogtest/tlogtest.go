// Package tlogtest checks a log the way an auditor does, through the core's
// ops only (log_verify, log_consistency): every entry's proof against the
// newest checkpoint, and every older checkpoint's consistency with it. It
// serves the log's tests over each store.
package tlogtest

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"os"
	"sync"
	"testing"

	"github.com/crawlcheck/verifier/core/merkle"
	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/issuer/tlog"
)

// Now is the time the test key may vouch at.
const Now = "2026-11-30T12:00:00Z"

// Issuer is the test directory's issuer name.
const Issuer = "test-issuer.crawlcheck.invalid"

// Key is the test issuer's active key (testdata/keys/test-issuer.json).
func Key(t testing.TB, repo string) ed25519.PrivateKey {
	t.Helper()
	var k struct{ Seed string }
	readJSON(t, repo+"/testdata/keys/test-issuer.json", &k)
	seed, err := base64.StdEncoding.DecodeString(k.Seed)
	if err != nil {
		t.Fatal(err)
	}
	return ed25519.NewKeyFromSeed(seed)
}

// Directory is the test key directory.
func Directory(t testing.TB, repo string) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(repo + "/testdata/keys/test-directory.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// Verdict is the part of a log op's answer a test reads.
type Verdict struct {
	Valid       bool
	Observation *string
	Reason      *string
	Detail      *string
	Keep        *string
}

// VerifyEntry asks the core whether proof proves entry.
func VerifyEntry(t testing.TB, dir json.RawMessage, entry []byte, proof, kept string, consistency []tlog.Hash) Verdict {
	t.Helper()
	req := map[string]any{"entry": string(entry), "proof": proof, "now": Now, "key_directory": dir}
	if kept != "" {
		req["checkpoint"] = kept
		req["consistency"] = b64(consistency)
	}
	var v Verdict
	if err := corecall.Into("log_verify", req, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Consistent asks the core whether checkpoint new extends kept.
func Consistent(t testing.TB, dir json.RawMessage, kept, newer string, proof []tlog.Hash) Verdict {
	t.Helper()
	var v Verdict
	if err := corecall.Into("log_consistency", map[string]any{"new": newer, "checkpoint": kept, "consistency": b64(proof), "now": Now, "key_directory": dir}, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func b64(hs []tlog.Hash) []string {
	out := []string{}
	for _, h := range hs {
		out = append(out, base64.StdEncoding.EncodeToString(h[:]))
	}
	return out
}

// Audit checks the whole log: every entry is in the newest checkpoint by
// its proof, and each checkpoint in kept (older ones a client saw) is
// consistent with the newest. It answers the log's size.
func Audit(t testing.TB, dir json.RawMessage, st tlog.Store, l *tlog.Log, kept []string) uint64 {
	t.Helper()
	ctx := context.Background()
	cp, err := st.LogCheckpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	size, ok := tlog.ParseCheckpointSize(cp)
	if !ok {
		t.Fatalf("the newest checkpoint does not read: %q", cp)
	}
	entries, err := st.LogEntries(ctx, 0, size)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		proof, err := l.ProofAt(ctx, uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		if v := VerifyEntry(t, dir, e, proof, "", nil); !v.Valid {
			t.Fatalf("entry %d of %d: %s", i, size, str(v.Detail))
		}
	}
	for _, k := range kept {
		m, _ := tlog.ParseCheckpointSize(k)
		proof, newest, err := l.Consistency(ctx, m, 0)
		if err != nil {
			t.Fatal(err)
		}
		if v := Consistent(t, dir, k, newest, proof); !v.Valid {
			t.Fatalf("checkpoint of %d entries is not consistent with %d: %s", m, size, str(v.Detail))
		}
	}
	return size
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// RootOf is MTH(entries) of RFC 6962 §2.1 computed from the entries alone,
// by the definition: what a log's stored nodes and checkpoints are checked
// against.
func RootOf(entries [][]byte) tlog.Hash {
	switch len(entries) {
	case 0:
		return sha256.Sum256(nil)
	case 1:
		return merkle.LeafHash(entries[0])
	}
	k := 1
	for k<<1 < len(entries) {
		k <<= 1
	}
	return merkle.NodeHash(RootOf(entries[:k]), RootOf(entries[k:]))
}

// Mem is a tlog.Store in memory, for the tree's own tests.
type Mem struct {
	mu      sync.Mutex
	entries [][]byte
	hashes  map[[2]uint64]tlog.Hash
	cps     []string
}

// Hash implements tlog.HashReader.
func (m *Mem) Hash(_ context.Context, level int, index uint64) (tlog.Hash, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hash(level, index)
}

func (m *Mem) hash(level int, index uint64) (tlog.Hash, error) {
	h, ok := m.hashes[[2]uint64{uint64(level), index}]
	if !ok {
		return h, os.ErrNotExist
	}
	return h, nil
}

type unlocked struct{ m *Mem }

func (u unlocked) Hash(_ context.Context, level int, index uint64) (tlog.Hash, error) {
	return u.m.hash(level, index)
}

// LogAppend implements tlog.Store.
func (m *Mem) LogAppend(ctx context.Context, entries [][]byte, sign func(uint64, tlog.Hash) (string, error)) (uint64, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hashes == nil {
		m.hashes = map[[2]uint64]tlog.Hash{}
	}
	old := uint64(len(m.entries))
	leaves := make([]tlog.Hash, len(entries))
	for i, e := range entries {
		leaves[i] = merkle.LeafHash(e)
	}
	nodes, err := tlog.NewNodes(ctx, unlocked{m}, old, leaves)
	if err != nil {
		return 0, "", err
	}
	for _, n := range nodes {
		m.hashes[[2]uint64{uint64(n.Level), n.Index}] = n.Hash
	}
	m.entries = append(m.entries, entries...)
	root, err := tlog.Root(ctx, unlocked{m}, uint64(len(m.entries)))
	if err != nil {
		return 0, "", err
	}
	cp, err := sign(uint64(len(m.entries)), root)
	if err != nil {
		return 0, "", err
	}
	m.cps = append(m.cps, cp)
	return old, cp, nil
}

// LogCheckpoint implements tlog.Store.
func (m *Mem) LogCheckpoint(context.Context) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.cps) == 0 {
		return "", nil
	}
	return m.cps[len(m.cps)-1], nil
}

// LogEntries implements tlog.Store.
func (m *Mem) LogEntries(_ context.Context, from, count uint64) ([][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if from+count > uint64(len(m.entries)) {
		return nil, os.ErrNotExist
	}
	return m.entries[from : from+count], nil
}
