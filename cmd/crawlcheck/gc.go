package main

import (
	"os"
	"runtime/debug"
)

// The collector (issue 23, docs/benchmarks.md). One invocation reads a few
// megabytes, runs one or two ops and exits: a check of 1,000 tools took a
// tenth of a second, and at Go's default (GOGC=100) collected several times
// on the way, 10–15% of its CPU. At 400 it collects far less. But the core's
// tree of a list is up to 20× the list's bytes (make bench's memory row), and
// 400 lets the heap grow to five times what is live: so the default comes back
// once this invocation has read more than gcInputLimit (files, stdin, a live
// server's pages), before the core parses it. GOGC in the environment wins.
const (
	gcPercentSmall = 400
	gcInputLimit   = 4 << 20
)

// gc is this invocation's collector setting: whether it is still raised, and
// the input bytes read so far.
var gc struct {
	raised bool
	read   int64
}

// raiseGC raises the collector's percentage for a small invocation.
func raiseGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercentSmall)
		gc.raised = true
	}
}

// inputRead counts n input bytes read, and restores the default collector
// once the invocation's inputs are large.
func inputRead(n int) {
	gc.read += int64(n)
	if gc.raised && gc.read > gcInputLimit {
		debug.SetGCPercent(100)
		gc.raised = false
	}
}
