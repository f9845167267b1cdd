package canon

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// TestValueSize: a Value stays 24 bytes; the memory of a parsed document is
// mostly Values (docs/benchmarks.md, Memory per input byte).
func TestValueSize(t *testing.T) {
	if n := unsafe.Sizeof(Value{}); n != 24 {
		t.Fatalf("a Value is %d bytes, want 24", n)
	}
}

// TestParseMemoryPerByte: parsing an array of a million small values
// allocates at most 13 bytes per input byte: a 24-byte Value per two-byte
// "0," and one exactly sized element stack handed to the array. Before
// (72-byte Values, a stack grown by append and then copied) it was over
// 100; issue 10 measured 140 times the input in RSS.
func TestParseMemoryPerByte(t *testing.T) {
	doc := "[" + strings.Repeat("0,", 1<<20) + "0]"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v, err := ParseString(doc)
	runtime.ReadMemStats(&after)
	if err != nil || len(v.Elems()) != 1<<20+1 {
		t.Fatalf("parse: %v, %d elements", err, len(v.Elems()))
	}
	per := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(doc))
	t.Logf("%.1f bytes allocated per input byte", per)
	if per > 13 {
		t.Errorf("%.1f bytes allocated per input byte, want at most 13", per)
	}
}
