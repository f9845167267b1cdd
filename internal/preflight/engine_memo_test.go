package preflight

import (
	"strconv"
	"strings"
	"testing"
)

// TestCallMemoHoldsNoLongKeys: the call memo is bounded in bytes, not only
// in entries: a client asking for URIs (or tool names) of a MiB each, every
// one refused, does not make the engine keep them (maxCallMemo of them
// would be gigabytes); each is judged by the core again, and a short key
// is still answered from the memo.
func TestCallMemoHoldsNoLongKeys(t *testing.T) {
	var e Engine
	long := strings.Repeat("x", 1<<20)
	for i := range 8 {
		st, err := e.Item(MethodRead, "uri", long+strconv.Itoa(i))
		if err != nil || st.Allowed || st.Refusal == "" {
			t.Fatalf("a read before any check: %+v, %v", st, err)
		}
		if _, err := e.Call(long + strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	held := 0
	for k, st := range e.calls {
		held += len(k) + len(st.Refusal)
	}
	if held > 64<<10 {
		t.Errorf("the call memo holds %d bytes after 16 refused calls of a MiB each", held)
	}
	if _, err := e.Call("short"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Call("short"); err != nil || len(e.calls) == 0 {
		t.Errorf("a short name is not kept: %v, %d kept", err, len(e.calls))
	}
}
