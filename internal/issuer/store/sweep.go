package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// The registry sweep's state (internal/issuer/sweep, docs/issuer.md): the
// endpoints registered to be re-read, each distinct tool surface and each
// distinct text of a server's instructions read once by its digest, and the
// change events between two surfaces, or two instructions, of one endpoint.
// Surfaces, instructions and changes are only ever added; an endpoint's row
// carries its schedule and what was last read.

// SweepEndpoint is one endpoint the sweep re-reads.
type SweepEndpoint struct {
	URL      string
	Owner    string        // who registered it: "operator", or "pilot:<id>" for a pilot's own server
	Interval time.Duration // how often it is re-read (before jitter)
	Added    time.Time
	Next     time.Time // when it is due
	Last     time.Time // when it was last read (zero: never)
	Surface  string    // the digest of the surface last read ("" before the first whole reading)
	// Instructions is the digest of the instructions the last readable
	// handshake gave (the core's instructions_diff sha256; a server that
	// gives none has the digest of null); "" before the first one.
	Instructions string
	Error        string // why the last reading gave no surface ("" when it did)
}

// Kinds of change event (SweepChange.Kind).
const (
	ChangeTools        = "tools"        // the tool surface: the core's diff answer and scan
	ChangeInstructions = "instructions" // the instructions: the core's instructions_diff answer
)

// SweepChange is one change event: the endpoint's surface, or its
// instructions (Kind), went from one digest to another, with what the core
// says changed (canonical JSON: for tools its diff answer and the scan of
// the new text, for instructions its instructions_diff answer).
type SweepChange struct {
	Kind   string // ChangeTools ("" is taken as it) or ChangeInstructions
	URL    string
	SeenAt time.Time
	From   string
	To     string
	Detail []byte
}

// SweepReading is the outcome of one re-read, recorded in one transaction.
type SweepReading struct {
	At   time.Time
	Next time.Time
	// Surface and Body are the digest and bytes of what was read; "" when
	// the reading gave none (Error says why).
	Surface string
	Body    []byte
	Error   string
	// Change, when set, is the change event from the endpoint's previous
	// surface to this one.
	Change *SweepChange
	// Instructions and InstructionsBody are the digest and canonical JSON
	// of the handshake's instructions; "" when the reading had no readable
	// handshake (the endpoint keeps the last). InstructionsChange, when set,
	// is the change event from the endpoint's previous instructions.
	Instructions       string
	InstructionsBody   []byte
	InstructionsChange *SweepChange
}

// SweepStore is the sweep's part of a store.
type SweepStore interface {
	// SweepRegister adds an endpoint, or updates its interval when the same
	// owner registers it again; its schedule and history stay. An endpoint
	// registered by another owner is left as it is: a pilot cannot take
	// over the operator's endpoint, nor one pilot another's. A new endpoint
	// is due at next.
	SweepRegister(ctx context.Context, e SweepEndpoint) error
	// SweepRegisterWithin is SweepRegister for an owner that may have at
	// most limit endpoints: a new endpoint past them is ErrOwnerFull (its
	// own endpoints' intervals may still change), decided in the insert
	// itself, so that registrations at once cannot both pass the count.
	SweepRegisterWithin(ctx context.Context, e SweepEndpoint, limit int) error
	// SweepEndpoints lists the endpoints of an owner ("" all), by URL.
	SweepEndpoints(ctx context.Context, owner string) ([]SweepEndpoint, error)
	// SweepClaim takes up to limit endpoints due at now and moves each one's
	// next time to leaseUntil, so that another instance sharing the
	// database does not read it too; SweepRecord then sets the real next.
	SweepClaim(ctx context.Context, now, leaseUntil time.Time, limit int) ([]SweepEndpoint, error)
	// SweepRenew moves a claim's lease from held (the leaseUntil it was
	// claimed or last renewed with) to until, and answers false, changing
	// nothing, when the endpoint's next time is no longer held: the claim
	// lapsed and another instance took it, or it was recorded. A claim is
	// renewed just before its reading, once its host's slot has come, so a
	// long wait for the host never lets two instances read it.
	SweepRenew(ctx context.Context, url string, held, until time.Time) (bool, error)
	// SweepHostSlot reserves the next reading of host: it answers when the
	// reading may start (now, or gap after the last slot reserved, whichever
	// is later) and moves the host's next slot gap past it, in one
	// statement, so that the instances sharing the store read one host at
	// least gap apart between them.
	SweepHostSlot(ctx context.Context, host string, now time.Time, gap time.Duration) (time.Time, error)
	// SweepRecord records one reading: the surface (once per digest), the
	// endpoint's last reading and next time, and the change event.
	SweepRecord(ctx context.Context, url string, r SweepReading) error
	// SweepSurface answers a surface's bytes by digest, or ErrNotFound.
	SweepSurface(ctx context.Context, digest string) ([]byte, error)
	// SweepInstructions answers an instructions text (canonical JSON) by
	// digest, or ErrNotFound.
	SweepInstructions(ctx context.Context, digest string) ([]byte, error)
	// SweepChanges lists the change events of url ("" every endpoint's)
	// seen in [from, to), oldest first.
	SweepChanges(ctx context.Context, url string, from, to time.Time) ([]SweepChange, error)
}

// SweepOf is a store's sweep state, or false when the store keeps none.
func SweepOf(s Store) (SweepStore, bool) {
	l, ok := s.(*sqlStore)
	return l, ok
}

func (s *sqlStore) SweepRegister(ctx context.Context, e SweepEndpoint) error {
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO sweep_endpoints (url, owner, interval_us, added_at, next_at, last_at, surface, error)
		VALUES (?, ?, ?, ?, ?, 0, '', '') ON CONFLICT (url) DO UPDATE SET interval_us = excluded.interval_us WHERE sweep_endpoints.owner = excluded.owner`),
		e.URL, e.Owner, e.Interval.Microseconds(), micros(e.Added), micros(e.Next))
	if err != nil {
		return fmt.Errorf("store: register %s for the sweep: %w", e.URL, err)
	}
	return nil
}

// SweepRegisterWithin inserts only while the owner holds fewer than limit
// endpoints or already holds this one, in one statement (the count and the
// insert together). On SQLite a statement that writes holds the database's
// one write lock for its whole length, so two cannot both count 19. On
// PostgreSQL, under read committed, two statements may each count before
// the other's insert commits: the statement runs in a transaction holding
// a lock of the owner's (an advisory lock on the owner's name) taken
// before it, so the second counts after the first commits.
func (s *sqlStore) SweepRegisterWithin(ctx context.Context, e SweepEndpoint, limit int) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: register %s for the sweep: %w", e.URL, err)
	}
	defer tx.Rollback()
	if s.dialect == "postgres" {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 37))`, "sweep_endpoints owner "+e.Owner); err != nil {
			return fmt.Errorf("store: register %s for the sweep: %w", e.URL, err)
		}
	}
	res, err := tx.ExecContext(ctx, s.q(`INSERT INTO sweep_endpoints (url, owner, interval_us, added_at, next_at, last_at, surface, error)
		SELECT ?, ?, ?, ?, ?, 0, '', ''
		WHERE (SELECT count(*) FROM sweep_endpoints WHERE owner = ?) < ? OR EXISTS (SELECT 1 FROM sweep_endpoints WHERE url = ? AND owner = ?)
		ON CONFLICT (url) DO UPDATE SET interval_us = excluded.interval_us WHERE sweep_endpoints.owner = excluded.owner`),
		e.URL, e.Owner, e.Interval.Microseconds(), micros(e.Added), micros(e.Next), e.Owner, limit, e.URL, e.Owner)
	if err != nil {
		return fmt.Errorf("store: register %s for the sweep: %w", e.URL, err)
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		if err == nil {
			err = tx.Commit()
		}
		if err != nil {
			return fmt.Errorf("store: register %s for the sweep: %w", e.URL, err)
		}
		return nil
	}
	// Nothing written: the owner is full, or the endpoint is another
	// owner's, which is left as it is (as SweepRegister leaves it).
	var other int
	if err := tx.QueryRowContext(ctx, s.q(`SELECT count(*) FROM sweep_endpoints WHERE url = ? AND owner <> ?`), e.URL, e.Owner).Scan(&other); err != nil {
		return fmt.Errorf("store: register %s for the sweep: %w", e.URL, err)
	}
	if other > 0 {
		return nil
	}
	return ErrOwnerFull
}

const sweepColumns = `url, owner, interval_us, added_at, next_at, last_at, surface, instructions, error`

func scanEndpoints(rows *sql.Rows) ([]SweepEndpoint, error) {
	defer rows.Close()
	var out []SweepEndpoint
	for rows.Next() {
		var e SweepEndpoint
		var interval, added, next, last int64
		if err := rows.Scan(&e.URL, &e.Owner, &interval, &added, &next, &last, &e.Surface, &e.Instructions, &e.Error); err != nil {
			return nil, err
		}
		e.Interval, e.Added, e.Next = time.Duration(interval)*time.Microsecond, fromMicros(added), fromMicros(next)
		if last != 0 {
			e.Last = fromMicros(last)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func (s *sqlStore) SweepEndpoints(ctx context.Context, owner string) ([]SweepEndpoint, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT `+sweepColumns+` FROM sweep_endpoints WHERE CAST(? AS TEXT) = '' OR owner = ? ORDER BY url`), owner, owner)
	if err != nil {
		return nil, fmt.Errorf("store: sweep endpoints: %w", err)
	}
	es, err := scanEndpoints(rows)
	if err != nil {
		return nil, fmt.Errorf("store: sweep endpoints: %w", err)
	}
	return es, nil
}

func (s *sqlStore) SweepClaim(ctx context.Context, now, leaseUntil time.Time, limit int) ([]SweepEndpoint, error) {
	// A fair claim (issue 37, F6): the operator's due endpoints first, then
	// each owner's in turn (every owner's first due endpoint, then every
	// owner's second, ...), each owner's in the order they fell due. By
	// due time alone, 200 endpoints of 10 free pilots kept the operator's
	// 1-minute endpoint waiting 6.5 minutes.
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT `+sweepColumns+` FROM (SELECT `+sweepColumns+`,
		ROW_NUMBER() OVER (PARTITION BY owner ORDER BY next_at, url) AS turn FROM sweep_endpoints WHERE next_at <= ?) due
		ORDER BY CASE WHEN owner = 'operator' THEN 0 ELSE 1 END, turn, next_at, url LIMIT ?`), micros(now), limit)
	if err != nil {
		return nil, fmt.Errorf("store: sweep due: %w", err)
	}
	due, err := scanEndpoints(rows)
	if err != nil {
		return nil, fmt.Errorf("store: sweep due: %w", err)
	}
	var claimed []SweepEndpoint
	for _, e := range due {
		// Compare and set on next_at: of two instances that saw the same
		// due row, one moves it and the other changes nothing.
		res, err := s.db.ExecContext(ctx, s.q(`UPDATE sweep_endpoints SET next_at = ? WHERE url = ? AND next_at = ?`), micros(leaseUntil), e.URL, micros(e.Next))
		if err != nil {
			return nil, fmt.Errorf("store: sweep claim %s: %w", e.URL, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, fmt.Errorf("store: sweep claim %s: %w", e.URL, err)
		} else if n == 1 {
			claimed = append(claimed, e)
		}
	}
	return claimed, nil
}

func (s *sqlStore) SweepRenew(ctx context.Context, url string, held, until time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, s.q(`UPDATE sweep_endpoints SET next_at = ? WHERE url = ? AND next_at = ?`), micros(until), url, micros(held))
	if err != nil {
		return false, fmt.Errorf("store: sweep renew %s: %w", url, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: sweep renew %s: %w", url, err)
	}
	return n == 1, nil
}

func (s *sqlStore) SweepHostSlot(ctx context.Context, host string, now time.Time, gap time.Duration) (time.Time, error) {
	// A slot is a start time; next_at is the start the host's following
	// reading may take. The row is written whole in one upsert: of two
	// instances reserving at once, the second sees the first's next_at.
	var next int64
	err := s.db.QueryRowContext(ctx, s.q(`INSERT INTO sweep_hosts (host, next_at) VALUES (?, ?)
		ON CONFLICT (host) DO UPDATE SET next_at = CASE WHEN sweep_hosts.next_at > excluded.next_at - ? THEN sweep_hosts.next_at + ? ELSE excluded.next_at END
		RETURNING next_at`), host, micros(now.Add(gap)), gap.Microseconds(), gap.Microseconds()).Scan(&next)
	if err != nil {
		return time.Time{}, fmt.Errorf("store: sweep slot for %s: %w", host, err)
	}
	return fromMicros(next).Add(-gap), nil
}

func (s *sqlStore) SweepRecord(ctx context.Context, url string, r SweepReading) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: sweep record %s: %w", url, err)
	}
	defer tx.Rollback()
	surface := r.Surface
	if surface != "" {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO sweep_surfaces (sha256, body, first_seen) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`), surface, r.Body, micros(r.At)); err != nil {
			return fmt.Errorf("store: sweep surface %s: %w", surface, err)
		}
	}
	if r.Instructions != "" {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO sweep_instructions (sha256, body, first_seen) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`), r.Instructions, r.InstructionsBody, micros(r.At)); err != nil {
			return fmt.Errorf("store: sweep instructions %s: %w", r.Instructions, err)
		}
	}
	// A reading without a surface keeps the last one: the next whole
	// reading is compared with what was last read whole. So with the
	// instructions of a reading without a readable handshake.
	res, err := tx.ExecContext(ctx, s.q(`UPDATE sweep_endpoints SET last_at = ?, next_at = ?, error = ?, surface = CASE WHEN CAST(? AS TEXT) = '' THEN surface ELSE ? END,
		instructions = CASE WHEN CAST(? AS TEXT) = '' THEN instructions ELSE ? END WHERE url = ?`),
		micros(r.At), micros(r.Next), r.Error, surface, surface, r.Instructions, r.Instructions, url)
	if err != nil {
		return fmt.Errorf("store: sweep record %s: %w", url, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("store: sweep record %s: %w", url, errors.Join(err, ErrNotFound))
	}
	for _, c := range []*SweepChange{r.Change, r.InstructionsChange} {
		if c == nil {
			continue
		}
		kind := c.Kind
		if kind == "" {
			kind = ChangeTools
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO sweep_changes (url, seen_at, from_sha256, to_sha256, detail, kind) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`),
			url, micros(c.SeenAt), c.From, c.To, c.Detail, kind); err != nil {
			return fmt.Errorf("store: sweep change %s: %w", url, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: sweep record %s: commit: %w", url, err)
	}
	return nil
}

func (s *sqlStore) SweepSurface(ctx context.Context, digest string) ([]byte, error) {
	return s.sweepBody(ctx, "sweep_surfaces", "surface", digest)
}

func (s *sqlStore) SweepInstructions(ctx context.Context, digest string) ([]byte, error) {
	return s.sweepBody(ctx, "sweep_instructions", "instructions", digest)
}

// sweepBody reads a body stored by digest in table (one of the two above).
func (s *sqlStore) sweepBody(ctx context.Context, table, what, digest string) ([]byte, error) {
	var b []byte
	err := s.db.QueryRowContext(ctx, s.q(`SELECT body FROM `+table+` WHERE sha256 = ?`), digest).Scan(&b)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("store: sweep %s %s: %w", what, digest, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("store: sweep %s %s: %w", what, digest, err)
	}
	return b, nil
}

func (s *sqlStore) SweepChanges(ctx context.Context, url string, from, to time.Time) ([]SweepChange, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT kind, url, seen_at, from_sha256, to_sha256, detail FROM sweep_changes
		WHERE (CAST(? AS TEXT) = '' OR url = ?) AND seen_at >= ? AND seen_at < ? ORDER BY seen_at, url, kind`), url, url, micros(from), micros(to))
	if err != nil {
		return nil, fmt.Errorf("store: sweep changes: %w", err)
	}
	defer rows.Close()
	var out []SweepChange
	for rows.Next() {
		var c SweepChange
		var at int64
		if err := rows.Scan(&c.Kind, &c.URL, &at, &c.From, &c.To, &c.Detail); err != nil {
			return nil, fmt.Errorf("store: sweep changes: %w", err)
		}
		c.SeenAt = fromMicros(at)
		out = append(out, c)
	}
	return out, rows.Err()
}
