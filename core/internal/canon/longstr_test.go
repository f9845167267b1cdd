package canon

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/crawlcheck/verifier/core/memo"
)

// TestLongStringMemo: a long escaped string parsed again is found in the
// memo, and a hit answers what unescaping would: the same text and the same
// canonical document (its non-canonical escapes counted, so a container
// holding it is not taken for its own canonical text). Bytes that only
// begin like a kept string are unescaped, and an error is never kept.
func TestLongStringMemo(t *testing.T) {
	body := strings.Repeat(`{\"a\":\"x\/y\"},`, longStringMin/10) // \/ is not how JCS writes '/'
	doc := `["a","` + body + `"]`                                 // a first element the array's raw text could start with
	cold, err := ParseString(doc)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, ok := knownLongString(body + `"]`); ok {
		t.Fatal("a long string unescaped once is kept")
	}
	ParseString(doc)
	if _, _, _, ok := knownLongString(body + `"]`); !ok {
		t.Fatal("a long string unescaped twice is not kept")
	}
	warm, err := ParseString(doc)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := cold.Elems()[1].Str()
	ws, _ := warm.Elems()[1].Str()
	if cs != ws || string(Canonical(cold)) != string(Canonical(warm)) || !strings.HasPrefix(string(Canonical(warm)), `["a","{\"a\":\"x/y\"}`) {
		t.Fatalf("a hit answers otherwise than unescaping: %.60q vs %.60q", Canonical(cold), Canonical(warm))
	}
	// The kept body followed by more of the string (not its closing quote).
	longer, err := ParseString(`["` + body + `z\n"]`)
	if err != nil {
		t.Fatal(err)
	}
	if ls, _ := longer.Elems()[0].Str(); ls != cs+"z\n" {
		t.Fatalf("a string beginning like a kept one: %.40q", ls[len(ls)-10:])
	}
	// A long string with an invalid escape fails every time, and is not kept.
	bad := `["` + body + `\q"]`
	for range 2 {
		if _, err := ParseString(bad); err == nil || !strings.Contains(err.Error(), `invalid escape \q`) {
			t.Fatalf("an invalid escape in a long string: %v", err)
		}
	}
}

// TestKeptText: the text a hit answers is the memo's own string, which
// KeptText tells from an equal copy, and Same finds equal to itself and to
// the copy.
func TestKeptText(t *testing.T) {
	body := strings.Repeat(`{\"b\":1},`, longStringMin/8)
	doc := `["` + body + `"]`
	ParseString(doc)
	ParseString(doc)
	v, err := ParseString(doc)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := v.Elems()[0].Str()
	copied := strings.Clone(text)
	kept := func(s string) bool { _, ok := KeptText(s); return ok }
	if !kept(text) || kept(copied) || kept("") {
		t.Errorf("KeptText: the memo's text %v, a copy %v", kept(text), kept(copied))
	}
	if !Same(text, text) || !Same(text, copied) || Same(text, copied[:len(copied)-1]+"x") {
		t.Error("Same")
	}
}

// TestHostBufferReused: a document parsed in place from a host's buffer
// (ParseString of an ABI-2 attachment), which the host then rewrites with
// other bytes of the same length at the same address, parses to the new
// bytes: no memo keeps the buffer itself as a key, so neither a pointer
// comparison (Same in WebAssembly) nor a kept tree answers the old
// document. Each document is read three times, so that every memo that
// admits by sightings keeps it.
func TestHostBufferReused(t *testing.T) {
	defer memo.Instance.Clear()
	doc := func(c string) string {
		return `{"list":` + strings.Replace(longArray(0), "tool_", "tool"+c, -1) + `,"s":"` + strings.Repeat(`\"`+c, longStringMin) + `"}`
	}
	a, b := doc("a"), doc("b")
	buf := []byte(a)
	in := unsafe.String(&buf[0], len(buf))
	for range 3 {
		if _, err := ParseString(in); err != nil {
			t.Fatal(err)
		}
	}
	copy(buf, b)
	got, err := ParseString(in)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ParseString(strings.Clone(b))
	if string(Canonical(got)) != string(Canonical(want)) {
		t.Fatalf("the rewritten buffer parsed as the document it held before: %.80q", Canonical(got))
	}
}
