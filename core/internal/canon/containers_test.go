package canon

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core/memo"
)

// longArray is a canonical array of more than containerMin bytes, its
// elements numbered from first.
func longArray(first int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := first; b.Len() < containerMin+100; i++ {
		if i > first {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":"tool_` + strconv.Itoa(i) + `","x":[1,2]}`)
	}
	b.WriteByte(']')
	return b.String()
}

func resetContainers() { containers.Clear() }

func kept() int { return containers.Len() }

// twice parses doc twice: a container is kept the second time it is read
// while the memo has room.
func twice(t *testing.T, doc string) Value {
	t.Helper()
	mustParse(t, doc)
	return mustParse(t, doc)
}

func mustParse(t *testing.T, doc string) Value {
	t.Helper()
	v, err := Parse([]byte(doc))
	if err != nil {
		t.Fatalf("%.60s: %v", doc, err)
	}
	return v
}

// TestContainerMemo: a long array or object parsed again at the same depth
// is kept the second time it is read, then taken from the memo, and
// serializes as parsing gives it; the same bytes
// at another depth, a container one byte different, a document the parser
// does not own (ParseString) and a container that failed are parsed; an
// array whose first element came from the memo is not taken for its own
// canonical text (its element's text is in another document).
func TestContainerMemo(t *testing.T) {
	resetContainers()
	defer resetContainers()
	arr := longArray(0)
	mustParse(t, `{"tools":`+arr+`}`)
	if kept() != 0 {
		t.Fatal("a container read once was kept")
	}
	cold := mustParse(t, `{"tools":`+arr+`}`)
	if kept() != 1 {
		t.Fatalf("%d containers kept after one long array at depth 2", kept())
	}
	warm := mustParse(t, `{"other":1,"tools":`+arr+`}`)
	ct, _ := cold.Get("tools")
	wt, _ := warm.Get("tools")
	if k1, ok1 := keptContainer(wt); !ok1 || k1 != must(keptContainer(ct)) {
		t.Fatal("the same array at the same depth was parsed again")
	}
	if got := string(Canonical(warm)); got != `{"other":1,"tools":`+arr+`}` {
		t.Fatalf("a hit serializes otherwise: %.80s", got)
	}

	// First element of an array: the outer array's text is this document's,
	// its first element's the kept one's.
	outer := `[` + arr + `,1]`
	v := mustParse(t, outer)
	if _, ok := keptContainer(v.Elems()[0]); !ok {
		t.Fatal("the kept array as a first element was parsed again")
	}
	if got := string(Canonical(v)); got != outer {
		t.Fatalf("an array whose first element came from the memo: %.40q…%.40q", got[:40], got[len(got)-40:])
	}

	// One byte different: parsed, and it gives the changed value.
	changed := strings.Replace(arr, `"tool_7"`, `"tool_X"`, 1)
	cv := mustParse(t, `{"tools":`+changed+`}`)
	if ctools, _ := cv.Get("tools"); must(keptContainer(ctools)) == must(keptContainer(ct)) || string(Canonical(ctools)) != changed {
		t.Fatal("an array one byte different was taken from the memo")
	}

	// Another depth: parsed (the depth limit depends on it).
	resetContainers()
	twice(t, `{"a":`+arr+`}`)
	deeper := mustParse(t, `{"a":{"b":`+arr+`}}`)
	a, _ := deeper.Get("a")
	b, _ := a.Get("b")
	if k, ok := keptContainer(b); ok && k.Value().depth != 3 {
		t.Fatal("an array kept at depth 2 was taken at depth 3")
	}
	deep := `[` + strings.Repeat("[", MaxDepth-2) + strings.Repeat("]", MaxDepth-2) + `,` + arr[1:] // nests to MaxDepth at depth 2
	resetContainers()
	twice(t, `{"a":`+deep+`}`)
	if _, err := Parse([]byte(`{"a":{"b":` + deep + `}}`)); err == nil || !strings.Contains(err.Error(), "nesting deeper") {
		t.Fatalf("a kept container nesting to the limit, one level deeper: %v", err)
	}

	// Not owned: nothing kept.
	resetContainers()
	ParseString(`{"tools":` + arr + `}`)
	if _, err := ParseString(`{"tools":` + arr + `}`); err != nil || kept() != 0 {
		t.Fatalf("ParseString kept a container of a document it does not own (%d, %v)", kept(), err)
	}

	// A failure is made by parsing each time; a container that parsed is
	// kept even when the document fails after it, and the error is the same.
	bad := `{"tools":` + strings.Replace(arr, `"x":[1,2]}`, `"x":[1,2],"x":3}`, 1) + `}`
	for range 2 {
		if _, err := Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), "duplicate member") {
			t.Fatalf("a duplicate key in a long array: %v", err)
		}
	}
	if kept() != 0 {
		t.Fatal("a container that failed was kept")
	}
	trailing := `{"tools":` + arr + `} x`
	_, err1 := Parse([]byte(trailing))
	Parse([]byte(trailing)) // kept now
	_, err3 := Parse([]byte(trailing))
	if err1 == nil || err3 == nil || err1.Error() != err3.Error() || kept() != 1 {
		t.Fatalf("an error after a kept container: %v / %v (%d kept)", err1, err3, kept())
	}
}

// TestContainerMemoBounds: at most containersKept containers, none from a
// document over containerDocMax, and Derived only for a kept tree.
func TestContainerMemoBounds(t *testing.T) {
	resetContainers()
	defer resetContainers()
	for i := range 2 * containersKept {
		twice(t, `{"tools":`+longArray(i*10000)+`}`)
		if kept() > containersKept {
			t.Fatalf("%d containers kept", kept())
		}
	}
	resetContainers()
	twice(t, `{"tools":`+longArray(0)+`,"pad":"`+strings.Repeat("x", containerDocMax)+`"}`)
	if kept() != 0 {
		t.Fatal("a container of a document over containerDocMax was kept")
	}
	v := twice(t, `{"tools":`+longArray(0)+`}`)
	list, _ := v.Get("tools")
	if !KeepDerived(list, "k", 42, 8) {
		t.Fatal("nothing kept beside a kept tree")
	}
	again, _ := mustParse(t, `{"tools":`+longArray(0)+`}`).Get("tools")
	if x, ok := Derived(again, "k"); !ok || x != 42 {
		t.Fatalf("Derived of the same bytes again: %v %v", x, ok)
	}
	if _, ok := Derived(again, "other"); ok {
		t.Fatal("Derived answered another key")
	}
	fresh, _ := twice(t, `{"other":`+longArray(1)+`}`).Get("other")
	if KeepDerived(Arr(fresh.Elems()[:3]...), "k", 1, 8) {
		t.Fatal("something kept beside a tree the memo does not hold")
	}
}

// TestFingerprint: the length and the sampled words count; the name of
// the depth counts.
func TestFingerprint(t *testing.T) {
	page := Fingerprint(longArray(0))
	for _, other := range []uint64{Fingerprint(longArray(0) + " "), Fingerprint(longArray(0), "2"), Fingerprint("")} {
		if other == page || other == 0 {
			t.Fatal("other bytes fingerprinted as the page")
		}
	}
}

// rotate parses docs in turn, rounds times, and answers how many of the
// reads of the last round hit the memo; it fails when a miss keeps
// anything.
func rotate(t *testing.T, docs []string, rounds int) (hits int) {
	t.Helper()
	for r := range rounds {
		for _, doc := range docs {
			before := containers.Stats().Kept
			hit := holds(doc[len(`{"tools":`) : len(doc)-1])
			mustParse(t, doc)
			if hit && r == rounds-1 {
				hits++
			}
			if after := containers.Stats().Kept; !hit && r > 1 && after != before {
				t.Fatalf("round %d: a miss kept its container", r+1)
			}
		}
	}
	return hits
}

// holds reports whether raw is a container kept at depth 2.
func holds(raw string) bool {
	found := false
	containers.Each(func(e memo.Entry[container]) bool {
		found = e.Value().depth == 2 && e.Value().raw.String() == raw
		return !found
	})
	return found
}

// TestContainerMemoRotation: more lists than the memo keeps, read in turn
// (an issuer serving several clients), keep some of them, which then hit,
// and the misses keep nothing; plain LRU kept each and evicted the one
// needed next, hitting never.
func TestContainerMemoRotation(t *testing.T) {
	for _, n := range []int{5, 8, 15} {
		resetContainers()
		var docs []string
		for i := range n {
			docs = append(docs, `{"tools":`+longArray(i*10000)+`}`)
		}
		if hits := rotate(t, docs, 10); hits != containersKept {
			t.Errorf("%d lists in turn: %d of %d reads of a round hit, want %d", n, hits, n, containersKept)
		}
	}
	resetContainers()
}

// TestContainerMemoAging: lists that stopped coming give way to a new list
// read again and again within memo.SightingsWindow/2+1 reads: four lists read 100
// times in turn, or one read 100 times then three twice, which fill the
// memo.
func TestContainerMemoAging(t *testing.T) {
	defer resetContainers()
	doc := func(i int) string { return `{"tools":` + longArray(i*10000) + `}` }
	for name, warm := range map[string][]int{
		"four in turn":    slices.Repeat([]int{1, 2, 3, 4}, 100),
		"one, then three": append(slices.Repeat([]int{1}, 100), 2, 2, 3, 3, 4, 4),
	} {
		resetContainers()
		for _, i := range warm {
			mustParse(t, doc(i))
		}
		if kept() != containersKept {
			t.Fatalf("%s: %d kept", name, kept())
		}
		fresh := doc(9)
		reads := 0
		for !holds(fresh[len(`{"tools":`) : len(fresh)-1]) {
			if reads++; reads > memo.SightingsWindow/2+1 {
				t.Fatalf("%s: a new list read %d times is not kept", name, reads-1)
			}
			mustParse(t, fresh)
		}
		tools, _ := mustParse(t, fresh).Get("tools")
		if _, ok := keptContainer(tools); !ok {
			t.Fatalf("%s: the new list, kept, did not hit", name)
		}
		t.Logf("%s: kept after %d reads", name, reads)
	}
}

// must is a kept container's entry, the zero entry when none.
func must(e memo.Entry[container], _ bool) memo.Entry[container] { return e }
