package service

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/store"
)

// A pilot's quotas (issue 37, F4): a pilot is free to open, so what it may
// make the service keep and do is bounded per pilot, not only per request
// (140 MiB of records in 5.4 s before).
const (
	// DefaultMaxPilotRecords is the records one pilot keeps: a host
	// checking every minute writes some 10,000 a week.
	DefaultMaxPilotRecords = 500_000
	// DefaultMaxPilotBytes is their bytes together.
	DefaultMaxPilotBytes = 512 << 20
	// DefaultPilotBytesPerHour is what one pilot uploads an hour, an
	// hour's worth at once at most (a backlog sent in 8 MiB batches).
	DefaultPilotBytesPerHour = 64 << 20
)

// pilotUploadAllowed charges an upload's bytes to its pilot's hour: 429
// rate_limited (Retry-After: when the bytes will have come back) and false
// past it. Each instance counts its own uploads.
func (s *Service) pilotUploadAllowed(w http.ResponseWriter, id string, n int) bool {
	perHour := s.cfg.PilotBytesPerHour
	lim := s.limiters.get("pilot-bytes "+id, float64(perHour)/3600, int(perHour))
	r := lim.ReserveN(s.cfg.Now(), n)
	if !r.OK() {
		s.problem(w, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("a pilot uploads at most %d bytes an hour", perHour))
		return false
	}
	if d := r.DelayFrom(s.cfg.Now()); d > 0 {
		r.CancelAt(s.cfg.Now())
		w.Header().Set("Retry-After", strconv.Itoa(int(d/time.Second)+1))
		s.problem(w, http.StatusTooManyRequests, "rate_limited", fmt.Sprintf("this pilot uploaded its %d bytes of this hour: try again later", perHour))
		return false
	}
	return true
}

// pilotQuota answers 413 quota_exceeded and false when keeping these
// records would put the pilot over its records or bytes. p is the pilot
// as read with the head the records follow: the store keeps them only if
// the head has not moved (a compare-and-set), so no other upload was kept
// since p's counts were read.
func (s *Service) pilotQuota(w http.ResponseWriter, p store.Pilot, kept []store.PilotRecord) bool {
	var size int64
	for _, r := range kept {
		size += int64(len(r.Body))
	}
	switch {
	case p.Records+int64(len(kept)) > s.cfg.MaxPilotRecords:
		s.problem(w, http.StatusRequestEntityTooLarge, "quota_exceeded", fmt.Sprintf("a pilot keeps at most %d records; this one holds %d and the upload adds %d", s.cfg.MaxPilotRecords, p.Records, len(kept)))
		return false
	case p.Bytes+size > s.cfg.MaxPilotBytes:
		s.problem(w, http.StatusRequestEntityTooLarge, "quota_exceeded", fmt.Sprintf("a pilot keeps at most %d bytes of records; this one holds %d and the upload adds %d", s.cfg.MaxPilotBytes, p.Bytes, size))
		return false
	}
	return true
}

// DefaultPilotsPerHour is the pilots one client (its /24 or /64) makes an
// hour, that many at once: each pilot has its own quotas, so the pilots a
// client may make bound what it may have the service keep.
const DefaultPilotsPerHour = 10

// pilotCreationAllowed applies it: 429 rate_limited and false past it.
func (s *Service) pilotCreationAllowed(w http.ResponseWriter, r *http.Request) bool {
	return s.limit(w, "pilot-create "+clientOf(r), float64(DefaultPilotsPerHour)/3600, DefaultPilotsPerHour, "too many pilots made from this client this hour")
}
