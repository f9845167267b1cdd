// Package timefmt is the one time format of the core. Input is any RFC 3339
// time; output is always UTC with milliseconds ("2026-10-07T10:45:00.000Z"),
// so two hosts that mean the same instant write the same bytes.
//
// Both directions are written by hand rather than through time.Parse and
// Time.Format: the time package's general layout parser and formatter are
// about 70 KB of crawlcheck.wasm for the one layout the core uses (issue 9).
// Parse accepts exactly what time.Parse(time.RFC3339Nano, s) accepts, Go's
// leniencies included (a one-digit hour, a comma before the fraction, more
// than nine fraction digits, offsets up to +24:00 with minutes up to 60),
// and means the same instant by it; Format writes what
// t.UTC().Format(Layout) writes. timefmt_test.go holds both to the time
// package, on a corpus and by fuzzing, so the core's answers did not change.
package timefmt

import (
	"strconv"
	"time"

	"github.com/crawlcheck/verifier/core/cerr"
)

// Layout is the output layout, in the time package's notation.
const Layout = "2006-01-02T15:04:05.000Z"

// Parse reads an RFC 3339 time.
func Parse(s string) (time.Time, error) {
	t, ok := parse(s)
	if !ok {
		return time.Time{}, cerr.New(cerr.BadRequest, "%q is not an RFC 3339 time", s)
	}
	return t, nil
}

// parse reads YYYY-MM-DDTh[h]:mm:ss[(.|,)digits](Z|(+|-)hh:mm), in UTC.
func parse(s string) (time.Time, bool) {
	r := reader{s: s, ok: true}
	year := r.num(4)
	r.lit('-')
	month := r.num(2)
	r.lit('-')
	day := r.num(2)
	r.lit('T')
	hour := r.num(1)
	if r.ok && r.i < len(s) && isDigit(s[r.i]) {
		hour = hour*10 + int(s[r.i]-'0')
		r.i++
	}
	r.lit(':')
	minute := r.num(2)
	r.lit(':')
	sec := r.num(2)
	if !r.ok || month < 1 || month > 12 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	// The fraction: its first nine digits are nanoseconds, the rest ignored.
	nsec := 0
	if r.i+1 < len(s) && (s[r.i] == '.' || s[r.i] == ',') && isDigit(s[r.i+1]) {
		r.i++
		n := 0
		for ; r.i < len(s) && isDigit(s[r.i]); r.i++ {
			if n < 9 {
				nsec = nsec*10 + int(s[r.i]-'0')
				n++
			}
		}
		for ; n < 9; n++ {
			nsec *= 10
		}
	}
	offset := 0
	if r.i < len(s) && s[r.i] == 'Z' {
		r.i++
	} else {
		if r.i >= len(s) {
			return time.Time{}, false
		}
		sign := s[r.i]
		r.i++
		oh := r.num(2)
		r.lit(':')
		om := r.num(2)
		if !r.ok || sign != '+' && sign != '-' || oh > 24 || om > 60 {
			return time.Time{}, false
		}
		offset = (oh*60 + om) * 60
		if sign == '-' {
			offset = -offset
		}
	}
	if r.i != len(s) || day < 1 || day > daysIn(month, year) {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	return t.Add(-time.Duration(offset) * time.Second), true
}

// reader walks s; a mismatch clears ok and the rest of the walk is moot.
type reader struct {
	s  string
	i  int
	ok bool
}

// num reads exactly n digits.
func (r *reader) num(n int) int {
	if !r.ok || r.i+n > len(r.s) {
		r.ok = false
		return 0
	}
	x := 0
	for _, c := range []byte(r.s[r.i : r.i+n]) {
		if !isDigit(c) {
			r.ok = false
			return 0
		}
		x = x*10 + int(c-'0')
	}
	r.i += n
	return x
}

// lit reads the byte c.
func (r *reader) lit(c byte) {
	if !r.ok || r.i >= len(r.s) || r.s[r.i] != c {
		r.ok = false
		return
	}
	r.i++
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// daysIn is the length of month in year of the proleptic Gregorian calendar.
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// Format writes t in the output layout: UTC, milliseconds truncated, a
// year of fewer than four digits padded with zeros after its sign.
func Format(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	hour, minute, sec := t.Clock()
	b := make([]byte, 0, len(Layout)+2)
	if year < 0 {
		b = append(b, '-')
		year = -year
	}
	b = pad(b, year, 4)
	b = append(b, '-')
	b = pad(b, int(month), 2)
	b = append(b, '-')
	b = pad(b, day, 2)
	b = append(b, 'T')
	b = pad(b, hour, 2)
	b = append(b, ':')
	b = pad(b, minute, 2)
	b = append(b, ':')
	b = pad(b, sec, 2)
	b = append(b, '.')
	b = pad(b, t.Nanosecond()/1e6, 3)
	return string(append(b, 'Z'))
}

// pad appends x, not negative, in at least width digits.
func pad(b []byte, x, width int) []byte {
	for n, w := 1, 10; n < width; n, w = n+1, w*10 {
		if x < w {
			b = append(b, '0')
		}
	}
	return strconv.AppendInt(b, int64(x), 10)
}
