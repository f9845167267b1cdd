package jsonframe

import (
	"encoding/json"
	"strings"
	"testing"
)

// validCases are documents at the edges of JSON's grammar, each checked
// against json.Valid (TestValid, and FuzzValid's seeds).
var validCases = []string{
	``, ` `, `{}`, `[]`, `""`, `0`, `-0`, `01`, `-`, `1.`, `.5`, `1.5`, `1e5`, `1E+5`, `1e-5`, `1e`, `1e+`, `-1.0e10`, `+1`,
	`true`, `tru`, `truex`, `false`, `null`, `nul`, `NaN`, `Infinity`,
	`"a`, `"\"`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\x"`, `"\u00e9"`, `"\u00G9"`, `"\u00e"`, `"\u`, "\"\x01\"", "\"\x7f\"", "\"\xff\"", "\"é\"",
	`{"a":1}`, `{"a":1,}`, `{,}`, `{"a"}`, `{"a":}`, `{a:1}`, `{"a":1 "b":2}`, `{"a":1,"a":2}`, ` { "a" : [ 1 , 2 ] } `, "{\"a\":1}\n", "\t[1]\r",
	`[1,]`, `[,1]`, `[1 2]`, `[[[]]]`, `[{"a":[{"b":null}]}]`, `[`, `]`, `{`, `}`, `1 2`, `{}{}`, `[1]x`, "\x00", `{"a":"b"}}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
	strings.Repeat("[", 5),
}

// TestValid: Valid is json.Valid on every case.
func TestValid(t *testing.T) {
	for _, c := range validCases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%.60q) = %v, json.Valid says %v", c, got, want)
		}
	}
}

// FuzzValid: Valid is json.Valid on any bytes, and a value SkipValue steps
// over is one json.Valid accepts.
func FuzzValid(f *testing.F) {
	for _, c := range validCases {
		if len(c) < 200 {
			f.Add([]byte(c))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid says %v", b, got, want)
		}
		if i := SkipSpace(b, 0); i < len(b) {
			if end := SkipValue(b, i, 0); end >= 0 && !json.Valid(b[i:end]) {
				t.Fatalf("SkipValue(%q) stepped over %q, which json.Valid refuses", b, b[i:end])
			}
		}
	})
}
