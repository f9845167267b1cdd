package canon

import (
	"math"
	"testing"

	jcs "github.com/cyberphone/json-canonicalization/go/src/webpki.org/jsoncanonicalizer"
)

// checkNumber compares formatNumber with the reference canonicalizer's
// NumberToJSON, the test oracle.
func checkNumber(t *testing.T, f float64) {
	t.Helper()
	want, err := jcs.NumberToJSON(f)
	got, ok := formatNumber(f)
	if ok != (err == nil) || (ok && got != want) {
		t.Fatalf("formatNumber(%v [%#x]) = %q, %v; the reference gives %q, %v", f, math.Float64bits(f), got, ok, want, err)
	}
}

func TestFormatNumber(t *testing.T) {
	cases := []float64{
		0, math.Copysign(0, -1), 1, -1, 0.5, 1e21, 1e21 - 65536, 9.999999999999999e20, 1e-6, 1e-7,
		9.99999999999e-7, 1.5e-7, 123456789012345680000, 1e22, 1.7976931348623157e308, 5e-324,
		-5e-324, 2.2250738585072014e-308, 0.1, 0.2 + 0.1, 1 / 3.0, 333333333.33333329, 1e100,
		4.35, 0.002, 1e-5, 1234.5678, 295147905179352830000, 1e15, 1e16, 1e17, 9007199254740993,
		math.NaN(), math.Inf(1), math.Inf(-1),
	}
	for _, f := range cases {
		checkNumber(t, f)
		checkNumber(t, -f)
	}
	// Every power of ten and its neighbours.
	for e := -324; e <= 308; e++ {
		f := math.Pow(10, float64(e))
		checkNumber(t, f)
		checkNumber(t, math.Nextafter(f, 0))
		checkNumber(t, math.Nextafter(f, math.Inf(1)))
	}
}

func FuzzFormatNumber(f *testing.F) {
	f.Add(uint64(0x3ff0000000000000))
	f.Add(uint64(0x444b1ae4d6e2ef50))
	f.Fuzz(func(t *testing.T, bits uint64) {
		checkNumber(t, math.Float64frombits(bits))
	})
}
