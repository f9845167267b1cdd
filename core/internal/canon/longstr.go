package canon

import (
	"unsafe"

	"github.com/crawlcheck/verifier/core/memo"
)

// The long-string memo.
//
// A document handed over inside a JSON string (a lockfile in a check
// request, as every SDK and make load's clients send it) is one long string
// of escapes, and unescaping it was the largest single cost of parsing an
// issuer's check (docs/benchmarks.md): the same 100 KB of lockfile unescaped
// again for every check of it. So the parser keeps the last few long
// strings it unescaped, keyed by their exact raw bytes between the quotes,
// with their text and how many non-canonical escapes they held (dirty): the
// same bytes unescape to the same text, so a hit gives what unescaping
// would. Only a string that unescaped without error is kept, so every
// error is still made by unescaping. The lockfile cache (core/lockcache.go)
// then finds the parsed lockfile by that text.
//
// A hit is found without scanning for the string's end: if the input at
// the string's start holds a kept raw body followed by a quote, that quote
// is the closing one, because where a quote closes the string depends only
// on the bytes before it.
var longStrings = memo.NewTable[longString](memo.Instance, "long strings", memo.Options{MaxEntries: longStringsKept, Sightings: true})

type longString struct {
	raw   memo.Text // the string's bytes between its quotes
	text  memo.Text // what they unescape to
	dirty int       // the escapes JCS writes otherwise (see parser.dirty)
}

// longStringMin is the raw length from which a string is kept (below it,
// unescaping costs about what the lookup does); longStringMax caps one (a
// 1,000-tool lockfile is 0.8 MB), and longStringsKept how many are kept.
// What they cost, raw and text, is in the instance's budget (core/memo).
const (
	longStringMin   = 16 << 10
	longStringMax   = 4 << 20
	longStringsKept = 4
)

// knownLongString answers the text of the string whose body starts s (just
// after its opening quote), the length of its raw body and its dirty count,
// when it is one kept.
func knownLongString(s string) (text string, n, dirty int, ok bool) {
	if len(s) <= longStringMin {
		return "", 0, 0, false
	}
	e, ok := longStrings.Find(func(e *longString) bool {
		n := e.raw.Len()
		return len(s) > n && s[n] == '"' && Same(s[:n], e.raw.String())
	})
	if !ok {
		return "", 0, 0, false
	}
	return e.Value().text.String(), e.Value().raw.Len(), e.Value().dirty, true
}

// keepLongString remembers a string unescaped from raw (a part of the
// input), both copied here so the memo does not keep the request alive,
// and answers the text to use: the memo's copy, when it kept one (KeptText).
func keepLongString(raw, text string, dirty int) string {
	if len(raw) < longStringMin || len(raw) > longStringMax {
		return text
	}
	// Kept from its second sighting (memo.Sightings): a string read once (a
	// page not seen before) costs no copy.
	f := Fingerprint(raw)
	seen := longStrings.Note(f)
	cost := int64(len(raw) + len(text))
	if !longStrings.Admits(cost, seen) {
		return text
	}
	e, ok := longStrings.Keep(&longString{raw: memo.Own(raw), text: memo.Own(text), dirty: dirty}, cost, f, seen)
	if !ok {
		return text
	}
	return e.Value().text.String()
}

// KeptText reports whether s is the text of a long string the memo keeps
// (the same string, not equal bytes): a copy of the memo's own, never
// changed, which a caller may keep instead of a copy of its own. Kept so,
// the next request's text, taken from the memo, is that same string, and
// comparing the two is comparing one pointer (Same).
func KeptText(s string) (memo.Text, bool) {
	var kept memo.Text
	if len(s) == 0 {
		return kept, false
	}
	longStrings.Each(func(e memo.Entry[longString]) bool {
		if t := e.Value().text; t.Len() == len(s) && unsafe.StringData(t.String()) == unsafe.StringData(s) {
			kept = t
		}
		return kept.Len() == 0
	})
	return kept, kept.Len() != 0
}
