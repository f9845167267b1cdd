package scan

import (
	"math/rand/v2"
	"testing"
)

// identifierAtReference is identifiersIn's reading of one identifier as it
// was before identifierAt: a branch per byte on its kind.
func identifierAtReference(t string, i int) (end int, marked, letter bool) {
	start := i
	for i < len(t) && byteClass[t[i]]&classID != 0 {
		switch c := t[i]; {
		case 'a' <= c && c <= 'z':
			letter = true
		case 'A' <= c && c <= 'Z':
			marked, letter = marked || i > start, true
		default:
			marked = true
		}
		i++
	}
	return i, marked, letter
}

// TestIdentifierAtAsReference: identifierAt ends, marks and finds letters
// in every identifier of the scan corpora and of random texts of the bytes
// that matter to it as identifierAtReference does.
func TestIdentifierAtAsReference(t *testing.T) {
	texts := corpusTexts(t, []string{"", "a", "A", "Ab", "aB", "a_b", "a-b", "a.b", "a1", "1a", "_", ".", "-x-", "getHTTP", "X.Y"})
	r := rand.New(rand.NewPCG(38, 7))
	const alphabet = "aZ9_.- `'\"(\xe2\x80"
	for range 20000 {
		b := make([]byte, r.IntN(16))
		for k := range b {
			b[k] = alphabet[r.IntN(len(alphabet))]
		}
		texts = append(texts, string(b))
	}
	n := 0
	for _, text := range texts {
		for i := 0; i < len(text); {
			if byteClass[text[i]]&classID == 0 {
				i++
				continue
			}
			end, marked, letter := identifierAt(text, i)
			wend, wmarked, wletter := identifierAtReference(text, i)
			if end != wend || marked != wmarked || letter != wletter {
				t.Fatalf("%q at %d: identifierAt %d %v %v, want %d %v %v", text, i, end, marked, letter, wend, wmarked, wletter)
			}
			i = end
			n++
		}
	}
	if n < 100000 {
		t.Fatalf("only %d identifiers compared", n)
	}
}
