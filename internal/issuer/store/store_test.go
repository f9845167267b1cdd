package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/crawlcheck/verifier/internal/issuer/store"
	"github.com/crawlcheck/verifier/internal/issuer/store/pgtest"
	"github.com/crawlcheck/verifier/internal/issuer/store/storetest"
)

func TestSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (store.Store, func() store.Store) {
		spec := "sqlite:" + filepath.Join(t.TempDir(), "issuer.db")
		return openT(t, spec), func() store.Store { return openT(t, spec) }
	})
}

func TestPostgres(t *testing.T) {
	pg := pgtest.Run(t)
	var n atomic.Int32
	storetest.Run(t, func(t *testing.T) (store.Store, func() store.Store) {
		dsn, err := pg.CreateDB(fmt.Sprint("suite", n.Add(1)))
		if err != nil {
			t.Fatal(err)
		}
		return openT(t, dsn), func() store.Store { return openT(t, dsn) }
	})
}

func TestOpenRefusesUnknownSpec(t *testing.T) {
	if _, err := store.Open(context.Background(), "mysql://x"); err == nil {
		t.Fatal("a store spec of no known backend was accepted")
	}
}

func openT(t *testing.T, spec string) store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
