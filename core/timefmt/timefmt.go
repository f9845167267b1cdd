// Package timefmt is the one time format of the core. Input is any RFC 3339
// time; output is always UTC with milliseconds ("2026-10-07T10:45:00.000Z"),
// so two hosts that mean the same instant write the same bytes.
package timefmt

import (
	"time"

	"github.com/crawlcheck/verifier/core/cerr"
)

// Layout is the output layout.
const Layout = "2006-01-02T15:04:05.000Z"

// Parse reads an RFC 3339 time.
func Parse(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, cerr.New(cerr.BadRequest, "%q is not an RFC 3339 time", s)
	}
	return t.UTC(), nil
}

// Format writes t in the output layout.
func Format(t time.Time) string { return t.UTC().Format(Layout) }
