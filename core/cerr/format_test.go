package cerr

import (
	"errors"
	"fmt"
	"testing"
)

type stringer string

func (s stringer) String() string { return string(s) }

// sprintf must agree with fmt for every verb and argument type the core uses.
func TestSprintfAgreesWithFmt(t *testing.T) {
	cases := []struct {
		format string
		args   []any
	}{
		{"plain", nil},
		{"%s and %q", []any{"a\"b", "é\x01"}},
		{"%d %d %d", []any{7, int64(-3), uint32(9)}},
		{"%c %02x %04x", []any{'x', byte(0x1f), rune(0xd83d)}},
		{"%v %v %v %s", []any{[]string{"a", "b"}, errors.New("boom"), stringer("k"), JSONSyntax}},
		{"%q %s", []any{stringer("an array"), stringer("null")}},
		{"100%% sure, %s", []any{"yes"}},
		{"%v", []any{[]string{}}},
		{"%d items", []any{0}},
		{"%d and %v bytes", []any{uint64(1<<64 - 1), uint64(1<<63 + 5)}},
	}
	for _, c := range cases {
		if got, want := sprintf(c.format, c.args...), fmt.Sprintf(c.format, c.args...); got != want {
			t.Errorf("sprintf(%q) = %q, fmt says %q", c.format, got, want)
		}
	}
}
