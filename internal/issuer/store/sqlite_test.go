package store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/store"
	"github.com/crawlcheck/verifier/internal/issuer/tlog"
)

// TestSQLiteCheckpointsBesideTheWriter: what a batch commits reaches the
// database file without the writer checkpointing (its threshold is 10,000
// pages, far above one batch), so the copying is off the commit path.
func TestSQLiteCheckpointsBesideTheWriter(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "issuer.db")
	s := openT(t, "sqlite:"+file)
	before := fileSize(t, file)
	body := bytes.Repeat([]byte("receipt "), 64<<10) // 512 KB: 128 pages
	sum := sha256.Sum256(body)
	it := store.Issuance{Nonce: "n1", NonceExpires: time.Now().Add(time.Hour),
		Document: store.Document{SHA256: hex.EncodeToString(sum[:]), Kind: "crawlcheck-mcp-lock-check", KeyID: "k", IssuedAt: time.Now(), Body: body}}
	noLog := func(uint64, tlog.Hash) (string, error) { t.Fatal("no log entry was given"); return "", nil }
	if _, _, err := s.Issue(ctx, []store.Issuance{it}, noLog); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); fileSize(t, file) < before+int64(len(body)); {
		if time.Now().After(deadline) {
			t.Fatalf("the database file is %d bytes 5 s after a commit of %d (was %d): the WAL was not copied back", fileSize(t, file), len(body), before)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func fileSize(t *testing.T, file string) int64 {
	t.Helper()
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
