package preflight

import "time"

// RecheckPacer is the rate limit of background re-checks on
// notifications/tools/list_changed (RecheckMin, RecheckMax; as the JS and
// Python SDKs pace them): the first starts at once, the next no sooner than
// the wait after the one before, with the notifications in between
// coalesced into it; one that starts as soon as it may doubles the wait, up
// to RecheckMax, and a quiet spell (more than twice the wait) resets it.
// Session's watcher and the gateway (crawlcheck run) pace themselves by it.
// The zero value is ready; it is not safe for concurrent use.
type RecheckPacer struct {
	last time.Time // when the last re-check started
	wait time.Duration
}

// Hold is how long after now the next re-check may start (0: at once).
func (p *RecheckPacer) Hold(now time.Time) time.Duration {
	if p.wait == 0 {
		p.wait = RecheckMin
	}
	return max(0, p.last.Add(p.wait).Sub(now))
}

// Started notes that a re-check started at now: right after the one
// before (a storm), the wait doubles; after a quiet spell it resets.
func (p *RecheckPacer) Started(now time.Time) {
	if p.wait == 0 {
		p.wait = RecheckMin
	}
	if now.Sub(p.last) <= 2*p.wait {
		p.wait = min(2*p.wait, RecheckMax)
	} else {
		p.wait = RecheckMin
	}
	p.last = now
}
