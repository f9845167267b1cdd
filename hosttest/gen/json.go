package gen

import (
	"math/rand/v2"
	"slices"
	"strings"
	"unicode/utf8"
)

// node is a JSON value the generator can mutate before it writes it. It
// exists because the bytes, not the value, are under test: one value is
// written many ways (key order, whitespace, escapes, number spellings), and
// the core must give every spelling the same canonical answer.
type node struct {
	kind  byte   // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	text  string // a string's value, a number's literal, "true"/"false"
	keys  []string
	vals  []*node // object members (with keys) or array elements
	force string  // if set, written verbatim (a deliberately broken spelling)
}

func str(s string) *node { return &node{kind: 's', text: s} }
func num(n string) *node { return &node{kind: 'n', text: n} }
func boolean(b bool) *node {
	if b {
		return &node{kind: 'b', text: "true"}
	}
	return &node{kind: 'b', text: "false"}
}
func null() *node                { return &node{kind: 'z'} }
func array(elems ...*node) *node { return &node{kind: 'a', vals: elems} }
func object() *node              { return &node{kind: 'o'} }
func (n *node) set(k string, v *node) *node {
	if i := slices.Index(n.keys, k); i >= 0 {
		n.vals[i] = v
		return n
	}
	n.keys = append(n.keys, k)
	n.vals = append(n.vals, v)
	return n
}
func (n *node) get(k string) *node {
	if i := slices.Index(n.keys, k); i >= 0 {
		return n.vals[i]
	}
	return nil
}
func (n *node) del(k string) {
	if i := slices.Index(n.keys, k); i >= 0 {
		n.keys = slices.Delete(n.keys, i, i+1)
		n.vals = slices.Delete(n.vals, i, i+1)
	}
}

func (n *node) clone() *node {
	c := *n
	c.keys = slices.Clone(n.keys)
	c.vals = make([]*node, len(n.vals))
	for i, v := range n.vals {
		c.vals[i] = v.clone()
	}
	return &c
}

// writer writes nodes with random but valid spelling choices.
type writer struct {
	r *rand.Rand
	b []byte
	// plain turns off the random spelling: compact, keys in order, minimal
	// escapes. Used for values that must be recognisable, like page cursors.
	plain bool
}

func (w *writer) write(n *node) {
	if n.force != "" {
		w.b = append(w.b, n.force...)
		return
	}
	switch n.kind {
	case 'o':
		w.b = append(w.b, '{')
		order := make([]int, len(n.keys))
		for i := range order {
			order[i] = i
		}
		if !w.plain && w.r.IntN(2) == 0 {
			w.r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		for j, i := range order {
			if j > 0 {
				w.b = append(w.b, ',')
			}
			w.space()
			w.quote(n.keys[i])
			w.space()
			w.b = append(w.b, ':')
			w.space()
			w.write(n.vals[i])
			w.space()
		}
		w.b = append(w.b, '}')
	case 'a':
		w.b = append(w.b, '[')
		for i, v := range n.vals {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.space()
			w.write(v)
			w.space()
		}
		w.b = append(w.b, ']')
	case 's':
		w.quote(n.text)
	case 'n', 'b':
		w.b = append(w.b, n.text...)
	default:
		w.b = append(w.b, "null"...)
	}
}

// space writes insignificant whitespace, now and then.
func (w *writer) space() {
	if w.plain || w.r.IntN(8) != 0 {
		return
	}
	w.b = append(w.b, [...]string{" ", "\n", "\t", "\r\n  ", "  "}[w.r.IntN(5)]...)
}

// quote writes s as a JSON string, each character raw or escaped at random
// (\u escapes in either hex case, astral characters as surrogate pairs).
func (w *writer) quote(s string) {
	w.b = append(w.b, '"')
	for _, r := range s {
		esc := !w.plain && w.r.IntN(6) == 0
		switch {
		case r == '"' || r == '\\':
			w.b = append(w.b, '\\', byte(r))
		case r == '/' && esc:
			w.b = append(w.b, `\/`...)
		case r == '\n' && !esc:
			w.b = append(w.b, `\n`...)
		case r == '\t' && !esc:
			w.b = append(w.b, `\t`...)
		case r < 0x20 || esc:
			w.escape(r)
		default:
			w.b = utf8.AppendRune(w.b, r)
		}
	}
	w.b = append(w.b, '"')
}

func (w *writer) escape(r rune) {
	if r > 0xffff {
		r -= 0x10000
		w.u(0xd800 + r>>10)
		w.u(0xdc00 + r&0x3ff)
		return
	}
	w.u(r)
}

func (w *writer) u(r rune) {
	digits := "0123456789abcdef"
	if w.r.IntN(2) == 0 {
		digits = "0123456789ABCDEF"
	}
	w.b = append(w.b, '\\', 'u', digits[r>>12&0xf], digits[r>>8&0xf], digits[r>>4&0xf], digits[r&0xf])
}

// text is the written bytes of n as a string.
func text(r *rand.Rand, n *node) string {
	w := writer{r: r}
	w.write(n)
	return string(w.b)
}

// Pieces strings are made of: ASCII, accents (precomposed and combining),
// CJK, astral-plane characters, characters JSON or JCS treat specially.
var pieces = []string{
	"get", "issue", "file", "read", "list", "query", "the", " ", "_", "-", ".", "0", "42",
	"é", "e\u0301", "ü", "ß", "ﬁ", "中文", "日本語", "Ω", "😀", "𝄞", "👩‍💻", "\U0010FFFF",
	"\u2028", "\u2029", "\uFEFF", "\uFFFF", "\u007f", "\u0080", "\x00", "\x1f", "\n", "\t",
	"\"", "\\", "/", "<script>", "&amp;", "'", "%s",
}

func (g *rng) words(max int) string {
	var sb strings.Builder
	for range 1 + g.IntN(max) {
		sb.WriteString(pieces[g.IntN(len(pieces))])
	}
	return sb.String()
}

// numbers are spellings that test the ES6 number serialization JCS uses:
// negative zero, exponents in every form, integers beyond 2^53, extremes,
// and (rarely chosen) one that overflows a double.
var numbers = []string{
	"0", "-0", "1", "-1", "0.5", "-0.0", "1.0", "100", "1e3", "1E3", "1e+3", "1e-3", "1.5e-7",
	"123456789", "9007199254740993", "123456789012345678901234567890", "0.1", "3.14159265358979323846",
	"1e21", "1e20", "999999999999999999999", "1e-6", "1e-7", "5e-324", "2.5e-324", "1.7976931348623157e308",
	"-1.7976931348623157e308", "4.94065645841246544e-324", "0.000001", "12345.678e-2", "1E+21", "-2e-0",
}

func (g *rng) number() string {
	if g.IntN(500) == 0 {
		return "1e400" // json_number_out_of_range
	}
	return numbers[g.IntN(len(numbers))]
}

// value is a random JSON value at most depth deep.
func (g *rng) value(depth int) *node {
	k := g.IntN(7)
	if depth <= 0 {
		k = g.IntN(4)
	}
	switch k {
	case 0:
		return str(g.words(4))
	case 1:
		return num(g.number())
	case 2:
		return boolean(g.IntN(2) == 0)
	case 3:
		return null()
	case 4, 5:
		o := object()
		for range g.IntN(4) {
			o.set(g.words(2), g.value(depth-1))
		}
		return o
	default:
		a := array()
		for range g.IntN(4) {
			a.vals = append(a.vals, g.value(depth-1))
		}
		return a
	}
}
