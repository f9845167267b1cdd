package session

import (
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/continuity"
)

// TestPageStepBounds: what the vectors cannot carry. Pages past the bound
// on them together end the walk as over, the page not counted; a cursor
// of a megabyte is kept as its digest, and handed out again it is
// repeated; the walk's state reads back as it was written.
func TestPageStepBounds(t *testing.T) {
	page := `{"tools":[]}`
	w := &Walk{Cap: 100, Bytes: continuity.MaxPagesBytes - int64(len(page)) + 1, Pages: 3}
	if _, _, over := w.PageStep(page); !over || w.Pages != 3 {
		t.Fatalf("past the bound: over false or pages %d", w.Pages)
	}
	w = &Walk{Cap: 100, Bytes: continuity.MaxPagesBytes - int64(len(page))}
	if _, stop, over := w.PageStep(page); over || stop != StopListEnd {
		t.Fatalf("at the bound: over %v, stop %q", over, stop)
	}

	long := strings.Repeat("c", 1<<20)
	w = &Walk{Cap: 100}
	withCursor := `{"tools":[],"nextCursor":"` + long + `"}`
	if cursor, stop, _ := w.PageStep(withCursor); cursor != long || stop != "" {
		t.Fatalf("first page: stop %q", stop)
	}
	if len(w.Followed) != 1 || len(w.Followed[0]) != 64 {
		t.Fatalf("followed %d, %d bytes: a cursor is kept as its digest", len(w.Followed), len(w.Followed[0]))
	}
	st := New()
	st.Walk = w
	back, err := Parse(st.Value(), "state")
	if err != nil || back.Walk == nil || back.Walk.Pages != 1 || back.Walk.Followed[0] != w.Followed[0] {
		t.Fatalf("the state read back: %v %+v", err, back.Walk)
	}
	if len(canon.Canonical(st.Value())) > 1024 {
		t.Errorf("a walk past a megabyte cursor keeps a state of %d bytes", len(canon.Canonical(st.Value())))
	}
	if _, stop, _ := back.Walk.PageStep(withCursor); stop != StopRepeated {
		t.Fatalf("the cursor again: stop %q", stop)
	}
	st.Walk = nil
	if strings.Contains(string(canon.Canonical(st.Value())), "walk") {
		t.Error("a state between walks names a walk")
	}
}
