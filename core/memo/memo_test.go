package memo

import (
	"strconv"
	"testing"
)

// TestBudget: two Tables under one budget evict each other's least
// recently used entries to fit, an entry over a quarter of the budget is
// refused, a lowered limit evicts, and 0 keeps nothing; the stats count
// each.
func TestBudget(t *testing.T) {
	b := NewBudget(100)
	x := NewTable[string](b, "x", Options{MaxEntries: 10})
	y := NewTable[string](b, "y", Options{MaxEntries: 2})
	for i := range 4 {
		if _, ok := x.Keep(ptr("x"+strconv.Itoa(i)), 20, 0, 0); !ok {
			t.Fatal("an entry that fits was refused")
		}
	}
	x.Find(func(s *string) bool { return *s == "x0" }) // x1 is now the oldest
	if _, ok := y.Keep(ptr("big"), 26, 0, 0); ok {
		t.Fatal("an entry over a quarter of the budget was kept")
	}
	y.Keep(ptr("y0"), 25, 0, 0) // 105 > 100: x1 goes
	if _, ok := x.Find(func(s *string) bool { return *s == "x1" }); ok || b.Used() != 85 {
		t.Fatalf("the least recently used entry of another table was not evicted (%d used)", b.Used())
	}
	y.Keep(ptr("y1"), 5, 0, 0)
	y.Keep(ptr("y2"), 5, 0, 0) // y holds two: y0 goes
	if y.Len() != 2 || b.Used() != 70 {
		t.Fatalf("MaxEntries: %d entries, %d used", y.Len(), b.Used())
	}
	b.SetLimit(40)
	if b.Used() > 40 {
		t.Fatalf("a lowered limit left %d used", b.Used())
	}
	b.SetLimit(0)
	if _, ok := x.Keep(ptr("z"), 1, 0, 0); ok || b.Used() != 0 || x.Len()+y.Len() != 0 {
		t.Fatal("memos off kept something")
	}
	st := x.Stats()
	if st.Kept != 4 || st.Hits != 1 || st.Misses != 1 || st.Refused != 1 || st.Evicted != 4 {
		t.Fatalf("stats %+v", st)
	}
}

// TestAdmission: with Sightings, an entry is kept from its second sighting,
// and not when it would evict one sighted as often.
func TestAdmission(t *testing.T) {
	b := NewBudget(1000)
	x := NewTable[int](b, "x", Options{MaxEntries: 1, Sightings: true})
	if _, ok := x.Keep(ptr(1), 10, 1, x.Note(1)); ok {
		t.Fatal("kept at its first sighting")
	}
	if _, ok := x.Keep(ptr(1), 10, 1, x.Note(1)); !ok {
		t.Fatal("not kept at its second sighting")
	}
	x.Note(2)
	if _, ok := x.Keep(ptr(2), 10, 2, x.Note(2)); ok {
		t.Fatal("kept though it evicts one read as often")
	}
}

// TestOwn: a Text is a copy: changing the bytes it was made from changes
// nothing kept.
func TestOwn(t *testing.T) {
	buf := []byte("abc")
	t1, all := OwnBytes(buf), OwnAll([]string{string(buf[:1]), "de"})
	buf[0] = 'x'
	if t1.String() != "abc" || all[0].String() != "a" || all[1].String() != "de" || t1.Slice(1, 3).String() != "bc" {
		t.Fatal("a Text changed with its source")
	}
}

func ptr[T any](v T) *T { return &v }
