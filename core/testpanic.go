//go:build crawlcheck_testpanic

package core

// Ops that exist only in builds with the crawlcheck_testpanic tag, so that
// hosttest can prove what no release op should ever do is survivable: a
// panic comes back as an "internal" envelope and the next call works, and a
// call that runs away is stopped by the host's deadline.

// spinSink keeps test_spin's allocations from being optimized away.
var spinSink []byte

func init() {
	registerTestOp("test_panic", func([]byte) []byte { panic("test_panic: a deliberate panic") })
	// test_spin allocates for minutes: long enough that only a working
	// deadline guard ends it within a test's patience.
	registerTestOp("test_spin", func([]byte) []byte {
		for i := 0; i < 1<<28; i++ {
			spinSink = make([]byte, 4096)
		}
		return []byte(`{"ok":true,"result":"spun"}`)
	})
}
