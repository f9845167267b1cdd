package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/tlog"
)

// sqlStore is both backends: the same statements through database/sql,
// written with ? and rebound to $n for PostgreSQL. What differs (the DSN,
// column types, how migrations are serialized between instances) is in
// sqlite.go and postgres.go.
type sqlStore struct {
	db      *sql.DB
	dialect string // "sqlite" or "postgres"
	// lock serializes migrations between instances inside the transaction
	// (PostgreSQL: an advisory lock; SQLite: the write lock BEGIN IMMEDIATE takes).
	lock string
	// ckpt copies SQLite's WAL back beside the writer (sqlite.go); nil on PostgreSQL.
	ckpt *checkpointer
	// digests of documents' shared parts seen lately (parts.go).
	digests partDigests
	// the log's frontier as this store's last append left it (log.go).
	logMemo logMemo
}

func (s *sqlStore) q(query string) string {
	if s.dialect != "postgres" {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// migrate applies every migration not yet applied, each in its own
// transaction with the version row, so a crash leaves the schema at a
// version boundary.
func (s *sqlStore) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("store: migrations table: %w", err)
	}
	for _, m := range migrations {
		if err := s.apply(ctx, m); err != nil {
			return fmt.Errorf("store: migration %d: %w", m.version, err)
		}
	}
	v, err := s.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if v > latestVersion() {
		return fmt.Errorf("%w (database at version %d, this service knows %d)", ErrSchemaTooNew, v, latestVersion())
	}
	return nil
}

func (s *sqlStore) apply(ctx context.Context, m migration) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if s.lock != "" {
		if _, err := tx.ExecContext(ctx, s.lock); err != nil {
			return err
		}
	}
	var n int
	if err := tx.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM schema_migrations WHERE version = ?`), m.version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	steps := m.sqlite
	if s.dialect == "postgres" {
		steps = m.postgres
	}
	for _, st := range steps {
		if _, err := tx.ExecContext(ctx, st); err != nil {
			return fmt.Errorf("%s: %w", strings.Fields(st)[:3], err)
		}
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`), m.version, micros(time.Now())); err != nil {
		return err
	}
	return tx.Commit()
}

func (s *sqlStore) SchemaVersion(ctx context.Context) (int, error) {
	var v sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("store: schema version: %w", err)
	}
	return int(v.Int64), nil
}

func (s *sqlStore) IssueNonce(ctx context.Context, nonce string, expires time.Time) error {
	res, err := s.db.ExecContext(ctx, s.q(`INSERT INTO nonces (nonce, expires_at) VALUES (?, ?) ON CONFLICT DO NOTHING`), nonce, micros(expires))
	if err != nil {
		return fmt.Errorf("store: issue nonce: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: issue nonce: %w", err)
	}
	if n == 0 {
		return ErrNonceReused
	}
	return nil
}

func (s *sqlStore) NonceIssued(ctx context.Context, nonce string) (bool, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM nonces WHERE nonce = ?`), nonce).Scan(&n); err != nil {
		return false, fmt.Errorf("store: nonce: %w", err)
	}
	return n > 0, nil
}

func (s *sqlStore) PruneNonces(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.q(`DELETE FROM nonces WHERE expires_at < ?`), micros(before))
	if err != nil {
		return 0, fmt.Errorf("store: prune nonces: %w", err)
	}
	return res.RowsAffected()
}

func (s *sqlStore) CountNonces(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM nonces`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count nonces: %w", err)
	}
	return n, nil
}

func (s *sqlStore) PutDocument(ctx context.Context, d Document) error {
	rows, partRows, err := s.documentRows([]Document{d})
	if err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: put %s %s: %w", d.Kind, d.SHA256, err)
	}
	defer tx.Rollback()
	if _, err := s.insertRows(ctx, tx, insertPart, partRows); err != nil {
		return fmt.Errorf("store: put %s %s: its parts: %w", d.Kind, d.SHA256, err)
	}
	if _, err := s.insertRows(ctx, tx, insertDocument, rows); err != nil {
		return fmt.Errorf("store: put %s %s: %w", d.Kind, d.SHA256, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: put %s %s: commit: %w", d.Kind, d.SHA256, err)
	}
	return nil
}

func (s *sqlStore) Issue(ctx context.Context, items []Issuance, sign func(size uint64, root tlog.Hash) (string, error)) (uint64, string, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, "", fmt.Errorf("store: issue: %w", err)
	}
	defer tx.Rollback()
	// On PostgreSQL the log's sequencer lock, which every instance sharing
	// the database waits on, is taken only for the log's rows (in
	// logAppendTx), after this batch's nonces, parts and documents: held
	// from the start it made every instance wait for the others' inserts
	// too. The rows go in the order of their keys, so two batches holding
	// the same document or part (the same lockfile signed by two
	// instances) wait for each other in one order and never in a cycle; a
	// transaction holding the lock writes only the log's rows, which no
	// transaction writes without it.
	var nonces [][]any
	var entries [][]byte
	docs := make([]Document, len(items))
	for i, it := range items {
		if it.Nonce != "" {
			nonces = append(nonces, []any{it.Nonce, micros(it.NonceExpires)})
		}
		docs[i] = it.Document
		if it.LogEntry != nil {
			entries = append(entries, it.LogEntry)
		}
	}
	slices.SortFunc(nonces, func(a, b []any) int { return strings.Compare(a[0].(string), b[0].(string)) })
	n, err := s.insertRows(ctx, tx, `INSERT INTO nonces (nonce, expires_at) VALUES (?, ?) ON CONFLICT DO NOTHING`, nonces)
	if err != nil {
		return 0, "", fmt.Errorf("store: issue nonce: %w", err)
	}
	if n != int64(len(nonces)) {
		return 0, "", ErrNonceReused
	}
	docRows, partRows, err := s.documentRows(docs)
	if err != nil {
		return 0, "", fmt.Errorf("store: issue: %w", err)
	}
	if _, err := s.insertRows(ctx, tx, insertPart, partRows); err != nil {
		return 0, "", fmt.Errorf("store: issue: put documents' parts: %w", err)
	}
	if _, err := s.insertRows(ctx, tx, insertDocument, docRows); err != nil {
		return 0, "", fmt.Errorf("store: issue: put documents: %w", err)
	}
	var first uint64
	var note string
	var next tlog.Frontier
	if len(entries) > 0 {
		if first, note, next, err = s.logAppendTx(ctx, tx, entries, sign); err != nil {
			return 0, "", err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, "", fmt.Errorf("store: issue: commit: %w", err)
	}
	s.logMemo.committed(s.dialect, next)
	s.ckpt.committed()
	return first, note, nil
}

// insertRows runs query, an INSERT of one VALUES group, for each of rows
// (a batch's nonces and documents, its log entries and nodes) and answers
// how many rows it inserted. On SQLite one statement is prepared and run
// per row: the driver compiles the SQL of every ExecContext again, which
// was most of a batch's time outside its commit. On PostgreSQL one
// statement carries up to rowsPerStatement groups: each row on its own
// was a round trip, and the rows are written under the log's sequencer
// lock, which every instance sharing the database waits on.
func (s *sqlStore) insertRows(ctx context.Context, tx *sql.Tx, query string, rows [][]any) (int64, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	if s.dialect != "postgres" {
		st, err := tx.PrepareContext(ctx, query)
		if err != nil {
			return 0, fmt.Errorf("prepare: %w", err)
		}
		defer st.Close()
		var n rowCount
		for _, r := range rows {
			if err := n.add(st.ExecContext(ctx, r...)); err != nil {
				return int64(n), err
			}
		}
		return int64(n), nil
	}
	i := strings.Index(query, "VALUES (")
	j := strings.Index(query[i:], ")")
	head, group, tail := query[:i+len("VALUES ")], query[i+len("VALUES "):i+j+1], query[i+j+1:]
	var n rowCount
	for len(rows) > 0 {
		chunk := rows[:min(len(rows), rowsPerStatement)]
		rows = rows[len(chunk):]
		var b strings.Builder
		b.WriteString(head)
		args := make([]any, 0, len(chunk)*len(chunk[0]))
		for k, r := range chunk {
			if k > 0 {
				b.WriteString(", ")
			}
			b.WriteString(group)
			args = append(args, r...)
		}
		b.WriteString(tail)
		if err := n.add(tx.ExecContext(ctx, s.q(b.String()), args...)); err != nil {
			return int64(n), err
		}
	}
	return int64(n), nil
}

// rowCount adds up the rows a batch's statements affected.
type rowCount int64

// add counts the rows one statement affected, or passes its error on.
func (n *rowCount) add(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	k, err := res.RowsAffected()
	if err != nil {
		return err
	}
	*n += rowCount(k)
	return nil
}

// rowsPerStatement bounds one multi-row INSERT on PostgreSQL, well under its
// 65,535 parameters at eight a row.
const rowsPerStatement = 1000

func (s *sqlStore) GetDocument(ctx context.Context, sha256 string) (Document, error) {
	d := Document{SHA256: sha256}
	var issued int64
	var refs string
	err := s.db.QueryRowContext(ctx, s.q(`SELECT kind, key_id, subject, issued_at, body, parts, principal FROM documents WHERE sha256 = ?`), sha256).
		Scan(&d.Kind, &d.KeyID, &d.Subject, &issued, &d.Body, &refs, &d.Principal)
	if errors.Is(err, sql.ErrNoRows) {
		return Document{}, ErrNotFound
	}
	if err != nil {
		return Document{}, fmt.Errorf("store: get document %s: %w", sha256, err)
	}
	d.IssuedAt = fromMicros(issued)
	if refs != "" {
		d.Body, err = join(sha256, d.Body, refs, func(sha string) (body []byte, err error) {
			err = s.db.QueryRowContext(ctx, s.q(`SELECT body FROM document_parts WHERE sha256 = ?`), sha).Scan(&body)
			if errors.Is(err, sql.ErrNoRows) {
				err = errors.New("not in the store")
			}
			return body, err
		})
		if err != nil {
			return Document{}, err
		}
	}
	return d, nil
}

func (s *sqlStore) PutRules(ctx context.Context, sha256 string, body []byte) error {
	if _, err := s.db.ExecContext(ctx, s.q(`INSERT INTO rules (sha256, body) VALUES (?, ?) ON CONFLICT DO NOTHING`), sha256, body); err != nil {
		return fmt.Errorf("store: put rules %s: %w", sha256, err)
	}
	return nil
}

func (s *sqlStore) GetRules(ctx context.Context, sha256 string) ([]byte, error) {
	var b []byte
	err := s.db.QueryRowContext(ctx, s.q(`SELECT body FROM rules WHERE sha256 = ?`), sha256).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: get rules %s: %w", sha256, err)
	}
	return b, nil
}

func (s *sqlStore) Ping(ctx context.Context) error {
	var one int
	if err := s.db.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	return nil
}

func (s *sqlStore) Close() error { return errors.Join(s.ckpt.close(), s.db.Close()) }
