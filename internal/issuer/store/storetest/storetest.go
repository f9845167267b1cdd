// Package storetest is the conformance suite every store backend passes:
// the same assertions against SQLite and PostgreSQL, so the service behaves
// the same on either (issue 20's tables add their cases here too).
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/store"
)

// Run runs the suite; open answers a fresh, empty store each call, and
// reopen the same store again (migrations applied twice must be a no-op).
func Run(t *testing.T, open func(t *testing.T) (s store.Store, reopen func() store.Store)) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

	t.Run("nonces are unique", func(t *testing.T) {
		s, _ := open(t)
		if err := s.IssueNonce(ctx, "n1", t0.Add(5*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := s.IssueNonce(ctx, "n1", t0.Add(time.Hour)); !errors.Is(err, store.ErrNonceReused) {
			t.Fatalf("second issue of one nonce: %v, want ErrNonceReused", err)
		}
		if ok, err := s.NonceIssued(ctx, "n1"); err != nil || !ok {
			t.Fatalf("NonceIssued(n1) = %v, %v", ok, err)
		}
		if ok, err := s.NonceIssued(ctx, "n2"); err != nil || ok {
			t.Fatalf("NonceIssued(n2) = %v, %v", ok, err)
		}
	})

	t.Run("nonces are unique under concurrency", func(t *testing.T) {
		s, _ := open(t)
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for i := 0; i < 16; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := s.IssueNonce(ctx, "contested", t0.Add(time.Minute))
				if err == nil {
					mu.Lock()
					won++
					mu.Unlock()
				} else if !errors.Is(err, store.ErrNonceReused) {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if won != 1 {
			t.Fatalf("%d of 16 concurrent issues of one nonce succeeded, want 1", won)
		}
	})

	t.Run("expired nonces are pruned, live ones kept", func(t *testing.T) {
		s, _ := open(t)
		for i, exp := range []time.Duration{-time.Hour, -time.Second, time.Second, time.Hour} {
			if err := s.IssueNonce(ctx, fmt.Sprint("p", i), t0.Add(exp)); err != nil {
				t.Fatal(err)
			}
		}
		n, err := s.PruneNonces(ctx, t0)
		if err != nil || n != 2 {
			t.Fatalf("PruneNonces = %d, %v, want 2", n, err)
		}
		if c, err := s.CountNonces(ctx); err != nil || c != 2 {
			t.Fatalf("CountNonces = %d, %v, want 2", c, err)
		}
		if ok, _ := s.NonceIssued(ctx, "p2"); !ok {
			t.Fatal("a live nonce was pruned")
		}
		if err := s.IssueNonce(ctx, "p3", t0); !errors.Is(err, store.ErrNonceReused) {
			t.Fatalf("a live nonce issued again after a prune: %v", err)
		}
	})

	t.Run("documents by digest", func(t *testing.T) {
		s, _ := open(t)
		d := store.Document{SHA256: "ab12", Kind: "crawlcheck-mcp-lock", KeyID: "k1", Subject: "https://x.example/mcp",
			IssuedAt: t0.Add(123456 * time.Microsecond), Body: []byte("{\"a\":\"\x00\xff\"}\n")}
		if err := s.PutDocument(ctx, d); err != nil {
			t.Fatal(err)
		}
		if err := s.PutDocument(ctx, d); err != nil {
			t.Fatalf("the same document twice: %v", err)
		}
		got, err := s.GetDocument(ctx, "ab12")
		if err != nil {
			t.Fatal(err)
		}
		if got.Kind != d.Kind || got.KeyID != d.KeyID || got.Subject != d.Subject || !got.IssuedAt.Equal(d.IssuedAt) || !bytes.Equal(got.Body, d.Body) {
			t.Fatalf("GetDocument = %+v, want %+v", got, d)
		}
		if _, err := s.GetDocument(ctx, "missing"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("GetDocument(missing) = %v, want ErrNotFound", err)
		}
	})

	t.Run("rules by digest", func(t *testing.T) {
		s, _ := open(t)
		if err := s.PutRules(ctx, "r1", []byte(`{"rules":1}`)); err != nil {
			t.Fatal(err)
		}
		if err := s.PutRules(ctx, "r1", []byte(`{"rules":1}`)); err != nil {
			t.Fatal(err)
		}
		if b, err := s.GetRules(ctx, "r1"); err != nil || string(b) != `{"rules":1}` {
			t.Fatalf("GetRules = %q, %v", b, err)
		}
		if _, err := s.GetRules(ctx, "r2"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("GetRules(r2) = %v, want ErrNotFound", err)
		}
	})

	t.Run("migrations are versioned and idempotent", func(t *testing.T) {
		s, reopen := open(t)
		v, err := s.SchemaVersion(ctx)
		if err != nil || v < 1 {
			t.Fatalf("SchemaVersion = %d, %v", v, err)
		}
		if err := s.IssueNonce(ctx, "kept", t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		s2 := reopen()
		if v2, err := s2.SchemaVersion(ctx); err != nil || v2 != v {
			t.Fatalf("reopened at version %d, %v; want %d", v2, err, v)
		}
		if ok, err := s2.NonceIssued(ctx, "kept"); err != nil || !ok {
			t.Fatalf("a nonce did not survive reopening: %v, %v", ok, err)
		}
		if err := s2.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
