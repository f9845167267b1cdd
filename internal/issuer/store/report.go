package store

import (
	"context"
	"fmt"
	"time"
)

// pilotRecordsPage is how many of a pilot's records one query of
// PilotRecordPages reads, and pilotPageBytes about how many of their bytes
// one page holds (a page ends at the record that reaches it).
const (
	pilotRecordsPage = 256
	pilotPageBytes   = 256 << 10
)

// PilotRecordPages hands a pilot's records received at or after since to
// page, a page at a time in the order of its chain, at most limit of them
// and at most maxBytes of their bytes together, and answers whether more
// were left: what a weekly report reads (a record is received after it was
// checked, so a week's records are all received since its start, less the
// clock skew the caller allows). A page is read by its own query, after
// the seq the page before it ended on, and let go (page must not keep it)
// before the next is read, so the records held at once are a page's, not
// the pilot's (issue 37, F4/F5), and no query stays open while page runs.
func PilotRecordPages(ctx context.Context, st Store, id string, since time.Time, limit int, maxBytes int64, page func([]PilotRecord) error) (bool, error) {
	s, ok := st.(*sqlStore)
	if !ok {
		return false, fmt.Errorf("store: this store keeps no pilot records")
	}
	var (
		seq         int64 = -1
		read        int
		size        int64
		out         []PilotRecord
		full, ended bool
	)
	for !ended {
		out, full = out[:0], false
		err := func() error {
			rows, err := s.db.QueryContext(ctx, s.q(`SELECT seq, record_sha256, received_at, body FROM pilot_records
				WHERE pilot_id = ? AND received_at >= ? AND seq > ? ORDER BY seq LIMIT ?`), id, micros(since), seq, pilotRecordsPage)
			if err != nil {
				return err
			}
			defer rows.Close()
			var bytes int64
			n := 0
			for rows.Next() {
				n++
				var r PilotRecord
				var at int64
				if err := rows.Scan(&seq, &r.SHA256, &at, &r.Body); err != nil {
					return err
				}
				if size += int64(len(r.Body)) + 1; size > maxBytes || read == limit {
					full = true
					return nil
				}
				r.ReceivedAt = fromMicros(at)
				out = append(out, r)
				read++
				if bytes += int64(len(r.Body)) + 1; bytes >= pilotPageBytes {
					return rows.Err()
				}
			}
			ended = n < pilotRecordsPage
			return rows.Err()
		}()
		if err != nil {
			return false, fmt.Errorf("store: pilot %s records: %w", id, err)
		}
		if len(out) > 0 {
			if err := page(out); err != nil {
				return false, err
			}
		}
		if full {
			return true, nil
		}
	}
	return false, nil
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
