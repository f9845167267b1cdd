// Package storetest is the conformance suite every store backend passes:
// the same assertions against SQLite and PostgreSQL, so the service behaves
// the same on either (issue 20's tables add their cases here too).
package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/store"
	"github.com/crawlcheck/verifier/internal/issuer/tlog"
	"github.com/crawlcheck/verifier/internal/issuer/tlog/tlogtest"
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
			IssuedAt: t0.Add(123456 * time.Microsecond), Body: []byte("{\"a\":\"\x00\xff\"}\n"), Principal: "tenant:acme"}
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
		if got.Kind != d.Kind || got.KeyID != d.KeyID || got.Subject != d.Subject || !got.IssuedAt.Equal(d.IssuedAt) || !bytes.Equal(got.Body, d.Body) ||
			got.Principal != d.Principal {
			t.Fatalf("GetDocument = %+v, want %+v", got, d)
		}
		if _, err := s.GetDocument(ctx, "missing"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("GetDocument(missing) = %v, want ErrNotFound", err)
		}
	})

	t.Run("documents in parts", func(t *testing.T) {
		s, reopen := open(t)
		list := []byte(`{"tools":[` + strings.Repeat(`{"name":"a tool","description":"\u0000 and more"},`, 200) + `{}]}`)
		doc := func(head, tail string, extra ...[]byte) store.Document {
			body := append([]byte(head), list...)
			spans := []store.Span{{Start: len(head), End: len(body)}}
			for _, x := range extra {
				body = append(append(body, ','), x...)
				spans = append(spans, store.Span{Start: len(body) - len(x), End: len(body)})
			}
			body = append(body, tail...)
			sum := sha256.Sum256(body)
			return store.Document{SHA256: hex.EncodeToString(sum[:]), Kind: "crawlcheck-mcp-lock-check", KeyID: "k1", IssuedAt: t0, Body: body, Shared: spans}
		}
		d1 := doc(`{"inputs":`, `,"nonce":"1"}`)
		d2 := doc(`{"inputs":`, `,"nonce":"2"}`, []byte(`"a second part"`), list)
		d3 := doc(``, ``) // a document that is its part alone
		if err := s.PutDocument(ctx, d1); err != nil {
			t.Fatal(err)
		}
		noLog := func(uint64, tlog.Hash) (string, error) { return "", errors.New("no log entry was given") }
		if _, _, err := s.Issue(ctx, []store.Issuance{{Nonce: "parts1", NonceExpires: t0.Add(time.Hour), Document: d2}, {Document: d3}, {Document: d1}}, noLog); err != nil {
			t.Fatal(err)
		}
		for _, st := range []store.Store{s, reopen()} {
			for _, d := range []store.Document{d1, d2, d3} {
				got, err := st.GetDocument(ctx, d.SHA256)
				if err != nil || !bytes.Equal(got.Body, d.Body) || got.Kind != d.Kind || got.Shared != nil {
					t.Fatalf("GetDocument of a document in %d parts = %q, %v; want its bytes whole", len(d.Shared), got.Body, err)
				}
			}
		}
		// Spans out of order or outside the body fail the whole batch.
		for _, spans := range [][]store.Span{{{Start: 5, End: 3}}, {{Start: 0, End: len(d1.Body) + 1}}, {{Start: 4, End: 9}, {Start: 8, End: 12}}} {
			bad := d1
			bad.SHA256, bad.Shared = "bad-spans", spans
			_, _, err := s.Issue(ctx, []store.Issuance{{Nonce: "parts2", NonceExpires: t0.Add(time.Hour), Document: bad}}, noLog)
			if err == nil || !strings.Contains(err.Error(), "shared span") {
				t.Fatalf("spans %v: %v, want an error naming the shared span", spans, err)
			}
			if ok, _ := s.NonceIssued(ctx, "parts2"); ok {
				t.Fatal("a nonce of a batch with a bad span was recorded")
			}
			if err := s.PutDocument(ctx, bad); err == nil {
				t.Fatalf("PutDocument with spans %v was accepted", spans)
			}
			if _, err := s.GetDocument(ctx, "bad-spans"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("a document with bad spans: %v, want ErrNotFound", err)
			}
		}
	})

	t.Run("issuances in one transaction, all or nothing", func(t *testing.T) {
		s, _ := open(t)
		signed := 0
		sign := func(size uint64, root tlog.Hash) (string, error) {
			signed++
			return fmt.Sprintf("checkpoint %d\n", size), nil
		}
		doc := func(sha string) store.Document {
			return store.Document{SHA256: sha, Kind: "crawlcheck-mcp-lock-check", KeyID: "k1", IssuedAt: t0, Body: []byte(`{"` + sha + `":1}`)}
		}
		first, cp, err := s.Issue(ctx, []store.Issuance{
			{Nonce: "i1", NonceExpires: t0.Add(time.Hour), Document: doc("d1"), LogEntry: []byte("e1")},
			{Document: doc("d2"), LogEntry: []byte("e2")}, // a lockfile: no nonce
			{Nonce: "i3", NonceExpires: t0.Add(time.Hour), Document: doc("d3"), LogEntry: []byte("e3")},
		}, sign)
		if err != nil || first != 0 || cp != "checkpoint 3\n" || signed != 1 {
			t.Fatalf("Issue = %d, %q, %v after %d checkpoints; want 0, one checkpoint of 3", first, cp, err, signed)
		}
		// A nonce issued before fails the whole batch: nothing of it is written.
		_, _, err = s.Issue(ctx, []store.Issuance{
			{Nonce: "i4", NonceExpires: t0.Add(time.Hour), Document: doc("d4"), LogEntry: []byte("e4")},
			{Nonce: "i1", NonceExpires: t0.Add(time.Hour), Document: doc("d5"), LogEntry: []byte("e5")},
		}, sign)
		if !errors.Is(err, store.ErrNonceReused) {
			t.Fatalf("a batch with a reused nonce: %v, want ErrNonceReused", err)
		}
		if ok, _ := s.NonceIssued(ctx, "i4"); ok {
			t.Error("a nonce of a failed batch was recorded")
		}
		if _, err := s.GetDocument(ctx, "d4"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a document of a failed batch: %v, want ErrNotFound", err)
		}
		// One nonce twice in a batch (PostgreSQL writes a batch's rows in
		// one statement) fails it too; one document twice is one row.
		_, _, err = s.Issue(ctx, []store.Issuance{
			{Nonce: "i6", NonceExpires: t0.Add(time.Hour), Document: doc("d6"), LogEntry: []byte("e6")},
			{Nonce: "i6", NonceExpires: t0.Add(time.Hour), Document: doc("d7"), LogEntry: []byte("e7")},
		}, sign)
		if !errors.Is(err, store.ErrNonceReused) {
			t.Fatalf("a batch with one nonce twice: %v, want ErrNonceReused", err)
		}
		if ok, _ := s.NonceIssued(ctx, "i6"); ok {
			t.Error("a nonce of a failed batch was recorded")
		}
		if _, _, err := s.Issue(ctx, []store.Issuance{{Document: doc("d2")}, {Document: doc("d2")}}, sign); err != nil {
			t.Fatalf("a batch with one document twice: %v", err)
		}
		for _, n := range []string{"i1", "i3"} {
			if ok, err := s.NonceIssued(ctx, n); err != nil || !ok {
				t.Errorf("NonceIssued(%s) = %v, %v", n, ok, err)
			}
		}
		if d, err := s.GetDocument(ctx, "d2"); err != nil || string(d.Body) != `{"d2":1}` {
			t.Errorf("GetDocument(d2) = %q, %v", d.Body, err)
		}
		// The next append continues the log where the batch left it.
		if ls, ok := store.LogOf(s); ok {
			first, cp, err := ls.LogAppend(ctx, [][]byte{[]byte("e6")}, sign)
			if err != nil || first != 3 || cp != "checkpoint 4\n" {
				t.Fatalf("LogAppend after Issue = %d, %q, %v; want 3, checkpoint 4", first, cp, err)
			}
			if es, err := ls.LogEntries(ctx, 0, 4); err != nil || string(bytes.Join(es, []byte(","))) != "e1,e2,e3,e6" {
				t.Fatalf("LogEntries = %q, %v", es, err)
			}
		}
	})

	t.Run("two instances appending in turn make one tree", func(t *testing.T) {
		// Each append reads the tree as the other instance may have left
		// it (its size and frontier): every checkpoint's root, and every
		// stored node (each is in the root of some size), must be the tree
		// of the entries by definition.
		s, reopen := open(t)
		var logs []tlog.Store
		for _, st := range []store.Store{s, reopen()} {
			ls, ok := store.LogOf(st)
			if !ok {
				t.Skip("the store keeps no log")
			}
			logs = append(logs, ls)
		}
		var all [][]byte
		// checkRoots reads the tree of every size through each store's
		// Hash (what proofs read).
		checkRoots := func(when string) {
			t.Helper()
			for _, ls := range logs {
				for size := range len(all) + 1 {
					if root, err := tlog.Root(ctx, ls, uint64(size)); err != nil || root != tlogtest.RootOf(all[:size]) {
						t.Fatalf("%s, the stored tree of %d entries: root %x, %v; want %x", when, size, root, err, tlogtest.RootOf(all[:size]))
					}
				}
			}
		}
		for n, turn := range "0010110001110100101100011101" {
			var batch [][]byte
			for range n%7 + 1 {
				batch = append(batch, []byte(fmt.Sprint("entry ", len(all)+len(batch))))
			}
			want := tlogtest.RootOf(append(all, batch...))
			var got tlog.Hash
			first, _, err := logs[turn-'0'].LogAppend(ctx, batch, func(size uint64, root tlog.Hash) (string, error) {
				got = root
				return fmt.Sprint("checkpoint ", size), nil
			})
			if err != nil || first != uint64(len(all)) || got != want {
				t.Fatalf("append %d by instance %c to %d entries: first %d, %v, root %x, want %x", n, turn, len(all), first, err, got, want)
			}
			all = append(all, batch...)
		}
		// An append that fails (here its checkpoint cannot be signed) is
		// rolled back: the next, after the other instance's append of as
		// many entries, must not build on what it computed, nor may its
		// nodes be read back.
		fail := func(uint64, tlog.Hash) (string, error) { return "", errors.New("no key") }
		if _, _, err := logs[0].LogAppend(ctx, [][]byte{[]byte("rolled back"), []byte("also")}, fail); err == nil {
			t.Fatal("an append whose checkpoint failed was committed")
		}
		for _, turn := range []int{1, 0} {
			batch := [][]byte{[]byte(fmt.Sprint("entry ", len(all))), []byte(fmt.Sprint("entry ", len(all)+1))}
			want := tlogtest.RootOf(append(all, batch...))
			var got tlog.Hash
			if _, _, err := logs[turn].LogAppend(ctx, batch, func(size uint64, root tlog.Hash) (string, error) {
				got = root
				return fmt.Sprint("checkpoint ", size), nil
			}); err != nil || got != want {
				t.Fatalf("append by instance %d after a rolled-back one: root %x, %v; want %x", turn, got, err, want)
			}
			all = append(all, batch...)
			if turn == 1 {
				checkRoots("after a rolled-back append and the other instance's")
			}
		}
		checkRoots("at the end")
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

	t.Run("pilots: heads move by compare-and-set", func(t *testing.T) {
		s, _ := open(t)
		p := store.Pilot{ID: "p1", TokenSHA256: "aa", CreatedAt: t0}
		if err := s.CreatePilot(ctx, p); err != nil {
			t.Fatal(err)
		}
		if err := s.CreatePilot(ctx, p); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("a pilot id twice: %v, want ErrConflict", err)
		}
		if _, err := s.GetPilot(ctx, "p2"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("GetPilot(p2) = %v, want ErrNotFound", err)
		}
		recs := []store.PilotRecord{{SHA256: "r1", ReceivedAt: t0, Body: []byte("{\"r\":1}")}, {SHA256: "r2", ReceivedAt: t0, Body: []byte("{\"r\":2}")}}
		if err := s.AcceptPilotRecords(ctx, "p1", "", "r2", recs); err != nil {
			t.Fatal(err)
		}
		if err := s.AcceptPilotRecords(ctx, "p1", "", "r3", []store.PilotRecord{{SHA256: "r3", ReceivedAt: t0, Body: []byte("x")}}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("extending a head that moved: %v, want ErrConflict", err)
		}
		if err := s.SetPilotLogged(ctx, "p1", "r1"); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetPilot(ctx, "p1")
		if err != nil || got.Head != "r2" || got.LoggedHead != "" || got.Records != 2 || got.TokenSHA256 != "aa" || !got.CreatedAt.Equal(t0) {
			t.Fatalf("GetPilot = %+v, %v (a logged head that is not the head must not be kept)", got, err)
		}
		if err := s.SetPilotLogged(ctx, "p1", "r2"); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.GetPilot(ctx, "p1"); got.Records != 2 || got.Bytes != int64(len(recs[0].Body)+len(recs[1].Body)) {
			t.Fatalf("GetPilot = %+v: want 2 records of %d bytes (the quota counts them)", got, len(recs[0].Body)+len(recs[1].Body))
		}
		if got, _ := s.GetPilot(ctx, "p1"); got.LoggedHead != "r2" {
			t.Fatalf("logged head %q, want r2", got.LoggedHead)
		}
		held, err := s.PilotHolds(ctx, "p1", []string{"r1", "r3", "r2"})
		if err != nil || len(held) != 2 || !held["r1"] || !held["r2"] {
			t.Fatalf("PilotHolds = %v, %v", held, err)
		}
		if held, _ := s.PilotHolds(ctx, "p2", []string{"r1"}); len(held) != 0 {
			t.Fatalf("another pilot holds %v", held)
		}
		many := make([]string, 1200)
		for i := range many {
			many[i] = fmt.Sprint("m", i)
		}
		many[1100] = "r2"
		if held, err := s.PilotHolds(ctx, "p1", many); err != nil || len(held) != 1 {
			t.Fatalf("PilotHolds of 1,200 digests = %v, %v", held, err)
		}
	})

	t.Run("pilots: one of two concurrent uploads extends a head", func(t *testing.T) {
		s, _ := open(t)
		if err := s.CreatePilot(ctx, store.Pilot{ID: "c", TokenSHA256: "bb", CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := fmt.Sprint("d", i)
				err := s.AcceptPilotRecords(ctx, "c", "", d, []store.PilotRecord{{SHA256: d, ReceivedAt: t0, Body: []byte(d)}})
				if err == nil {
					mu.Lock()
					won++
					mu.Unlock()
				} else if !errors.Is(err, store.ErrConflict) {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if p, _ := s.GetPilot(ctx, "c"); won != 1 || p.Records != 1 {
			t.Fatalf("%d of 8 concurrent uploads extended one head (records %d), want 1", won, p.Records)
		}
	})

	t.Run("corrections by target and version, with their log entry", func(t *testing.T) {
		s, _ := open(t)
		sign := func(size uint64, root tlog.Hash) (string, error) { return fmt.Sprint("checkpoint ", size), nil }
		c1 := store.Correction{SHA256: "c1", Target: "t", Version: 1, IssuedAt: t0, Body: []byte(`{"v":1}`)}
		c2 := store.Correction{SHA256: "c2", Target: "t", Version: 2, IssuedAt: t0.Add(time.Second), Body: []byte(`{"v":2}`)}
		for i, c := range []store.Correction{c1, c2} {
			first, cp, err := s.AddCorrection(ctx, c, []byte(c.SHA256), sign)
			if err != nil || first != uint64(i) || cp != fmt.Sprint("checkpoint ", i+1) {
				t.Fatalf("AddCorrection(%s) = %d, %q, %v", c.SHA256, first, cp, err)
			}
		}
		if _, _, err := s.AddCorrection(ctx, store.Correction{SHA256: "c3", Target: "t", Version: 2, IssuedAt: t0, Body: []byte(`{}`)}, []byte("c3"), sign); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("a version taken: %v, want ErrConflict", err)
		}
		ls, _ := store.LogOf(s)
		if cp, err := ls.LogCheckpoint(ctx); err != nil || cp != "checkpoint 2" {
			t.Fatalf("the log after a refused correction: %q, %v (its entry must not be kept)", cp, err)
		}
		if _, _, err := s.AddCorrection(ctx, store.Correction{SHA256: "c4", Target: "u", Version: 1, IssuedAt: t0, Body: []byte(`{}`)}, nil, nil); err != nil {
			t.Fatalf("a correction without a log entry: %v", err)
		}
		got, err := s.Corrections(ctx, "t")
		if err != nil || len(got) != 2 || got[0].SHA256 != "c1" || got[1].SHA256 != "c2" || string(got[1].Body) != `{"v":2}` || !got[1].IssuedAt.Equal(c2.IssuedAt) {
			t.Fatalf("Corrections = %+v, %v", got, err)
		}
		if got, err := s.Corrections(ctx, "other"); err != nil || len(got) != 0 {
			t.Fatalf("Corrections(other) = %+v, %v", got, err)
		}
		if all, err := s.AllCorrections(ctx); err != nil || len(all) != 3 || all[0].SHA256 != "c1" || all[2].SHA256 != "c4" || all[2].Target != "u" {
			t.Fatalf("AllCorrections = %+v, %v", all, err)
		}
		// Re-signed through a rotation: once per key, with its log entry;
		// the first signing is not touched.
		r1 := store.Resigning{SHA256: "r1", Original: "c1", KeyID: "k2", SignedAt: t0.Add(time.Hour), Body: []byte(`{"r":1}`)}
		r2 := store.Resigning{SHA256: "r2", Original: "c1", KeyID: "k3", SignedAt: t0.Add(2 * time.Hour), Body: []byte(`{"r":2}`)}
		for i, r := range []store.Resigning{r2, r1} {
			if first, cp, err := s.AddResigning(ctx, r, []byte(r.SHA256), sign); err != nil || first != uint64(2+i) || cp != fmt.Sprint("checkpoint ", 3+i) {
				t.Fatalf("AddResigning(%s) = %d, %q, %v", r.SHA256, first, cp, err)
			}
		}
		if _, _, err := s.AddResigning(ctx, store.Resigning{SHA256: "r3", Original: "c1", KeyID: "k2", SignedAt: t0, Body: []byte(`{}`)}, []byte("r3"), sign); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("a second re-signing by one key: %v, want ErrConflict", err)
		}
		if cp, err := ls.LogCheckpoint(ctx); err != nil || cp != "checkpoint 4" {
			t.Fatalf("the log after a refused re-signing: %q, %v (its entry must not be kept)", cp, err)
		}
		rs, err := s.Resignings(ctx, "c1")
		if err != nil || len(rs) != 2 || rs[0].SHA256 != "r1" || rs[1].SHA256 != "r2" || rs[0].KeyID != "k2" || string(rs[1].Body) != `{"r":2}` || !rs[1].SignedAt.Equal(r2.SignedAt) {
			t.Fatalf("Resignings = %+v, %v", rs, err)
		}
		if c, err := s.Corrections(ctx, "t"); err != nil || len(c) != 2 || string(c[0].Body) != `{"v":1}` {
			t.Fatalf("Corrections after re-signing = %+v, %v", c, err)
		}
	})

	t.Run("the sweep: endpoints, claims, surfaces and instructions once, changes", func(t *testing.T) {
		st, _ := open(t)
		s, ok := store.SweepOf(st)
		if !ok {
			t.Fatal("the store keeps no sweep state")
		}
		a := store.SweepEndpoint{URL: "https://a.example/mcp", Owner: "operator", Interval: time.Hour, Added: t0, Next: t0}
		b := store.SweepEndpoint{URL: "https://b.example/mcp", Owner: "pilot:p1", Interval: 2 * time.Hour, Added: t0, Next: t0.Add(time.Minute)}
		for _, e := range []store.SweepEndpoint{a, b, a} {
			if err := s.SweepRegister(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		if es, err := s.SweepEndpoints(ctx, "pilot:p1"); err != nil || len(es) != 1 || es[0].URL != b.URL || es[0].Interval != 2*time.Hour {
			t.Fatalf("a pilot's endpoints: %+v, %v", es, err)
		}
		// Another owner registering a taken URL changes nothing.
		if err := s.SweepRegister(ctx, store.SweepEndpoint{URL: a.URL, Owner: "pilot:p1", Interval: 5 * time.Hour, Added: t0, Next: t0}); err != nil {
			t.Fatal(err)
		}
		if es, _ := s.SweepEndpoints(ctx, "operator"); len(es) != 1 || es[0].Interval != time.Hour {
			t.Fatalf("a pilot took over the operator's endpoint: %+v", es)
		}
		// Due at t0: a alone; a second claim (another instance) gets nothing.
		got, err := s.SweepClaim(ctx, t0, t0.Add(10*time.Minute), 10)
		if err != nil || len(got) != 1 || got[0].URL != a.URL {
			t.Fatalf("claim at t0: %+v, %v", got, err)
		}
		if again, err := s.SweepClaim(ctx, t0, t0.Add(10*time.Minute), 10); err != nil || len(again) != 0 {
			t.Fatalf("a claimed endpoint was claimed again: %+v, %v", again, err)
		}
		// A claim renewed before its lease lapses is not taken by another
		// instance past the first lease; once the lease lapsed and another
		// instance claimed the endpoint, the first cannot renew it (and so
		// does not read it).
		if ok, err := s.SweepRenew(ctx, a.URL, t0.Add(10*time.Minute), t0.Add(30*time.Minute)); err != nil || !ok {
			t.Fatalf("renewing a held claim: %v, %v", ok, err)
		}
		if again, err := s.SweepClaim(ctx, t0.Add(20*time.Minute), t0.Add(40*time.Minute), 10); err != nil || len(again) != 1 || again[0].URL != b.URL {
			t.Fatalf("after a's first lease, b alone is due (a's claim renewed): %+v, %v", again, err)
		}
		if ok, err := s.SweepRenew(ctx, a.URL, t0.Add(10*time.Minute), t0.Add(50*time.Minute)); err != nil || ok {
			t.Fatalf("a renewal from a lease no longer held succeeded: %v, %v", ok, err)
		}
		if other, err := s.SweepClaim(ctx, t0.Add(31*time.Minute), t0.Add(60*time.Minute), 10); err != nil || len(other) != 1 || other[0].URL != a.URL {
			t.Fatalf("a lapsed claim is due again: %+v, %v", other, err)
		}
		if ok, err := s.SweepRenew(ctx, a.URL, t0.Add(30*time.Minute), t0.Add(70*time.Minute)); err != nil || ok {
			t.Fatalf("the first instance renewed a claim another took: %v, %v", ok, err)
		}
		read := func(at time.Time, surface, body, failure string, change *store.SweepChange) {
			t.Helper()
			if err := s.SweepRecord(ctx, a.URL, store.SweepReading{At: at, Next: at.Add(time.Hour), Surface: surface, Body: []byte(body), Error: failure, Change: change}); err != nil {
				t.Fatal(err)
			}
		}
		read(t0, "s1", "one", "", nil)
		read(t0.Add(time.Hour), "", "", "server_unavailable", nil)
		es, _ := s.SweepEndpoints(ctx, "operator")
		if len(es) != 1 || es[0].Surface != "s1" || es[0].Error != "server_unavailable" || !es[0].Last.Equal(t0.Add(time.Hour)) || !es[0].Next.Equal(t0.Add(2*time.Hour)) {
			t.Fatalf("after a failed reading: %+v (the last surface stays)", es)
		}
		read(t0.Add(2*time.Hour), "s2", "two", "", &store.SweepChange{SeenAt: t0.Add(2 * time.Hour), From: "s1", To: "s2", Detail: []byte(`{"modified":[]}`)})
		read(t0.Add(3*time.Hour), "s2", "two", "", nil)
		if body, err := s.SweepSurface(ctx, "s1"); err != nil || string(body) != "one" {
			t.Fatalf("surface s1: %q, %v", body, err)
		}
		if _, err := s.SweepSurface(ctx, "s3"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("surface s3: %v, want ErrNotFound", err)
		}
		cs, err := s.SweepChanges(ctx, "", t0, t0.Add(24*time.Hour))
		if err != nil || len(cs) != 1 || cs[0].URL != a.URL || cs[0].From != "s1" || cs[0].To != "s2" || string(cs[0].Detail) != `{"modified":[]}` {
			t.Fatalf("changes: %+v, %v", cs, err)
		}
		if cs, _ := s.SweepChanges(ctx, b.URL, t0, t0.Add(24*time.Hour)); len(cs) != 0 {
			t.Fatalf("b's changes: %+v", cs)
		}
		if err := s.SweepRecord(ctx, "https://unknown.example/mcp", store.SweepReading{At: t0}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("recording an unregistered endpoint: %v", err)
		}
		if cs[0].Kind != store.ChangeTools {
			t.Fatalf("a tools change's kind: %q", cs[0].Kind)
		}

		// The instructions: stored once by digest, kept by a reading
		// without a readable handshake, their change an event of its own
		// kind beside a tools change of the same reading.
		ins := func(at time.Time, digest, body string, change *store.SweepChange, tools *store.SweepChange) {
			t.Helper()
			r := store.SweepReading{At: at, Next: at.Add(time.Hour), Surface: "s2", Body: []byte("two"), Change: tools,
				Instructions: digest, InstructionsBody: []byte(body), InstructionsChange: change}
			if err := s.SweepRecord(ctx, b.URL, r); err != nil {
				t.Fatal(err)
			}
		}
		if es, _ := s.SweepEndpoints(ctx, "pilot:p1"); es[0].Instructions != "" {
			t.Fatalf("instructions before any reading: %q", es[0].Instructions)
		}
		ins(t0.Add(4*time.Hour), "i1", `"Use list first."`, nil, nil)
		ins(t0.Add(5*time.Hour), "", "", nil, nil)
		if es, _ := s.SweepEndpoints(ctx, "pilot:p1"); es[0].Instructions != "i1" {
			t.Fatalf("instructions after a reading without a handshake: %q (the last stay)", es[0].Instructions)
		}
		ins(t0.Add(6*time.Hour), "i2", "null", &store.SweepChange{Kind: store.ChangeInstructions, SeenAt: t0.Add(6 * time.Hour), From: "i1", To: "i2", Detail: []byte(`{"changed":true}`)},
			&store.SweepChange{SeenAt: t0.Add(6 * time.Hour), From: "s1", To: "s2", Detail: []byte(`{"modified":[]}`)})
		ins(t0.Add(7*time.Hour), "i1", `"Use list first."`, nil, nil)
		if body, err := s.SweepInstructions(ctx, "i1"); err != nil || string(body) != `"Use list first."` {
			t.Fatalf("instructions i1: %q, %v", body, err)
		}
		if body, err := s.SweepInstructions(ctx, "i2"); err != nil || string(body) != "null" {
			t.Fatalf("instructions i2 (none): %q, %v", body, err)
		}
		if _, err := s.SweepInstructions(ctx, "s1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a surface's digest as instructions: %v, want ErrNotFound", err)
		}
		cs, err = s.SweepChanges(ctx, b.URL, t0, t0.Add(24*time.Hour))
		if err != nil || len(cs) != 2 || cs[0].Kind != store.ChangeInstructions || cs[0].From != "i1" || cs[0].To != "i2" || string(cs[0].Detail) != `{"changed":true}` || cs[1].Kind != store.ChangeTools {
			t.Fatalf("b's changes: %+v, %v (an instructions change and a tools change)", cs, err)
		}
	})

	t.Run("an owner's endpoints stay within its limit", func(t *testing.T) {
		// SweepRegisterWithin (issue 37: a pilot's 20 endpoints, which two
		// registrations at once both passed when the count was read first).
		st, _ := open(t)
		s, _ := store.SweepOf(st)
		ep := func(url, owner string, interval time.Duration) store.SweepEndpoint {
			return store.SweepEndpoint{URL: url, Owner: owner, Interval: interval, Added: t0, Next: t0}
		}
		if err := s.SweepRegister(ctx, ep("https://op.example/mcp", "operator", time.Hour)); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if err := s.SweepRegisterWithin(ctx, ep(fmt.Sprintf("https://p%d.example/mcp", i), "pilot:p", time.Hour), 2); err != nil {
				t.Fatalf("endpoint %d of 2: %v", i+1, err)
			}
		}
		if err := s.SweepRegisterWithin(ctx, ep("https://p2.example/mcp", "pilot:p", time.Hour), 2); !errors.Is(err, store.ErrOwnerFull) {
			t.Fatalf("a third endpoint of 2: %v, want ErrOwnerFull", err)
		}
		// Its own endpoint's interval still changes at the limit; another
		// owner's endpoint is left as it is (no error: the caller tells it
		// from the listing, as with SweepRegister).
		if err := s.SweepRegisterWithin(ctx, ep("https://p0.example/mcp", "pilot:p", 3*time.Hour), 2); err != nil {
			t.Fatalf("re-registering its own at the limit: %v", err)
		}
		if err := s.SweepRegisterWithin(ctx, ep("https://op.example/mcp", "pilot:p", 2*time.Hour), 2); err != nil {
			t.Fatalf("the operator's endpoint: %v", err)
		}
		all, err := s.SweepEndpoints(ctx, "")
		if err != nil || len(all) != 3 {
			t.Fatalf("endpoints: %+v, %v", all, err)
		}
		for _, e := range all {
			want := map[string]time.Duration{"https://op.example/mcp": time.Hour, "https://p0.example/mcp": 3 * time.Hour, "https://p1.example/mcp": time.Hour}[e.URL]
			if e.Interval != want || e.URL == "https://op.example/mcp" && e.Owner != "operator" {
				t.Errorf("%s: %s of %s, want %s", e.URL, e.Interval, e.Owner, want)
			}
		}
	})

	t.Run("the sweep claims the operator's endpoints first, then each owner's in turn", func(t *testing.T) {
		// 10 pilots' 5 endpoints each, all due long before the operator's
		// (issue 37, F6: 200 endpoints of 10 free pilots starved the
		// operator's 1-minute endpoint for 6.5 minutes).
		st, _ := open(t)
		s, _ := store.SweepOf(st)
		for p := range 10 {
			for i := range 5 {
				e := store.SweepEndpoint{URL: fmt.Sprintf("https://p%d-%d.example/mcp", p, i), Owner: fmt.Sprintf("pilot:%d", p),
					Interval: time.Hour, Added: t0, Next: t0.Add(time.Duration(p*5+i) * time.Second)}
				if err := s.SweepRegister(ctx, e); err != nil {
					t.Fatal(err)
				}
			}
		}
		op := store.SweepEndpoint{URL: "https://operator.example/mcp", Owner: "operator", Interval: time.Minute, Added: t0, Next: t0.Add(time.Minute)}
		if err := s.SweepRegister(ctx, op); err != nil {
			t.Fatal(err)
		}
		got, err := s.SweepClaim(ctx, t0.Add(time.Hour), t0.Add(2*time.Hour), 11)
		if err != nil || len(got) != 11 {
			t.Fatalf("claim: %d, %v", len(got), err)
		}
		owners := map[string]bool{}
		for _, e := range got[1:] {
			owners[e.Owner] = true
		}
		if got[0].URL != op.URL || len(owners) != 10 {
			t.Fatalf("claimed %v first and %d owners after it: want the operator's, then one of each of the 10 pilots", got[0].URL, len(owners))
		}
	})

	t.Run("sweep host slots are gap apart, across callers", func(t *testing.T) {
		st, _ := open(t)
		s, _ := store.SweepOf(st)
		const gap = 10 * time.Second
		slot := func(host string, now time.Time) time.Time {
			t.Helper()
			at, err := s.SweepHostSlot(ctx, host, now, gap)
			if err != nil {
				t.Fatal(err)
			}
			return at
		}
		for i, c := range []struct {
			host      string
			now, want time.Time
		}{
			{"a.example", t0, t0},                                   // the first: at once
			{"a.example", t0, t0.Add(gap)},                          // the next: a gap later
			{"a.example", t0.Add(time.Second), t0.Add(2 * gap)},     // still queued behind it
			{"b.example", t0, t0},                                   // another host: its own
			{"a.example", t0.Add(time.Minute), t0.Add(time.Minute)}, // idle since: at once
		} {
			if got := slot(c.host, c.now); !got.Equal(c.want) {
				t.Fatalf("slot %d (%s at %s) = %s; want %s", i, c.host, c.now, got, c.want)
			}
		}
		// Sixteen callers at once (as instances sharing the store): sixteen
		// distinct slots, each a gap after the one before.
		var mu sync.Mutex
		var got []time.Time
		var wg sync.WaitGroup
		for i := 0; i < 16; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				at, err := s.SweepHostSlot(ctx, "c.example", t0, gap)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got = append(got, at)
				mu.Unlock()
			}()
		}
		wg.Wait()
		slices.SortFunc(got, time.Time.Compare)
		for i, at := range got {
			if want := t0.Add(time.Duration(i) * gap); !at.Equal(want) {
				t.Fatalf("concurrent slots %v; want %d slots from %s, %s apart", got, 16, t0, gap)
			}
		}
	})

	t.Run("records held by any pilot", func(t *testing.T) {
		s, _ := open(t)
		if err := s.CreatePilot(ctx, store.Pilot{ID: "h", TokenSHA256: "cc", CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		if err := s.AcceptPilotRecords(ctx, "h", "", "r1", []store.PilotRecord{{SHA256: "r1", ReceivedAt: t0, Body: []byte("x")}}); err != nil {
			t.Fatal(err)
		}
		for d, want := range map[string]bool{"r1": true, "r2": false} {
			if got, err := s.HoldsRecord(ctx, d); err != nil || got != want {
				t.Fatalf("HoldsRecord(%s) = %v, %v", d, got, err)
			}
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
