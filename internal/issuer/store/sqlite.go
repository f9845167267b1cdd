package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	_ "modernc.org/sqlite" // the cgo-free SQLite driver, "sqlite"
)

// OpenSQLite opens (creating it if need be) the SQLite database in file, in
// WAL mode: readers never wait for the writer, and a crash loses at most
// the transactions not yet checkpointed — never a committed nonce, with
// synchronous=FULL. Another process on the same file waits on the busy
// timeout instead of failing.
func OpenSQLite(ctx context.Context, file string) (Store, error) {
	if file == "" {
		return nil, fmt.Errorf("store: sqlite: no file named")
	}
	v := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "busy_timeout(10000)", "synchronous(FULL)", "foreign_keys(ON)"} {
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
