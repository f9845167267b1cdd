package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/crawlcheck/verifier/internal/issuer/tlog"
)

// The pilot's state (docs/issuer.md, "The pilot"): each pilot with its
// token's hash and heads, the records it uploaded by (pilot, record_sha256)
// with their order, and the corrections by digest and (target, version).
// Rows are only added, except a pilot's heads, which move forward under a
// compare-and-set so that two uploads of one pilot never both extend the
// same head.

func (s *sqlStore) CreatePilot(ctx context.Context, p Pilot) error {
	res, err := s.db.ExecContext(ctx, s.q(`INSERT INTO pilots (id, token_sha256, created_at, head, logged_head, records, record_key) VALUES (?, ?, ?, '', '', 0, ?) ON CONFLICT DO NOTHING`),
		p.ID, p.TokenSHA256, micros(p.CreatedAt), p.RecordKey)
	if err != nil {
		return fmt.Errorf("store: create pilot: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("store: create pilot %s: %w", p.ID, ErrConflict)
	}
	return nil
}

func (s *sqlStore) GetPilot(ctx context.Context, id string) (Pilot, error) {
	p := Pilot{ID: id}
	var created int64
	err := s.db.QueryRowContext(ctx, s.q(`SELECT token_sha256, created_at, head, logged_head, records, bytes, record_key FROM pilots WHERE id = ?`), id).
		Scan(&p.TokenSHA256, &created, &p.Head, &p.LoggedHead, &p.Records, &p.Bytes, &p.RecordKey)
	if errors.Is(err, sql.ErrNoRows) {
		return Pilot{}, ErrNotFound
	}
	if err != nil {
		return Pilot{}, fmt.Errorf("store: get pilot: %w", err)
	}
	p.CreatedAt = fromMicros(created)
	return p, nil
}

// maxLookup bounds the digests one query names (SQLite's and PostgreSQL's
// parameter limits are far above it).
const maxLookup = 500

func (s *sqlStore) PilotHolds(ctx context.Context, id string, digests []string) (map[string]bool, error) {
	held := map[string]bool{}
	for len(digests) > 0 {
		n := min(len(digests), maxLookup)
		part := digests[:n]
		digests = digests[n:]
		args := []any{id}
		for _, d := range part {
			args = append(args, d)
		}
		rows, err := s.db.QueryContext(ctx, s.q(`SELECT record_sha256 FROM pilot_records WHERE pilot_id = ? AND record_sha256 IN (?`+strings.Repeat(", ?", n-1)+`)`), args...)
		if err != nil {
			return nil, fmt.Errorf("store: pilot records: %w", err)
		}
		for rows.Next() {
			var d string
			if err := rows.Scan(&d); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: pilot records: %w", err)
			}
			held[d] = true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("store: pilot records: %w", err)
		}
	}
	return held, nil
}

func (s *sqlStore) AcceptPilotRecords(ctx context.Context, id, head, newHead string, records []PilotRecord) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: accept pilot records: %w", err)
	}
	defer tx.Rollback()
	var count, size int64
	for _, r := range records {
		size += int64(len(r.Body))
	}
	err = tx.QueryRowContext(ctx, s.q(`UPDATE pilots SET head = ?, records = records + ?, bytes = bytes + ? WHERE id = ? AND head = ? RETURNING records`),
		newHead, len(records), size, id, head).Scan(&count)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("store: pilot %s: its head is no longer %q: %w", id, head, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: accept pilot records: %w", err)
	}
	seq := count - int64(len(records))
	for i, r := range records {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO pilot_records (pilot_id, record_sha256, seq, received_at, body) VALUES (?, ?, ?, ?, ?)`),
			id, r.SHA256, seq+int64(i), micros(r.ReceivedAt), r.Body); err != nil {
			return fmt.Errorf("store: accept pilot record %s: %w", r.SHA256, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: accept pilot records: commit: %w", err)
	}
	return nil
}

func (s *sqlStore) SetPilotLogged(ctx context.Context, id, loggedHead string) error {
	if _, err := s.db.ExecContext(ctx, s.q(`UPDATE pilots SET logged_head = ? WHERE id = ? AND head = ?`), loggedHead, id, loggedHead); err != nil {
		return fmt.Errorf("store: pilot %s logged: %w", id, err)
	}
	return nil
}

func (s *sqlStore) HoldsRecord(ctx context.Context, sha256 string) (bool, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM pilot_records WHERE record_sha256 = ?`), sha256).Scan(&n); err != nil {
		return false, fmt.Errorf("store: pilot record %s: %w", sha256, err)
	}
	return n > 0, nil
}

func (s *sqlStore) AddCorrection(ctx context.Context, c Correction, entry []byte, sign func(size uint64, root tlog.Hash) (string, error)) (uint64, string, error) {
	return s.addLogged(ctx, "correction", fmt.Sprintf("correction %d of %s", c.Version, c.Target), entry, sign,
		`INSERT INTO corrections (sha256, target, version, issued_at, body) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		c.SHA256, c.Target, c.Version, micros(c.IssuedAt), c.Body)
}

// addLogged inserts one row (insert, an INSERT ... ON CONFLICT DO NOTHING,
// with args) and, when entry is not nil, appends entry to the log, in one
// transaction: the row and its log entry are kept together or not at all.
// A row that inserted nothing is ErrConflict, named by conflict; every
// other error names what. It answers the entry's index and the checkpoint
// the log was signed at.
func (s *sqlStore) addLogged(ctx context.Context, what, conflict string, entry []byte, sign func(size uint64, root tlog.Hash) (string, error), insert string, args ...any) (uint64, string, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, "", fmt.Errorf("store: add %s: %w", what, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, s.q(insert), args...)
	if err != nil {
		return 0, "", fmt.Errorf("store: add %s: %w", what, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return 0, "", fmt.Errorf("store: %s: %w", conflict, ErrConflict)
	}
	var first uint64
	var note string
	if entry != nil {
		if first, note, _, err = s.logAppendTx(ctx, tx, [][]byte{entry}, sign); err != nil {
			return 0, "", err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, "", fmt.Errorf("store: add %s: commit: %w", what, err)
	}
	return first, note, nil
}

func (s *sqlStore) Corrections(ctx context.Context, target string) ([]Correction, error) {
	return s.corrections(ctx, `SELECT sha256, target, version, issued_at, body FROM corrections WHERE target = ? ORDER BY version`, target)
}

func (s *sqlStore) AllCorrections(ctx context.Context) ([]Correction, error) {
	return s.corrections(ctx, `SELECT sha256, target, version, issued_at, body FROM corrections ORDER BY target, version`)
}

func (s *sqlStore) AddResigning(ctx context.Context, r Resigning, entry []byte, sign func(size uint64, root tlog.Hash) (string, error)) (uint64, string, error) {
	return s.addLogged(ctx, "re-signing", fmt.Sprintf("re-signing of %s by %s", r.Original, r.KeyID), entry, sign,
		`INSERT INTO correction_resignings (sha256, original, key_id, signed_at, body) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		r.SHA256, r.Original, r.KeyID, micros(r.SignedAt), r.Body)
}

func (s *sqlStore) Resignings(ctx context.Context, original string) ([]Resigning, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT sha256, key_id, signed_at, body FROM correction_resignings WHERE original = ? ORDER BY signed_at, sha256`), original)
	if err != nil {
		return nil, fmt.Errorf("store: re-signings: %w", err)
	}
	defer rows.Close()
	var out []Resigning
	for rows.Next() {
		r := Resigning{Original: original}
		var at int64
		if err := rows.Scan(&r.SHA256, &r.KeyID, &at, &r.Body); err != nil {
			return nil, fmt.Errorf("store: re-signings: %w", err)
		}
		r.SignedAt = fromMicros(at)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: re-signings: %w", err)
	}
	return out, nil
}

func (s *sqlStore) corrections(ctx context.Context, query string, args ...any) ([]Correction, error) {
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, fmt.Errorf("store: corrections: %w", err)
	}
	defer rows.Close()
	var out []Correction
	for rows.Next() {
		var c Correction
		var issued int64
		if err := rows.Scan(&c.SHA256, &c.Target, &c.Version, &issued, &c.Body); err != nil {
			return nil, fmt.Errorf("store: corrections: %w", err)
		}
		c.IssuedAt = fromMicros(issued)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: corrections: %w", err)
	}
	return out, nil
}
