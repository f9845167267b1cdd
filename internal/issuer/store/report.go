package store

import (
	"context"
	"fmt"
	"time"
)

// PilotRecordsReceived answers a pilot's records received at or after
// since, in the order of its chain, at most limit of them, and whether more
// were left: what a weekly report reads (a record is received after it was
// checked, so a week's records are all received since its start, less the
// clock skew the caller allows).
func PilotRecordsReceived(ctx context.Context, st Store, id string, since time.Time, limit int) ([]PilotRecord, bool, error) {
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
	for rows.Next() {
		var r PilotRecord
		var at int64
		if err := rows.Scan(&r.SHA256, &at, &r.Body); err != nil {
			return nil, false, fmt.Errorf("store: pilot %s records: %w", id, err)
		}
		r.ReceivedAt = fromMicros(at)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("store: pilot %s records: %w", id, err)
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, nil
}
