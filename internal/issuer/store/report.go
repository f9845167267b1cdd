package store

import (
	"context"
	"fmt"
	"time"
)

// PilotRecordsReceived answers a pilot's records received at or after
// since, in the order of its chain, at most limit of them and at most
// maxBytes of their bytes together, and whether more were left: what a
// weekly report reads (a record is received after it was checked, so a
// week's records are all received since its start, less the clock skew
// the caller allows). Rows are read one at a time and the reading stops at
// either bound, so the bytes held are the bound's, not the pilot's.
func PilotRecordsReceived(ctx context.Context, st Store, id string, since time.Time, limit int, maxBytes int64) ([]PilotRecord, bool, error) {
	s, ok := st.(*sqlStore)
	if !ok {
		return nil, false, fmt.Errorf("store: this store keeps no pilot records")
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT record_sha256, received_at, body FROM pilot_records WHERE pilot_id = ? AND received_at >= ? ORDER BY seq LIMIT ?`),
		id, micros(since), limit+1)
	if err != nil {
		return nil, false, fmt.Errorf("store: pilot %s records: %w", id, err)
	}
	defer rows.Close()
	var out []PilotRecord
	var size int64
	for rows.Next() {
		var r PilotRecord
		var at int64
		if err := rows.Scan(&r.SHA256, &at, &r.Body); err != nil {
			return nil, false, fmt.Errorf("store: pilot %s records: %w", id, err)
		}
		if size += int64(len(r.Body)) + 1; size > maxBytes || len(out) == limit {
			return out, true, nil
		}
		r.ReceivedAt = fromMicros(at)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("store: pilot %s records: %w", id, err)
	}
	return out, false, nil
}

// SweepChangesOf answers the sweep's change events of one endpoint seen in
// [from, to), at most limit of them (the first), and whether more were
// left: a report reads the endpoints its records name one at a time, each
// bounded, rather than every change of the week at once.
func SweepChangesOf(ctx context.Context, st Store, url string, from, to time.Time, limit int) ([]SweepChange, bool, error) {
	s, ok := st.(*sqlStore)
	if !ok {
		return nil, false, fmt.Errorf("store: this store keeps no sweep")
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT kind, url, seen_at, from_sha256, to_sha256, detail FROM sweep_changes
		WHERE url = ? AND seen_at >= ? AND seen_at < ? ORDER BY seen_at, kind LIMIT ?`), url, micros(from), micros(to), limit+1)
	if err != nil {
		return nil, false, fmt.Errorf("store: sweep changes of %s: %w", url, err)
	}
	defer rows.Close()
	var out []SweepChange
	for rows.Next() {
		if len(out) == limit {
			return out, true, nil
		}
		var c SweepChange
		var at int64
		if err := rows.Scan(&c.Kind, &c.URL, &at, &c.From, &c.To, &c.Detail); err != nil {
			return nil, false, fmt.Errorf("store: sweep changes of %s: %w", url, err)
		}
		c.SeenAt = fromMicros(at)
		out = append(out, c)
	}
	return out, false, rows.Err()
}
