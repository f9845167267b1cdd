package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	_ "modernc.org/sqlite" // the cgo-free SQLite driver, "sqlite"
)

// OpenSQLite opens (creating it if need be) the SQLite database in file, in
// WAL mode: readers never wait for the writer. synchronous=FULL syncs the
// WAL at every commit, so a transaction acknowledged (a nonce, a receipt, a
// log entry a client was answered with) survives a power loss; NORMAL would
// save that sync and could lose the last commits, which an issuer must not
// (docs/decisions.md). wal_autocheckpoint(10000) lets the WAL grow to about
// 40 MB before it is copied back: the pages every batch rewrites (the
// indexes, the log's tail) are then copied once per ten thousand pages
// instead of once per thousand, which was a tenth of a check's CPU
// (docs/benchmarks.md). Another process on the same file waits on the busy
// timeout instead of failing.
func OpenSQLite(ctx context.Context, file string) (Store, error) {
	if file == "" {
		return nil, fmt.Errorf("store: sqlite: no file named")
	}
	v := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "busy_timeout(10000)", "synchronous(FULL)", "foreign_keys(ON)", "wal_autocheckpoint(10000)"} {
		v.Add("_pragma", p)
	}
	v.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+file+"?"+v.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: sqlite %s: %w", file, err)
	}
	// One connection: SQLite has one writer at a time anyway, and
	// database/sql queues callers in order where connections contending for
	// the write lock would each sleep in the busy handler, the unlucky ones
	// past any deadline.
	db.SetMaxOpenConns(1)
	s := &sqlStore{db: db, dialect: "sqlite"}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: sqlite %s: %w", file, err)
	}
	return s, nil
}
