package canon

import (
	"math"
	"strconv"
)

// formatNumber is the ES6 (ECMA-262, Number::toString) text of a finite
// double, the form RFC 8785 gives every number: the shortest digits that
// round-trip, in plain notation from 1e-6 up to 1e21 and in exponent notation
// outside, with -0 written 0. ok is false for NaN and the infinities, which
// JSON cannot write.
//
// It is our own rather than the reference canonicalizer's NumberToJSON
// because that package links fmt, and with it reflect, into the wasm build;
// number_test.go pins it against the reference, on fixed cases and by fuzzing.
func formatNumber(f float64) (s string, ok bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", false
	}
	if f == 0 {
		return "0", true
	}
	var buf [32]byte
	// 'e' with the shortest precision: "d.ddde±XX"; digits and the
	// exponent n such that f = 0.digits × 10^n (ECMA-262's k and n).
	e := strconv.AppendFloat(buf[:0], math.Abs(f), 'e', -1, 64)
	mark := len(e) - 1
	for e[mark] != 'e' {
		mark--
	}
	exp, _ := strconv.Atoi(string(e[mark+1:]))
	var digits [20]byte
	k := 0
	for _, c := range e[:mark] {
		if c != '.' {
			digits[k] = c
			k++
		}
	}
	n := exp + 1

	out := make([]byte, 0, 32)
	if f < 0 {
		out = append(out, '-')
	}
	switch {
	case k <= n && n <= 21: // an integer: the digits, then zeros
		out = append(out, digits[:k]...)
		for range n - k {
			out = append(out, '0')
		}
	case 0 < n && n <= 21: // a point inside the digits
		out = append(out, digits[:n]...)
		out = append(out, '.')
		out = append(out, digits[n:k]...)
	case -6 < n && n <= 0: // 0.000ddd
		out = append(out, '0', '.')
		for range -n {
			out = append(out, '0')
		}
		out = append(out, digits[:k]...)
	default: // d[.ddd]e±x
		out = append(out, digits[0])
		if k > 1 {
			out = append(out, '.')
			out = append(out, digits[1:k]...)
		}
		out = append(out, 'e')
		if n-1 >= 0 {
			out = append(out, '+')
		}
		out = strconv.AppendInt(out, int64(n-1), 10)
	}
	return string(out), true
}
