package service

import (
	"bytes"
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

// The report's other bounds (issue 37, F4, F5): six reports of a pilot
// holding 140 MiB took +1.9 GiB, and every report parsed every change of
// the week (20,000 events: 3.9 GiB).
const (
	// defaultMaxReportBytes bounds the records' bytes one report reads
	// (records_cut past it): the time a report takes, where its memory is
	// a page's (store.PilotRecordPages).
	defaultMaxReportBytes = 16 << 20
	// defaultMaxReportChanges bounds the sweep's change events read of one
	// endpoint in a week (a server that changes every minute of the week
	// is shown by its first 1,000).
	defaultMaxReportChanges = 1000
	// defaultMaxReports bounds the reports computed at once; one more is
	// 429 (Retry-After: 1).
	defaultMaxReports = 2
	// reportRate and reportBurst limit each pilot's reports.
	reportRate, reportBurst = 1, 10
)

// reportSkew is how long before the week's start a record may have been
// received and still be checked within it: none can (a record is received
// after it is made), except by the difference of two clocks.
const reportSkew = 24 * time.Hour

func (s *Service) pilotReport(w http.ResponseWriter, r *http.Request) {
	p, ok := s.pilotOf(w, r)
	if !ok || !s.limit(w, "pilot-report "+p.ID, reportRate, reportBurst, "too many reports for this pilot") {
		return
	}
	select {
	case s.reports <- struct{}{}:
		defer func() { <-s.reports }()
	default:
		w.Header().Set("Retry-After", "1")
		s.problem(w, http.StatusTooManyRequests, "rate_limited", "the service is computing as many reports as it does at once: try again shortly")
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
	// The pilot's records are read a page at a time, each page's chain
	// checked and its records counted before the next page is read (issue
	// 37, F4/F5: a report held every record of the pilot it read, twice).
	// They are the tail of the pilot's chain, each verified on arrival: the
	// chain is checked from the record before the first (Tail). A page's
	// query alone is timed; a failure of the core's on a page is the
	// core's, not the store's.
	var (
		log     bytes.Buffer
		cut     bool
		pageErr error
	)
	in := report.Input{Week: week, Pilot: p.ID, Tail: true, Parts: func(each func([]byte) error) error {
		var err error
		start := time.Now()
		cut, err = store.PilotRecordPages(r.Context(), s.cfg.Store, p.ID, from.Add(-reportSkew), s.cfg.MaxReportRecords, s.cfg.MaxReportBytes,
			func(page []store.PilotRecord) error {
				s.metrics.Observe("crawlcheck_issuer_store_duration_seconds", time.Since(start), "pilot_records_read", "ok")
				log.Reset()
				for i := range page {
					log.Write(page[i].Body)
					log.WriteByte('\n')
				}
				pageErr = each(log.Bytes())
				start = time.Now()
				return pageErr
			})
		return err
	}}
	rep, err := report.Build(in)
	switch {
	case err != nil && pageErr == nil:
		s.fail(w, &storeError{err})
		return
	case err != nil:
		s.fail(w, &coreError{"internal", err.Error()})
		return
	}
	rep.RecordsCut = cut
	if ss, ok := store.SweepOf(s.cfg.Store); ok {
		// The sweep's changes of the endpoints the records name and the
		// pilot owns (F7: a record naming an endpoint proves nothing about
		// who may read it), one endpoint at a time, each event read into
		// the report's changes and its detail let go before the next
		// endpoint's are read.
		own, err := ownEndpoints(r.Context(), ss, p.ID)
		if err != nil {
			s.fail(w, &storeError{err})
			return
		}
		var sweep []report.SweepChange
		for _, srv := range rep.Servers {
			if !own[srv.URL] {
				continue
			}
			var changes []store.SweepChange
			if err := s.timed("sweep_changes", func() (err error) {
				changes, _, err = store.SweepChangesOf(r.Context(), s.cfg.Store, srv.URL, from, to, s.cfg.MaxReportChanges)
				return
			}); err != nil {
				s.fail(w, &storeError{err})
				return
			}
			for _, c := range changes {
				cs, err := report.SweepChangesOf(c.Kind, c.URL, c.SeenAt, c.Detail)
				if err != nil {
					s.fail(w, &coreError{"internal", err.Error()})
					return
				}
				sweep = append(sweep, cs...)
			}
		}
		rep.Join(sweep)
	}
	w.Header().Set("Vary", "Accept")
	if strings.Contains(r.Header.Get("Accept"), "text/html") {
		writeBytes(w, http.StatusOK, "text/html; charset=utf-8", rep.HTML())
		return
	}
	writeBytes(w, http.StatusOK, "application/json", rep.JSON())
}
