package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/crawlcheck/verifier/core/merkle"
	"github.com/crawlcheck/verifier/internal/issuer/tlog"
)

// The transparency log's state (internal/issuer/tlog, docs/log.md): its
// entries by index, the hash of every complete subtree by (level, index),
// and every checkpoint by size. Rows are only ever added.

// logLock is the sequencer: the advisory transaction lock every append
// takes on PostgreSQL, so that appends from any number of instances are one
// sequence (SQLite: BEGIN IMMEDIATE's write lock does the same).
const logLock = `SELECT pg_advisory_xact_lock(7263520542)`

// LogOf is a store's log state (tlog.Store), or false when the store keeps
// none.
func LogOf(s Store) (tlog.Store, bool) {
	l, ok := s.(*sqlStore)
	return l, ok
}

// Hash reads the stored node (level, index), from memory when it is one
// of the frontier the store's last append started from (logMemo.node).
func (s *sqlStore) Hash(ctx context.Context, level int, index uint64) (tlog.Hash, error) {
	if h, ok := s.logMemo.node(level, index); ok {
		return h, nil
	}
	return s.hashIn(ctx, s.db, level, index)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *sqlStore) hashIn(ctx context.Context, q querier, level int, index uint64) (tlog.Hash, error) {
	var h tlog.Hash
	var b []byte
	err := q.QueryRowContext(ctx, s.q(`SELECT hash FROM log_hashes WHERE level = ? AND idx = ?`), level, int64(index)).Scan(&b)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return h, fmt.Errorf("store: log node %d/%d: %w", level, index, ErrNotFound)
	case err != nil:
		return h, fmt.Errorf("store: log node %d/%d: %w", level, index, err)
	case len(b) != len(h):
		return h, fmt.Errorf("store: log node %d/%d is %d bytes", level, index, len(b))
	}
	copy(h[:], b)
	return h, nil
}

// LogAppend is one sequenced append (tlog.Store): everything in one
// transaction under the sequencer lock, so a step that dies before its
// commit leaves the log as it was and no entry is acknowledged that the log
// does not hold.
func (s *sqlStore) LogAppend(ctx context.Context, entries [][]byte, sign func(size uint64, root tlog.Hash) (string, error)) (uint64, string, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, "", fmt.Errorf("store: log append: %w", err)
	}
	defer tx.Rollback()
	first, note, next, err := s.logAppendTx(ctx, tx, entries, sign)
	if err != nil {
		return 0, "", err
	}
	if err := tx.Commit(); err != nil {
		return 0, "", fmt.Errorf("store: log append: commit: %w", err)
	}
	s.logMemo.committed(s.dialect, next)
	return first, note, nil
}

// logAppendTx is LogAppend's step inside a transaction the caller commits:
// it takes the sequencer lock, after whatever rows the transaction wrote
// before (store.Issue). It answers the index of the first entry, the
// checkpoint, and the frontier of the new tree, for the caller to hand to
// logMemo.committed once the transaction is committed (LogAppend and Issue
// do; after another, the frontier is read again).
func (s *sqlStore) logAppendTx(ctx context.Context, tx *sql.Tx, entries [][]byte, sign func(size uint64, root tlog.Hash) (string, error)) (uint64, string, tlog.Frontier, error) {
	if s.dialect == "postgres" {
		if _, err := tx.ExecContext(ctx, logLock); err != nil {
			return 0, "", nil, fmt.Errorf("store: log append: sequencer lock: %w", err)
		}
	}
	old, f, err := s.logFrontier(ctx, tx)
	if err != nil {
		return 0, "", nil, fmt.Errorf("store: log append: %w", err)
	}
	s.logMemo.started(f)
	leaves := make([]tlog.Hash, len(entries))
	for i, e := range entries {
		leaves[i] = merkle.LeafHash(e)
	}
	nodes, next := f.Append(leaves)
	note, err := sign(next.Size(), next.Root())
	if err != nil {
		return 0, "", nil, fmt.Errorf("store: log append: %w", err)
	}
	if err := s.logInsert(ctx, tx, old, entries, nodes, next.Size(), note); err != nil {
		return 0, "", nil, fmt.Errorf("store: log append: %w", err)
	}
	return old, note, next, nil
}

// logInsertPostgres writes an append's entries (indexes and bytes), its
// nodes (levels, indexes, hashes) and its checkpoint in one statement, the
// rows as arrays: one round trip under the sequencer lock where three
// multi-row INSERTs took three, and one statement text whatever the batch,
// where each count of rows was another statement for pgx to prepare.
const logInsertPostgres = `WITH
	entries AS (INSERT INTO log_entries (idx, entry) SELECT * FROM unnest($1::bigint[], $2::bytea[])),
	nodes AS (INSERT INTO log_hashes (level, idx, hash) SELECT * FROM unnest($3::integer[], $4::bigint[], $5::bytea[]))
INSERT INTO log_checkpoints (size, note) VALUES ($6, $7)`

// logInsert writes an append's entries from index old, its nodes and the
// checkpoint of its tree of size entries.
func (s *sqlStore) logInsert(ctx context.Context, tx *sql.Tx, old uint64, entries [][]byte, nodes []tlog.Node, size uint64, note string) error {
	if s.dialect == "postgres" {
		idx := make([]int64, len(entries))
		for i := range entries {
			idx[i] = int64(old) + int64(i)
		}
		levels, nidx, hashes := make([]int32, len(nodes)), make([]int64, len(nodes)), make([][]byte, len(nodes))
		for i, n := range nodes {
			levels[i], nidx[i], hashes[i] = int32(n.Level), int64(n.Index), n.Hash[:]
		}
		if _, err := tx.ExecContext(ctx, logInsertPostgres, idx, entries, levels, nidx, hashes, int64(size), []byte(note)); err != nil {
			return fmt.Errorf("entries, nodes and checkpoint: %w", err)
		}
		return nil
	}
	rows := make([][]any, len(entries))
	for i, e := range entries {
		rows[i] = []any{int64(old) + int64(i), e}
	}
	if _, err := s.insertRows(ctx, tx, `INSERT INTO log_entries (idx, entry) VALUES (?, ?)`, rows); err != nil {
		return fmt.Errorf("entries: %w", err)
	}
	rows = rows[:0]
	for _, n := range nodes {
		rows = append(rows, []any{n.Level, int64(n.Index), n.Hash[:]})
	}
	if _, err := s.insertRows(ctx, tx, `INSERT INTO log_hashes (level, idx, hash) VALUES (?, ?, ?)`, rows); err != nil {
		return fmt.Errorf("nodes: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO log_checkpoints (size, note) VALUES (?, ?)`, int64(size), []byte(note)); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// frontierQuery reads the log's size n and its frontier
// (tlog.FrontierNodes) in one statement: a row (n, k, hash) for each set bit
// k of n, the hash of node (k, n>>k - 1) or NULL when it is not stored; no
// row for an empty log. The size is the next index (entries are 0, 1, 2, …
// by construction): a look-up of the primary key's end, where COUNT(*)
// would read every row. Each node is a look-up of log_hashes' primary key,
// where tlog.NewNodes and tlog.Root read them one query at a time (on
// PostgreSQL a round trip each, under the sequencer lock every instance
// waits on). A subquery per node, not a join: PostgreSQL planned the join,
// prepared while the table was small, as a scan of every node of a level.
const frontierQuery = `WITH RECURSIVE bits(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM bits WHERE k < 62)
SELECT n, k, (SELECT hash FROM log_hashes WHERE level = k AND idx = (n >> k) - 1)
FROM (SELECT COALESCE(MAX(idx) + 1, 0) AS n FROM log_entries) AS size, bits
WHERE (n >> k) & 1 = 1
ORDER BY k DESC`

// logFrontier reads the log's size and frontier inside the append's
// transaction, after its sequencer lock. On SQLite the frontier this store
// committed last is taken when the log's size is still its size
// (logMemo): there a statement costs CPU, not a round trip, and the
// frontier query takes about 0.13 ms of it where the size takes 0.04.
func (s *sqlStore) logFrontier(ctx context.Context, tx *sql.Tx) (uint64, tlog.Frontier, error) {
	if s.dialect == "sqlite" {
		var size int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(idx) + 1, 0) FROM log_entries`).Scan(&size); err != nil {
			return 0, nil, fmt.Errorf("size: %w", err)
		}
		if f, ok := s.logMemo.at(uint64(size)); ok {
			return uint64(size), f, nil
		}
	}
	rows, err := tx.QueryContext(ctx, frontierQuery)
	if err != nil {
		return 0, nil, fmt.Errorf("size and frontier: %w", err)
	}
	defer rows.Close()
	var size int64
	var f tlog.Frontier
	for rows.Next() {
		var level int
		var hash []byte
		if err := rows.Scan(&size, &level, &hash); err != nil {
			return 0, nil, fmt.Errorf("size and frontier: %w", err)
		}
		n := tlog.Node{Level: level, Index: uint64(size)>>level - 1}
		switch {
		case hash == nil:
			return 0, nil, fmt.Errorf("log node %d/%d of a log of %d: %w", n.Level, n.Index, size, ErrNotFound)
		case len(hash) != len(n.Hash):
			return 0, nil, fmt.Errorf("log node %d/%d is %d bytes", n.Level, n.Index, len(hash))
		}
		copy(n.Hash[:], hash)
		f = append(f, n)
	}
	if err := rows.Err(); err != nil {
		return 0, nil, fmt.Errorf("size and frontier: %w", err)
	}
	want := tlog.FrontierNodes(uint64(size))
	for i := range max(len(f), len(want)) {
		if i >= len(f) || i >= len(want) || f[i].Level != want[i].Level {
			return 0, nil, fmt.Errorf("the frontier of a log of %d read as %d nodes", size, len(f))
		}
	}
	return uint64(size), f, nil
}

// logMemo is what the store remembers of the log's frontier.
//
// f is the frontier as this store's last committed append left it (SQLite
// only: logFrontier). It is the frontier of the log whenever the log has
// its size: the tree only grows, one append at a time under the sequencer,
// and a node once committed is never rewritten, so a log of that size is
// the tree this store wrote. Another writer on the same database (another
// process) changes the size, and the frontier is read again. It is kept
// only after the commit: an append that rolled back leaves it as it was.
//
// read is the frontier the store's last append started from (both
// backends), committed nodes read under the lock. The proofs of that
// append's entries need exactly those beside the nodes it wrote (every
// left sibling on an entry's path is one of them), and the issuer asks
// them of Hash after the commit (tlog.Log.Appended, ProofFor): with
// another instance appending in between, they were a query each.
type logMemo struct {
	mu   sync.Mutex
	f    tlog.Frontier
	read tlog.Frontier
}

// at is the kept frontier if it is that of a log of size entries.
func (m *logMemo) at(size uint64) (tlog.Frontier, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.f, size > 0 && m.f.Size() == size
}

// committed keeps the frontier of a committed append (SQLite: PostgreSQL
// reads it with the size in one round trip, and never asks).
func (m *logMemo) committed(dialect string, f tlog.Frontier) {
	if dialect != "sqlite" || len(f) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.f = f
}

// started keeps the frontier an append starts from.
func (m *logMemo) started(f tlog.Frontier) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read = f
}

// node is the hash of node (level, index) if it is one of read's.
func (m *logMemo) node(level int, index uint64) (tlog.Hash, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, n := range m.read {
		if n.Level == level && n.Index == index {
			return n.Hash, true
		}
	}
	return tlog.Hash{}, false
}

// LogCheckpoint is the checkpoint of the largest tree ("" for none).
func (s *sqlStore) LogCheckpoint(ctx context.Context) (string, error) {
	var note []byte
	err := s.db.QueryRowContext(ctx, `SELECT note FROM log_checkpoints ORDER BY size DESC LIMIT 1`).Scan(&note)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: log checkpoint: %w", err)
	}
	return string(note), nil
}

// LogEntries reads count entries from index from, in order.
func (s *sqlStore) LogEntries(ctx context.Context, from, count uint64) ([][]byte, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT idx, entry FROM log_entries WHERE idx >= ? AND idx < ? ORDER BY idx`), int64(from), int64(from+count))
	if err != nil {
		return nil, fmt.Errorf("store: log entries: %w", err)
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var idx int64
		var e []byte
		if err := rows.Scan(&idx, &e); err != nil {
			return nil, fmt.Errorf("store: log entries: %w", err)
		}
		if uint64(idx) != from+uint64(len(out)) {
			return nil, fmt.Errorf("store: log entries: entry %d is missing", from+uint64(len(out)))
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: log entries: %w", err)
	}
	if uint64(len(out)) != count {
		return nil, fmt.Errorf("store: log entries: %d of %d from %d", len(out), count, from)
	}
	return out, nil
}
