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

// memoKey is a text and its place kind (where.bits).
type memoKey struct {
	text  string
	where uint16
}

// memoAdd is one call of add: a rule's match at start:end of the text.
type memoAdd struct{ rule, start, end int32 }

// memo holds the findings of the texts of one scan whose passes read
// nothing of their tool: each text's adds are adds[from:to].
type memo struct {
	texts map[memoKey]struct{ from, to int32 }
	adds  []memoAdd
}

// newMemo is a memo for a list of n tools.
func newMemo(n int) *memo {
	return &memo{texts: make(map[memoKey]struct{ from, to int32 }, min(memoTexts, 4*n+8))}
}

// keep remembers key's adds, adds[from:], if the bounds allow; it says
// whether it did.
func (m *memo) keep(key memoKey, from int) bool {
	if len(m.texts) >= memoTexts || len(m.adds) > memoAdds {
		return false
	}
	m.texts[key] = struct{ from, to int32 }{int32(from), int32(len(m.adds))}
	return true
}

// bits packs what a where says of a text's place (all but props, which
// walk reads before the text is scanned) into a memo key's part.
func (w where) bits() uint16 {
	var b uint16
	for i, f := range [...]bool{w.name, w.description, w.key, w.schema, w.value, w.prose, w.names, w.dialect, w.typ, w.unknownRequired} {
		if f {
			b |= 1 << i
		}
	}
	return b
}
