package timefmt

import (
	"math/rand/v2"
	"testing"
	"time"
)

// seeds are valid and nearly valid times, for the corpus test and as the
// fuzzer's seeds; each also gets every one-byte change below.
var seeds = []string{
	"2026-10-07T10:45:00Z", "2026-10-07T10:45:00.123Z", "2026-10-07T10:45:00,5Z",
	"2026-10-07T10:45:00.1234567891234Z", "2026-10-07T1:45:00Z", "2026-10-07T10:45:00+24:00",
	"2026-10-07T10:45:00-23:60", "2026-10-07T10:45:00+02:00", "2024-02-29T00:00:00Z",
	"2023-02-29T00:00:00Z", "2000-02-29T23:59:59.999999999-00:00", "1900-02-29T00:00:00Z",
	"0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999+14:00", "2026-10-07T24:00:00Z",
	"2026-10-07T10:45:60Z", "2026-13-07T10:45:00Z", "2026-10-00T10:45:00Z",
	"2026-10-07t10:45:00z", "2026-10-07T10:45:00", "2026-10-07T10:45:00.Z",
	"2026-10-07T10:45:00+2:00", "2026-10-07T10:45:00+02:00 ", "+026-10-07T10:45:00Z",
	"2026-10-07 10:45:00Z", "2026-10-07T10:45Z", "2026-04-31T10:45:00Z", "", "Z",
}

// TestParseAsTimePackage: parse accepts what time.Parse(RFC3339Nano)
// accepts, and means the same instant, on every seed and every seed with
// one byte replaced, deleted or inserted.
func TestParseAsTimePackage(t *testing.T) {
	alphabet := "0123456789-+:.,TZtz 9"
	for _, s := range seeds {
		check(t, s)
		for i := 0; i <= len(s); i++ {
			for _, c := range []byte(alphabet) {
				if i < len(s) {
					check(t, s[:i]+string(c)+s[i+1:])
				}
				check(t, s[:i]+string(c)+s[i:])
			}
			if i < len(s) {
				check(t, s[:i]+s[i+1:])
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { check(t, s) })
}

func check(t *testing.T, s string) {
	t.Helper()
	want, werr := time.Parse(time.RFC3339Nano, s)
	got, err := Parse(s)
	switch {
	case (werr == nil) != (err == nil):
		t.Fatalf("Parse(%q): error %v, time.Parse: error %v", s, err, werr)
	case err == nil && !got.Equal(want):
		t.Fatalf("Parse(%q) = %v, time.Parse: %v", s, got, want)
	case err == nil && got != got.UTC():
		t.Fatalf("Parse(%q) = %v, not in UTC", s, got)
	}
}

// TestFormatAsTimePackage: Format writes what Time.Format(Layout) writes,
// for instants from the year -2000 to 12000 and at a day's edges.
func TestFormatAsTimePackage(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ts := []time.Time{{}, time.Unix(0, 0), time.Date(2026, 10, 7, 10, 45, 0, 999999999, time.FixedZone("", -3600))}
	lo := time.Date(-2000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for range 100000 {
		ts = append(ts, time.Unix(lo+r.Int64N(hi-lo), r.Int64N(1e9)))
	}
	for _, tm := range ts {
		if got, want := Format(tm), tm.UTC().Format(Layout); got != want {
			t.Fatalf("Format(%v) = %q, time: %q", tm, got, want)
		}
	}
}
