package scan

import (
	"slices"
	"testing"
)

// TestTextsReuseAsFresh: a Texts that scanned other texts before (whose
// latest findings it forgets rule by rule, and whose tool name it lowers
// on first need) answers each text as a fresh one does, on the scan
// corpora, each text as the description of a tool of the list and of none.
func TestTextsReuseAsFresh(t *testing.T) {
	texts := corpusTexts(t, nil)
	names := []string{"send_email", "read_file", "Fetch_URL", "getWeather", "fill", "list-pages"}
	x := NewTexts(names)
	found := 0
	for i, text := range texts {
		self := names[i%len(names)]
		if i%7 == 0 {
			self = ""
		}
		got := slices.Clone(x.Text(text, self))
		want := NewTexts(names).Text(text, self)
		if len(got) != len(want) {
			t.Fatalf("%q as %q: %d findings after other texts, %d fresh", text, self, len(got), len(want))
		}
		for k := range got {
			got[k].seq = want[k].seq // the text's rank among those scanned: its own
			if got[k] != want[k] {
				t.Fatalf("%q as %q: finding %d is %+v after other texts, %+v fresh", text, self, k, got[k], want[k])
			}
		}
		found += len(got)
	}
	if found < 1000 {
		t.Fatalf("only %d findings: the comparison compares little", found)
	}
}
