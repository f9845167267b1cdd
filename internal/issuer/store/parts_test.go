package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/store/pgtest"
	"github.com/crawlcheck/verifier/internal/issuer/tlog"
)

// TestDocumentPartsStoredOnce: on both backends, the span a thousand
// documents share is one row, each document's row keeps only the rest, and
// a part changed in the database makes its documents an error, not other
// bytes.
func TestDocumentPartsStoredOnce(t *testing.T) {
	pg := pgtest.Run(t)
	dsn, err := pg.CreateDB("parts")
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"sqlite:" + filepath.Join(t.TempDir(), "issuer.db"), dsn} {
		t.Run(strings.SplitN(spec, ":", 2)[0], func(t *testing.T) {
			ctx := context.Background()
			st, err := Open(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			s := st.(*sqlStore)
			list := bytes.Repeat([]byte(`{"name":"t","description":"d"},`), 1000)
			var docs []Document
			for i := range 1000 {
				head := fmt.Sprintf(`{"n":%d,"inputs":[`, i)
				body := append(append([]byte(head), list...), "{}]}"...)
				sum := sha256.Sum256(body)
				docs = append(docs, Document{SHA256: hex.EncodeToString(sum[:]), Kind: "k", KeyID: "k1", IssuedAt: time.Now(), Body: body,
					Shared: []Span{{Start: len(head), End: len(head) + len(list)}}})
			}
			var items []Issuance
			for _, d := range docs[:999] {
				items = append(items, Issuance{Document: d})
			}
			noLog := func(uint64, tlog.Hash) (string, error) { return "", errors.New("no log entry was given") }
			if _, _, err := s.Issue(ctx, items, noLog); err != nil {
				t.Fatal(err)
			}
			if err := s.PutDocument(ctx, docs[999]); err != nil {
				t.Fatal(err)
			}
			var parts, partBytes, rowBytes int
			if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*), SUM(LENGTH(body)) FROM document_parts`).Scan(&parts, &partBytes); err != nil {
				t.Fatal(err)
			}
			if err := s.db.QueryRowContext(ctx, `SELECT SUM(LENGTH(body)) FROM documents`).Scan(&rowBytes); err != nil {
				t.Fatal(err)
			}
			if parts != 1 || partBytes != len(list) || rowBytes > 1000*40 {
				t.Fatalf("1,000 documents sharing %d bytes: %d parts of %d bytes, rows of %d bytes; want one part and the rest alone", len(list), parts, partBytes, rowBytes)
			}
			for _, d := range []Document{docs[0], docs[999]} {
				if got, err := s.GetDocument(ctx, d.SHA256); err != nil || !bytes.Equal(got.Body, d.Body) {
					t.Fatalf("GetDocument: %.40q…, %v", got.Body, err)
				}
			}
			if _, err := s.db.ExecContext(ctx, s.q(`UPDATE document_parts SET body = ?`), bytes.Replace(list, []byte(`"t"`), []byte(`"T"`), 1)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.GetDocument(ctx, docs[5].SHA256); err == nil || !strings.Contains(err.Error(), "does not hash to its digest") {
				t.Fatalf("a document whose part was changed: %v, want an error naming its digest", err)
			}
			if _, err := s.db.ExecContext(ctx, `DELETE FROM document_parts`); err != nil {
				t.Fatal(err)
			}
			if _, err := s.GetDocument(ctx, docs[5].SHA256); err == nil || !strings.Contains(err.Error(), "not in the store") {
				t.Fatalf("a document whose part is gone: %v, want an error naming the part", err)
			}
		})
	}
}

// TestJoinRefusesMalformedParts: a parts column that does not fit the row
// it belongs to is an error, never bytes out of range.
func TestJoinRefusesMalformedParts(t *testing.T) {
	sum := sha256.Sum256([]byte("PART"))
	x := hex.EncodeToString(sum[:])
	get := func(string) ([]byte, error) { return []byte("PART"), nil }
	if got, err := join("d", []byte("abcd"), "2:"+x+",6:"+x, get); err != nil || string(got) != "abPARTPARTcd" {
		t.Fatalf("join = %q, %v", got, err)
	}
	if _, err := join("d", []byte("abcd"), "2:"+strings.Repeat("0", 64), get); err == nil || !strings.Contains(err.Error(), "does not hash") {
		t.Fatalf("join of a part under another digest: %v", err)
	}
	for _, refs := range []string{"5:" + x, "-1:" + x, x, "2", "2:" + x + ",1:" + x, "a:" + x} {
		if _, err := join("d", []byte("abcd"), refs, get); err == nil || !strings.Contains(err.Error(), "malformed") {
			t.Errorf("join of parts %q: %v, want it called malformed", refs, err)
		}
	}
}

// TestIssueSharedRowsNoDeadlock: two instances on one PostgreSQL database
// issuing batches that hold the same documents, half of them in the
// reverse order, never deadlock (the rows go in the order of their keys,
// the sequencer lock after them) and leave one log.
func TestIssueSharedRowsNoDeadlock(t *testing.T) {
	pg := pgtest.Run(t)
	dsn, err := pg.CreateDB("shared_rows")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var stores []Store
	for range 2 {
		st, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		stores = append(stores, st)
	}
	doc := func(name string) Document {
		return Document{SHA256: name, Kind: "k", KeyID: "k1", IssuedAt: time.Now(), Body: []byte(name)}
	}
	sign := func(size uint64, root tlog.Hash) (string, error) {
		return fmt.Sprintf("checkpoint %d %x\n", size, root[:4]), nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				var items []Issuance
				for k := range 400 {
					items = append(items, Issuance{Nonce: fmt.Sprintf("n-%d-%d-%d", w, i, k), NonceExpires: time.Now().Add(time.Hour),
						Document: doc(fmt.Sprintf("shared-%d-%d", i, k)), LogEntry: []byte("e")})
				}
				if w%2 == 1 {
					slices.Reverse(items)
				}
				if _, _, err := stores[w%2].Issue(ctx, items, sign); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a batch failed: %v", err)
	}
	ls, _ := LogOf(stores[0])
	if es, err := ls.LogEntries(ctx, 0, 16000); err != nil || len(es) != 16000 {
		t.Fatalf("the log after 40 batches of 400: %d entries, %v; want 16,000", len(es), err)
	}
}

// TestDocumentRowsInKeyOrder: a batch's documents and parts are written in
// the order of their keys whatever the batch's order, the rule that keeps
// two PostgreSQL transactions holding the same rows from waiting on each
// other in a cycle (TestIssueSharedRowsNoDeadlock could not make that race
// happen on demand).
func TestDocumentRowsInKeyOrder(t *testing.T) {
	s := &sqlStore{}
	part := func(b string) Document {
		body := []byte(`{"inputs":` + b + `}`)
		return Document{SHA256: "d-" + b, Body: body, Shared: []Span{{Start: 10, End: 10 + len(b)}}}
	}
	rows, parts, err := s.documentRows([]Document{part(`"c"`), part(`"a"`), part(`"b"`)})
	if err != nil {
		t.Fatal(err)
	}
	var keys, digests []string
	for _, r := range rows {
		keys = append(keys, r[0].(string))
	}
	for _, p := range parts {
		digests = append(digests, p[0].(string))
	}
	if !slices.IsSorted(keys) || !slices.IsSorted(digests) || len(digests) != 3 {
		t.Fatalf("documents %v, parts %v: want each in key order", keys, digests)
	}
}
