package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the cgo-free SQLite driver, "sqlite"
)

// OpenSQLite opens (creating it if need be) the SQLite database in file, in
// WAL mode: readers never wait for the writer. synchronous=FULL syncs the
// WAL at every commit, so a transaction acknowledged (a nonce, a receipt, a
// log entry a client was answered with) survives a power loss; NORMAL would
// save that sync and could lose the last commits, which an issuer must not
// (docs/decisions.md). The WAL is copied back into the database by a
// checkpointer beside the writer (checkpointer, below); wal_autocheckpoint(10000)
// is what lets the WAL wrap: past about 40 MB the writer, after a commit,
// copies back what the checkpointer has not yet, and the next transaction
// starts the WAL over (that step held a commit 110-160 ms under make load
// while each check wrote its whole receipt; with a receipt's inputs stored
// once, no commit took over 50 ms, docs/decisions.md). Another process on
// the same file waits on the busy timeout instead of failing.
func OpenSQLite(ctx context.Context, file string) (Store, error) {
	if file == "" {
		return nil, fmt.Errorf("store: sqlite: no file named")
	}
	v := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "busy_timeout(10000)", "synchronous(FULL)", "foreign_keys(ON)", "wal_autocheckpoint(10000)"} {
		v.Add("_pragma", p)
	}
	v.Set("_txlock", "immediate")
	dsn := "file:" + file + "?" + v.Encode()
	db, err := sql.Open("sqlite", dsn)
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
	ck, err := sql.Open("sqlite", dsn)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: sqlite %s: checkpointer: %w", file, err)
	}
	ck.SetMaxOpenConns(1)
	s.ckpt = startCheckpointer(ck)
	return s, nil
}

// checkpointer copies the WAL back into the database on a connection of its
// own while the writer goes on committing. Done by the writer, as SQLite
// does by default, a checkpoint of 10,000 pages took 150 to 190 ms inside
// one commit, every few seconds under make load, and every request queued
// behind it waited as long (the p99); with the copying in the commits, the
// one goroutine that commits (service/commit.go) was the bound of the
// whole service at a third of the machine idle (docs/benchmarks.md). A
// PASSIVE checkpoint takes no lock a writer waits for, and changes nothing
// of what a commit made durable: the WAL was synced at the commit, and the
// checkpoint syncs the database before the WAL can be started over.
type checkpointer struct {
	db   *sql.DB
	wake chan struct{} // a commit happened; buffered, one pending is enough
	stop chan struct{}
	done sync.WaitGroup
	once sync.Once // a store may be closed more than once
}

// checkpointEvery spaces the checkpoints: each costs a sync of the
// database file, so under load one copies about a tenth of a second of
// commits (about a thousand pages at 700 checks/s) rather than each.
const checkpointEvery = 100 * time.Millisecond

func startCheckpointer(db *sql.DB) *checkpointer {
	c := &checkpointer{db: db, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	c.done.Add(1)
	go c.run()
	return c
}

func (c *checkpointer) run() {
	defer c.done.Done()
	for {
		select {
		case <-c.stop:
			return
		case <-c.wake:
		}
		// A failure (the file gone, SQLITE_BUSY from the writer's own
		// checkpoint) leaves the WAL to the next wake or to the writer's.
		c.db.Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
		select {
		case <-c.stop:
			return
		case <-time.After(checkpointEvery):
		}
	}
}

// committed tells the checkpointer the WAL grew.
func (c *checkpointer) committed() {
	if c == nil {
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *checkpointer) close() error {
	if c == nil {
		return nil
	}
	c.once.Do(func() {
		close(c.stop)
		c.done.Wait()
	})
	return c.db.Close()
}
