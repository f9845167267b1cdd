package wasmhost

import (
	"context"
	"strings"
	"testing"
)

// TestNullPointers: the module's call with a null pointer and a length
// answers bad_request, as the C library does, never internal (a panic on
// a nil slice); issue 10, item 10.
func TestNullPointers(t *testing.T) {
	h := newHost(t)
	inst, err := h.get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer inst.close()
	opPtr, err := inst.write(&inst.op, []byte("version"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		raw   bool
		stack [6]uint64
		want  string
	}{
		{"req NULL", false, [6]uint64{uint64(opPtr), 7, 0, 5}, `{"error":{"code":"bad_request","message":"req is NULL with req_len 5"},"ok":false}`},
		{"op NULL", false, [6]uint64{0, 7, uint64(opPtr), 2}, `{"error":{"code":"bad_request","message":"op is NULL with op_len 7"},"ok":false}`},
		{"call_raw req NULL", true, [6]uint64{uint64(opPtr), 7, 0, 5, uint64(opPtr), 0}, `{"error":{"code":"bad_request","message":"req is NULL with req_len 5"},"ok":false}`},
		{"call_raw att NULL", true, [6]uint64{uint64(opPtr), 7, uint64(opPtr), 2, 0, 9}, `{"error":{"code":"bad_request","message":"att is NULL with att_len 9"},"ok":false}`},
	} {
		inst.stack = c.stack
		fn := inst.call
		if c.raw {
			fn = inst.callRaw
		}
		if err := fn.CallWithStack(inst.ctx, inst.stack[:]); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		view, ok := inst.mem.Read(uint32(inst.stack[0]>>32), uint32(inst.stack[0]))
		if !ok {
			t.Fatalf("%s: response outside memory", c.name)
		}
		if got := string(view); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
		if strings.Contains(string(view), "internal") {
			t.Errorf("%s: internal", c.name)
		}
	}
}
