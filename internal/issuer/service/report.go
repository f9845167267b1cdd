package service

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/store"
	"github.com/crawlcheck/verifier/internal/report"
)

// The pilot's weekly report (docs/report.md): GET
// /api/v1/pilot/{id}/report?week=2026-W48 with the pilot's token. The same
// report `crawlcheck report` writes from a local record log (internal/report
// builds both), from the records the pilot uploaded, joined with what the
// registry sweep saw change on the servers the pilot registered
// (visibility.go).

// defaultMaxReportRecords bounds the records one report reads
// (Config.MaxReportRecords): a week of a busy pilot, with room; a report
// over more says it is cut.
const defaultMaxReportRecords = 200_000

// reportSkew is how long before the week's start a record may have been
// received and still be checked within it: none can (a record is received
// after it is made), except by the difference of two clocks.
const reportSkew = 24 * time.Hour

func (s *Service) pilotReport(w http.ResponseWriter, r *http.Request) {
	p, ok := s.pilotOf(w, r)
	if !ok {
		return
	}
	week := r.URL.Query().Get("week")
	if week == "" {
		week = report.WeekOf(s.cfg.Now())
	}
	from, err := report.ParseWeek(week)
	if err != nil {
		s.problem(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	to := from.AddDate(0, 0, 7)
	var recs []store.PilotRecord
	var cut bool
	err = s.timed("pilot_records_read", func() (err error) {
		recs, cut, err = store.PilotRecordsReceived(r.Context(), s.cfg.Store, p.ID, from.Add(-reportSkew), s.cfg.MaxReportRecords)
		return
	})
	if err != nil {
		s.fail(w, &storeError{err})
		return
	}
	var log bytes.Buffer
	for _, rec := range recs {
		log.Write(rec.Body)
		log.WriteByte('\n')
	}
	in := report.Input{Week: week, Records: log.Bytes(), Pilot: p.ID, Cut: cut}
	if len(recs) > 0 {
		// The records read are the tail of the pilot's chain, each verified
		// on arrival: the chain is checked from the one before the first.
		var first struct {
			Prev *string `json:"prev_record_sha256"`
		}
		if json.Unmarshal(recs[0].Body, &first) == nil && first.Prev != nil {
			in.After = *first.Prev
		}
	}
	if ss, ok := store.SweepOf(s.cfg.Store); ok {
		var changes []store.SweepChange
		if err := s.timed("sweep_changes", func() (err error) { changes, err = ss.SweepChanges(r.Context(), "", from, to); return }); err != nil {
			s.fail(w, &storeError{err})
			return
		}
		if changes, err = ownChanges(r.Context(), ss, p.ID, changes); err != nil {
			s.fail(w, &storeError{err})
			return
		}
		in.Swept = true
		for _, c := range changes {
			cs, err := report.SweepChangesOf(c.Kind, c.URL, c.SeenAt, c.Detail)
			if err != nil {
				s.fail(w, &coreError{"internal", err.Error()})
				return
			}
			in.Sweep = append(in.Sweep, cs...)
		}
	}
	rep, err := report.Build(in)
	if err != nil {
		s.fail(w, &coreError{"internal", err.Error()})
		return
	}
	w.Header().Set("Vary", "Accept")
	if strings.Contains(r.Header.Get("Accept"), "text/html") {
		writeBytes(w, http.StatusOK, "text/html; charset=utf-8", rep.HTML())
		return
	}
	writeBytes(w, http.StatusOK, "application/json", rep.JSON())
}
