package service

import (
	"fmt"
	"net/http"
	"time"

	"golang.org/x/time/rate"
)

// The bounds of live readings besides the rate of requests (issue 37, F3):
// a reading is bounded by the core's pages_bytes (64 MiB), and an
// anonymous client may not have the service read more for it than it
// reads itself a minute, nor hold more readings than the service reads at
// once.
const (
	// DefaultReadBytesPerMinute is the bytes of servers' answers one
	// client's (one /24 or /64) readings may take a minute: a full
	// reading's worth, where an honest tool list is well under 1 MiB.
	DefaultReadBytesPerMinute = 64 << 20
	// DefaultMaxReadings is the live readings the service runs at once,
	// whoever asked: each may hold up to pages_bytes while it reads.
	DefaultMaxReadings = 4
)

// readBudget is a client's budget of bytes read for it, refilled at
// ReadBytesPerMinute. A reading starts only with the budget above zero and
// is charged what it took once done (into debt: the next waits until it
// is paid back), since a server's answer is not known in advance.
func (s *Service) readBudget(client string) *rate.Limiter {
	perMinute := s.cfg.ReadBytesPerMinute
	return s.limiters.get("read-bytes "+client, float64(perMinute)/60, int(perMinute))
}

// startReading answers a release func and true when client may start a
// live reading now: budget left, and fewer than MaxReadings running; else
// 429 and false.
func (s *Service) startReading(w http.ResponseWriter, client string) (func(int64), bool) {
	budget := s.readBudget(client)
	if budget.Tokens() < 1 {
		w.Header().Set("Retry-After", "60")
		s.problem(w, http.StatusTooManyRequests, "rate_limited", fmt.Sprintf("this client's live readings took their %d bytes of this minute: try again later", s.cfg.ReadBytesPerMinute))
		return nil, false
	}
	select {
	case s.readings <- struct{}{}:
	default:
		w.Header().Set("Retry-After", "1")
		s.problem(w, http.StatusTooManyRequests, "rate_limited", fmt.Sprintf("the service is reading %d live servers, as many as it reads at once: try again shortly", s.cfg.MaxReadings))
		return nil, false
	}
	return func(received int64) {
		<-s.readings
		budget.ReserveN(time.Now(), int(min(received, s.cfg.ReadBytesPerMinute)))
	}, true
}
