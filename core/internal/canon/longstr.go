package canon

import (
	"strings"
	"sync"
	"unsafe"
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
var longStrings = struct {
	mu      sync.Mutex
	entries []longString // most recently used first
}{}

type longString struct {
	raw   string // the string's bytes between its quotes, owned
	text  string // what they unescape to
	dirty int    // the escapes JCS writes otherwise (see parser.dirty)
}

// longStringMin is the raw length from which a string is kept (below it,
// unescaping costs about what the lookup does); longStringMax caps one (a
// 1,000-tool lockfile is 0.8 MB), and longStringsKept how many are kept, so
// the memo holds at most 32 MB, raw and text, in an instance whose memory
// never shrinks (WebAssembly).
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
	longStrings.mu.Lock()
	defer longStrings.mu.Unlock()
	for i, e := range longStrings.entries {
		n := len(e.raw)
		if len(s) > n && s[n] == '"' && Same(s[:n], e.raw) {
			copy(longStrings.entries[1:i+1], longStrings.entries[:i])
			longStrings.entries[0] = e
			return e.text, n, e.dirty, true
		}
	}
	return "", 0, 0, false
}

// keepLongString remembers a string unescaped from raw (a part of the
// input, copied here so the memo does not keep the request alive).
func keepLongString(raw, text string, dirty int) {
	if len(raw) < longStringMin || len(raw) > longStringMax {
		return
	}
	e := longString{raw: strings.Clone(raw), text: text, dirty: dirty}
	longStrings.mu.Lock()
	defer longStrings.mu.Unlock()
	longStrings.entries = append([]longString{e}, longStrings.entries[:min(len(longStrings.entries), longStringsKept-1)]...)
}

// KeptText reports whether s is the text of a long string the memo keeps
// (the same string, not equal bytes): the parser's own buffer, never
// changed, which a caller may keep instead of a copy of its own. Kept so,
// the next request's text, taken from the memo, is that same string, and
// comparing the two is comparing one pointer (Same).
func KeptText(s string) bool {
	if len(s) == 0 {
		return false
	}
	longStrings.mu.Lock()
	defer longStrings.mu.Unlock()
	for _, e := range longStrings.entries {
		if len(e.text) == len(s) && unsafe.StringData(e.text) == unsafe.StringData(s) {
			return true
		}
	}
	return false
}
