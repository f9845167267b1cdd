package scan

// The memo: a list repeats many of its texts (the same parameter
// description, member name or enum value in tool after tool: in the real
// lists of testdata/scan-real up to 85% of the texts, 63% of the bytes),
// and a text's findings are a function of the text and of what kind of
// place it is in, unless a pass read something of the tool it belongs to
// (its name, its parameters). A scan of a list remembers, for each text of
// the first kind, the findings its passes added, and adds the same ones
// again where the text comes back: the same calls of add, in the same
// order, so the findings are those a scan of the text would have made,
// byte for byte (TestMemoChangesNothing).
//
// Bounded: at most memoTexts texts and memoAdds findings are remembered per
// scan (the first ones: a text a list repeats mostly comes back from its
// first tools on); past either, texts are scanned as without a memo. The
// table is sized once, for a few texts per tool up to the bound: a table
// that grows with every unique description cost more than the memo saved
// (docs/decisions.md, issue 38 round 5).

const (
	memoTexts = 1 << 10
	memoAdds  = 1 << 14
)

// memoAdd is one call of add: a rule's match at start:end of the text.
type memoAdd struct{ rule, start, end int32 }

// memoEntry is a text remembered in one place kind (where.bits): its adds
// are adds[from:to]; next is the same text's entry in another place kind,
// or -1.
type memoEntry struct {
	where    uint16
	from, to int32
	next     int32
}

// memo holds the findings of the texts of one scan whose passes read
// nothing of their tool. Its table is keyed by the text alone, each text's
// place kinds chained in entries: a string key is hashed by the map's
// string path, which a key of a text and its place kind together (a
// struct) missed, and that look-up is made for every text of a scan
// (docs/benchmarks.md, issue 38 round 6).
type memo struct {
	texts   map[string]int32 // text → its latest entry
	entries []memoEntry
	adds    []memoAdd
}

// newMemo is a memo for a list of n tools.
func newMemo(n int) *memo {
	size := min(memoTexts, 4*n+8)
	return &memo{texts: make(map[string]int32, size), entries: make([]memoEntry, 0, size)}
}

// find is the entry of the text t in the place kind where, if remembered.
func (m *memo) find(t string, where uint16) (memoEntry, bool) {
	e, ok := m.texts[t]
	if !ok {
		return memoEntry{}, false
	}
	for ; e >= 0; e = m.entries[e].next {
		if m.entries[e].where == where {
			return m.entries[e], true
		}
	}
	return memoEntry{}, false
}

// keep remembers the adds of t in the place kind where, adds[from:], if
// the bounds allow; it says whether it did.
func (m *memo) keep(t string, where uint16, from int) bool {
	if len(m.entries) >= memoTexts || len(m.adds) > memoAdds {
		return false
	}
	next, ok := m.texts[t]
	if !ok {
		next = -1
	}
	m.entries = append(m.entries, memoEntry{where, int32(from), int32(len(m.adds)), next})
	m.texts[t] = int32(len(m.entries) - 1)
	return true
}

// bits packs what a where says of a text's place (all but props, which
// walk reads before the text is scanned) into a memo entry's where. Each
// bool is converted, not branched on: the place kinds of a list's texts
// alternate, and a branch per field was 5% of the scan's profile.
func (w where) bits() uint16 {
	return b2u(w.name) | b2u(w.description)<<1 | b2u(w.key)<<2 | b2u(w.schema)<<3 |
		b2u(w.value)<<4 | b2u(w.prose)<<5 | b2u(w.names)<<6 | b2u(w.dialect)<<7 |
		b2u(w.typ)<<8 | b2u(w.unknownRequired)<<9
}

// b2u is 1 for true, 0 for false (the compiler makes it a move of the
// bool's byte).
func b2u(b bool) uint16 {
	var u uint16
	if b {
		u = 1
	}
	return u
}
