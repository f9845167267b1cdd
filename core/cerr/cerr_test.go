package cerr

import (
	"errors"
	"fmt"
	"testing"
)

// TestChainFound: CodeOf, Message and In find a coded error wherever
// errors.As would (cerr walks the chain itself to keep reflectlite out of
// the wasm module): wrapped by %w, joined, and not at all.
func TestChainFound(t *testing.T) {
	coded := New(BadRequest, "page %s", "p")
	for _, c := range []struct {
		name string
		err  error
		want *Error
	}{
		{"itself", coded, coded},
		{"wrapped", fmt.Errorf("host: %w", coded), coded},
		{"wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", coded)), coded},
		{"joined, second", errors.Join(errors.New("plain"), coded), coded},
		{"joined inside a wrap", fmt.Errorf("x: %w", errors.Join(errors.New("plain"), fmt.Errorf("y: %w", coded))), coded},
		{"plain", errors.New("plain"), nil},
		{"joined plain", errors.Join(errors.New("a"), errors.New("b")), nil},
	} {
		var std *Error
		if !errors.As(c.err, &std) {
			std = nil
		}
		if got := as(c.err); got != c.want || got != std {
			t.Errorf("%s: as = %v, want %v (errors.As: %v)", c.name, got, c.want, std)
		}
		wantCode, wantMsg := Internal, c.err.Error()
		if c.want != nil {
			wantCode, wantMsg = c.want.Code, c.want.Msg
		}
		if got := CodeOf(c.err); got != wantCode {
			t.Errorf("%s: CodeOf = %q, want %q", c.name, got, wantCode)
		}
		if got := Message(c.err); got != wantMsg {
			t.Errorf("%s: Message = %q, want %q", c.name, got, wantMsg)
		}
		if got := In("lock", c.err).(*Error); got.Code != wantCode || got.Msg != "lock: "+wantMsg {
			t.Errorf("%s: In = %v", c.name, got)
		}
	}
}
