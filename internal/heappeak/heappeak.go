// Package heappeak measures, for tests, the most heap a piece of work held:
// the issuer's report and the offline report builder are both bounded in
// memory by what they read at once, and their tests assert it with this one
// sampler.
package heappeak

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

const heapObjects = "/memory/classes/heap/objects:bytes"

// Of runs f and answers the most heap its objects took meanwhile, over
// what they took before it: the heap is read every 20 µs while f runs,
// with the collector asked to run at 10% growth, so that what f let go is
// not counted as held.
func Of(f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	s := []metrics.Sample{{Name: heapObjects}}
	metrics.Read(s)
	base := s[0].Value.Uint64()
	var peak atomic.Uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		s := []metrics.Sample{{Name: heapObjects}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Microsecond):
			}
		}
	}()
	f()
	close(done)
	<-stopped
	return max(peak.Load(), base) - base
}
