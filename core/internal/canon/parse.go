package canon

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/memo"
)

// Parse parses one JSON document strictly. See the package comment for what
// it refuses; every refusal is a *cerr.Error naming the byte offset.
func Parse(data []byte) (Value, error) {
	if len(data) > MaxBytes {
		return Value{}, cerr.New(cerr.InputTooLarge, "document of %d bytes exceeds the limit of %d", len(data), MaxBytes)
	}
	doc := memo.OwnBytes(data) // a copy: the parser owns it (the container memo may keep it)
	return parse(doc.String(), doc)
}

// ParseString is Parse over a string; substrings of s are kept in the tree, so
// parsing a string costs no copy of the unescaped text.
func ParseString(s string) (Value, error) {
	return parse(s, memo.Text{})
}

// ParseAnswerString is ParseString for a server's answer as a host handed
// it: a result, or the whole JSON-RPC response when the host could not take
// the result out of it (a frame that is no JSON). A refusal at or after the
// start of the value of the document's top-level member "result" is
// located from that start ("at offset N of its result"), not from the
// frame's: the bytes before it hold the request id, which the host chose
// (the gateway's ids are longer than crawlcheck check's), and a record
// must say the same of the same server bytes whichever host read them. A
// refusal past the end of that value is said to be after its result, with
// no offset: the members after it may hold the id (the TypeScript SDK
// writes result, jsonrpc, id in that order).
func ParseAnswerString(s string) (Value, error) {
	return parseFrom(s, memo.Text{}, -1)
}

// parse parses s, which is doc's text when the parser owns it (Parse's
// copy) and doc the zero Text otherwise.
func parse(s string, doc memo.Text) (Value, error) {
	return parseFrom(s, doc, 0)
}

// parseFrom is parse with the origin refusals are located from: 0 the
// document's start, -1 the start of its top-level "result" value once the
// parser reaches it (the document's start until then).
func parseFrom(s string, doc memo.Text, origin int) (Value, error) {
	if len(s) > MaxBytes {
		return Value{}, cerr.New(cerr.InputTooLarge, "document of %d bytes exceeds the limit of %d", len(s), MaxBytes)
	}
	p := parser{s: s, doc: doc, result: origin}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return Value{}, err
	}
	p.skipSpace()
	if p.i != len(p.s) {
		return Value{}, p.fail(cerr.JSONSyntax, "unexpected %s after the document", p.describe())
	}
	return v, nil
}

type parser struct {
	s       string
	i       int
	members []Member // stack shared by all open objects
	elems   []Value  // stack shared by all open arrays

	// Finished objects and arrays are carved out of slabs: a tool list is
	// tens of thousands of small objects, and one allocation per object is
	// what makes parsing slow where allocation is dear (WebAssembly).
	memberSlab []Member
	elemSlab   []Value
	presized   bool // the member stack was sized from the input once
	elemsSized bool // the element stack was sized from the input once

	// dirty counts what the parser has read that the canonical form
	// writes otherwise: whitespace between tokens, an escape JCS does not
	// use, a number not in its ES6 form, members out of order. An array or
	// object in which it did not grow is its own canonical text (raw).
	dirty int

	// result is where refusals are located from: 0 the document's start;
	// below 0 (ParseAnswerString) the start of the top-level "result"
	// value, which is noted here when the parser reaches it.
	result int
	// resultEnd is where that "result" value ends, once parsed: a refusal
	// past it is in the members after the result (a frame that puts its
	// id after its result, cut off after it), where an offset would count
	// the host's id again, so it is located only as after the result.
	resultEnd int

	// doc is s when s is the parser's own copy, which the container memo
	// may keep (containers.go): a Text, so that no caller's buffer can be
	// kept as a key (core/memo).
	doc memo.Text
}

const slabSize = 1024

// growMembers grows the member stack, once, when it gets large: to the
// number of ':' left in the input (an upper bound on the members still to
// come, capped), after which append doubles as usual:
// a 100,000-key object then costs one allocation instead of seventeen
// doublings, each a large copy the collector must watch.
func (p *parser) growMembers() {
	if cap(p.members) < slabSize || p.presized {
		return // append's doubling is cheap while small, and after one estimate
	}
	p.presized = true
	const maxPresize = 1 << 18
	want := min(strings.Count(p.s[p.i:], ":"), (len(p.s)-p.i)/5, maxPresize)
	if want > cap(p.members)-len(p.members) {
		p.members = slices.Grow(p.members, want)
	}
}

// growElems sizes the element stack, once, when an array first outgrows a
// slab: to the number of elements the array being parsed has in all (one
// scan of its bytes). A 26-million-element enum then costs one allocation
// of its own size, handed to the array as it is (finish), where growing by
// append left a chain of ever larger stacks behind it: several times the
// array's memory at once, and most of the core's memory per input byte.
func (p *parser) growElems(base int) {
	if cap(p.elems) < slabSize || p.elemsSized {
		return
	}
	p.elemsSized = true
	want := len(p.elems) - base + remainingElems(p.s, p.i)
	if want > cap(p.elems)-base {
		p.elems = slices.Grow(p.elems, want-(len(p.elems)-base))
	}
}

// remainingElems counts the elements of the array whose element ends at i
// that are still to come, that one included: the commas at its own level
// before its closing bracket, plus one. It is an estimate (the parser, not
// this scan, decides what is valid), bounded by the bytes left.
func remainingElems(s string, i int) int {
	n, depth := 1, 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 {
				return n
			}
			depth--
		case ',':
			if depth == 0 {
				n++
			}
		}
	}
	return n
}

// finish moves the members or elements of the object or array just closed,
// stack[base:], into a slice of their own. A large one at the bottom of the
// stack keeps the stack's memory instead (a fresh stack is started): copying
// megabytes of pointers is what made a 100,000-key object slow, since the
// collector must watch every pointer copied while it runs.
func finish[T any](stack, slab *[]T, base int) []T {
	n := len(*stack) - base
	if base == 0 && n > slabSize/4 {
		out := (*stack)[:n:n]
		*stack = nil
		return out
	}
	out := take(slab, n)
	copy(out, (*stack)[base:])
	clear((*stack)[base:])
	*stack = (*stack)[:base]
	return out
}

// take carves n elements out of a slab, starting a new slab when the
// current one is full; large objects and arrays get their own allocation.
func take[T any](slab *[]T, n int) []T {
	if n > slabSize/4 {
		return make([]T, n)
	}
	if len(*slab)+n > cap(*slab) {
		// Slabs start small and double up to slabSize: a document of a
		// few objects (a page of a long walk, a key) would otherwise pay
		// for a whole slab, and a check of 1,000 small pages for 1,000.
		*slab = make([]T, 0, min(slabSize, max(2*cap(*slab), 4*n, 16)))
	}
	k := len(*slab)
	*slab = (*slab)[:k+n]
	return (*slab)[k : k+n : k+n]
}

func (p *parser) fail(code cerr.Code, format string, args ...any) error {
	e := cerr.New(code, format, args...)
	switch {
	case p.resultEnd > 0 && p.i >= p.resultEnd:
		e.Msg += " after its result"
	case p.result > 0:
		e.Msg += " at offset " + strconv.Itoa(p.i-p.result) + " of its result"
	default:
		e.Msg += " at offset " + strconv.Itoa(p.i)
	}
	return e
}

func (p *parser) describe() string {
	if p.i >= len(p.s) {
		return "end of input"
	}
	c := p.s[p.i]
	if c >= 0x20 && c < 0x7f {
		return strconv.Quote(string(c))
	}
	return "byte 0x" + strconv.FormatUint(uint64(c), 16)
}

func (p *parser) skipSpace() {
	s, i := p.s, p.i
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	if i != p.i {
		p.dirty++
	}
	p.i = i
}

// rawContainer marks v, the array or object whose text is s[start:p.i], as
// raw (sets n to its length) when nothing non-canonical was read inside it (dirty is still mark)
// and its first child's text is a substring of s right after the opening
// bracket, which is where rawStart looks for it: not so for a member name or
// string element that had escapes (the parser copied it), an empty string
// first, a literal first (it has no text) or an empty container.
func (p *parser) rawContainer(v Value, start, mark int) Value {
	n := p.i - start
	if p.dirty != mark || n > 1<<31 {
		return v
	}
	var ok bool
	if v.kind == Object {
		k := kids[Member](v)[0].Key
		ok = len(k) > 0 && unsafe.StringData(k) == unsafe.StringData(p.s[start+2:])
	} else {
		switch e := kids[Value](v)[0]; e.kind {
		case String:
			ok = len(e.s) > 0 && unsafe.StringData(e.s) == unsafe.StringData(p.s[start+2:])
		case Number:
			ok = unsafe.StringData(e.s) == unsafe.StringData(p.s[start+1:])
		case Array, Object:
			// Raw, and its text here: one the container memo gave is
			// raw in the document it was kept from.
			ok = e.n != 0 && rawStart(e) == unsafe.Pointer(unsafe.StringData(p.s[start+1:]))
		}
	}
	if ok {
		v.n = uint32(n)
	}
	return v
}

func (p *parser) value(depth int) (Value, error) {
	if p.i >= len(p.s) {
		return Value{}, p.fail(cerr.JSONSyntax, "unexpected end of input")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		s, err := p.str()
		return Value{kind: String, s: s}, err
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.literal("true", Value{kind: Bool, n: 1})
	case c == 'f':
		return p.literal("false", Value{kind: Bool})
	case c == 'n':
		return p.literal("null", Value{})
	}
	return Value{}, p.fail(cerr.JSONSyntax, "unexpected %s", p.describe())
}

func (p *parser) literal(word string, v Value) (Value, error) {
	if len(p.s)-p.i < len(word) || p.s[p.i:p.i+len(word)] != word {
		return Value{}, p.fail(cerr.JSONSyntax, "invalid literal, expected %s", word)
	}
	p.i += len(word)
	return v, nil
}

func (p *parser) object(depth int) (Value, error) {
	if depth > MaxDepth {
		return Value{}, p.fail(cerr.JSONTooDeep, "nesting deeper than %d", MaxDepth)
	}
	if v, ok := p.knownContainer(depth); ok {
		return v, nil
	}
	start, mark := p.i, p.dirty
	p.i++ // {
	base := len(p.members)
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return Value{kind: Object}, nil
	}
	for {
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return Value{}, p.fail(cerr.JSONSyntax, "expected a member name, found %s", p.describe())
		}
		key, err := p.str()
		if err != nil {
			return Value{}, err
		}
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return Value{}, p.fail(cerr.JSONSyntax, "expected ':' after member name, found %s", p.describe())
		}
		p.i++
		p.skipSpace()
		isResult := depth == 1 && p.result < 0 && key == "result"
		if isResult {
			p.result = p.i
		}
		v, err := p.value(depth)
		if err != nil {
			return Value{}, err
		}
		if isResult {
			p.resultEnd = p.i
		}
		if len(p.members) == cap(p.members) {
			p.growMembers()
		}
		p.members = append(p.members, Member{Key: key, Value: v})
		p.skipSpace()
		if p.i >= len(p.s) {
			return Value{}, p.fail(cerr.JSONSyntax, "unterminated object")
		}
		if p.s[p.i] == ',' {
			p.i++
			p.skipSpace()
			continue
		}
		if p.s[p.i] != '}' {
			return Value{}, p.fail(cerr.JSONSyntax, "expected ',' or '}' in object, found %s", p.describe())
		}
		p.i++
		break
	}
	obj := finish(&p.members, &p.memberSlab, base)
	if !membersSorted(obj) {
		p.dirty++
		slices.SortFunc(obj, func(a, b Member) int { return CompareKeys(a.Key, b.Key) })
		for i := 1; i < len(obj); i++ {
			if obj[i].Key == obj[i-1].Key {
				return Value{}, p.fail(cerr.JSONDuplicateKey, "duplicate member name %s in the object ending", strconv.Quote(obj[i].Key))
			}
		}
	}
	v := p.rawContainer(objectOf(obj), start, mark)
	p.keepContainer(v, depth, start, mark)
	return v, nil
}

// membersSorted reports whether keys are strictly ascending, which also rules
// out duplicates; parsed objects usually are (canonical or generated input).
func membersSorted(ms []Member) bool {
	for i := 1; i < len(ms); i++ {
		if CompareKeys(ms[i-1].Key, ms[i].Key) >= 0 {
			return false
		}
	}
	return true
}

func (p *parser) array(depth int) (Value, error) {
	if depth > MaxDepth {
		return Value{}, p.fail(cerr.JSONTooDeep, "nesting deeper than %d", MaxDepth)
	}
	if v, ok := p.knownContainer(depth); ok {
		return v, nil
	}
	start, mark := p.i, p.dirty
	p.i++ // [
	base := len(p.elems)
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return Value{kind: Array}, nil
	}
	for {
		v, err := p.value(depth)
		if err != nil {
			return Value{}, err
		}
		if len(p.elems) == cap(p.elems) {
			p.growElems(base)
		}
		p.elems = append(p.elems, v)
		p.skipSpace()
		if p.i >= len(p.s) {
			return Value{}, p.fail(cerr.JSONSyntax, "unterminated array")
		}
		if p.s[p.i] == ',' {
			p.i++
			p.skipSpace()
			continue
		}
		if p.s[p.i] != ']' {
			return Value{}, p.fail(cerr.JSONSyntax, "expected ',' or ']' in array, found %s", p.describe())
		}
		p.i++
		break
	}
	v := p.rawContainer(arrayOf(finish(&p.elems, &p.elemSlab, base)), start, mark)
	p.keepContainer(v, depth, start, mark)
	return v, nil
}

// str parses a string starting at the opening quote. Without escapes the
// result is a substring of the input: no copy.
func (p *parser) str() (string, error) {
	s := p.s
	start := p.i + 1 // after the opening quote
	i := start
	for i < len(s) {
		// Locals, not p.i: the scan is the parser's hottest loop. Eight
		// bytes at a time while all eight are plain, then byte by byte.
		for i+8 <= len(s) && plainWord(load8(s, i)) {
			i += 8
		}
		for i < len(s) && plain[s[i]] {
			i++
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		switch {
		case c == '"':
			p.i = i + 1
			return s[start:i], nil
		case c == '\\':
			p.i = i
			return p.escapedStr(start)
		case c < 0x20:
			p.i = i
			return "", p.fail(cerr.JSONSyntax, "control character 0x%02x in string", c)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size <= 1 {
				p.i = i
				return "", p.fail(cerr.JSONInvalidUTF8, "invalid UTF-8 in string")
			}
			i += size
		}
	}
	p.i = i
	return "", p.fail(cerr.JSONSyntax, "unterminated string")
}

func (p *parser) escapedStr(start int) (string, error) {
	if text, n, dirty, ok := knownLongString(p.s[start:]); ok {
		p.i = start + n + 1
		p.dirty += dirty
		return text, nil
	}
	dirty0 := p.dirty
	// The decoded text is never longer than the raw text up to the closing
	// quote: one buffer of that size, written by index. A page handed over as
	// a JSON string is mostly short runs between \" escapes, so the loop
	// stays byte-wise and branch-light.
	out := make([]byte, rawStringLen(p.s[p.i:])+(p.i-start))
	w := copy(out, p.s[start:p.i])
	s, i := p.s, p.i
	for i < len(s) {
		c := s[i]
		if plain[c] {
			out[w] = c
			w++
			i++
			continue
		}
		switch {
		case c == '"':
			p.i = i + 1
			// out is this string's own buffer and is never written again,
			// so it becomes the string without a second copy.
			text := unsafe.String(unsafe.SliceData(out), w)
			return keepLongString(s[start:i], text, p.dirty-dirty0), nil
		case c == '\\':
			if i+1 >= len(s) {
				p.i = i
				return "", p.fail(cerr.JSONSyntax, "unterminated escape")
			}
			e := s[i+1]
			i += 2
			switch e {
			case '"', '\\':
				out[w] = e
			case '/':
				p.dirty++ // JCS writes '/' as itself
				out[w] = e
			case 'b':
				out[w] = '\b'
			case 'f':
				out[w] = '\f'
			case 'n':
				out[w] = '\n'
			case 'r':
				out[w] = '\r'
			case 't':
				out[w] = '\t'
			case 'u':
				p.i = i
				r, err := p.unicodeEscape()
				if err != nil {
					return "", err
				}
				if !canonicalU(s[i:p.i], r) {
					p.dirty++
				}
				i = p.i
				w += utf8.EncodeRune(out[w:], r)
				continue
			default:
				p.i = i - 2
				return "", p.fail(cerr.JSONSyntax, "invalid escape \\%c", e)
			}
			w++
		case c < 0x20:
			p.i = i
			return "", p.fail(cerr.JSONSyntax, "control character 0x%02x in string", c)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size <= 1 {
				p.i = i
				return "", p.fail(cerr.JSONInvalidUTF8, "invalid UTF-8 in string")
			}
			w += copy(out[w:], s[i:i+size])
			i += size
		}
	}
	p.i = i
	return "", p.fail(cerr.JSONSyntax, "unterminated string")
}

// plain marks the bytes a string may hold that need no look: ASCII other than
// control characters, '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// Word-at-a-time tests on eight bytes read little-endian (the compiler
// makes load8 one 64-bit load on amd64, arm64 and wasm): under wazero and in
// V8 a per-byte table loop costs a bounds check and a load per byte, and
// strings are most of a tools/list page (issue 9).
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// load8 is s[i:i+8] as a little-endian word; the caller checks i+8 <= len(s).
func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// hasByte reports whether some byte of x is c; hasLess whether some byte is
// below n (n <= 0x80). Neither misses a byte that is; both may report one
// that is not when a lower byte is (a borrow), which only sends the caller
// to its byte loop a little early.
func hasByte(x uint64, c byte) bool { return hasZero(x ^ ones*uint64(c)) }
func hasZero(x uint64) bool         { return (x-ones)&^x&highs != 0 }
func hasLess(x uint64, n byte) bool { return (x-ones*uint64(n))&^x&highs != 0 }

// plainWord reports whether all eight bytes of x are plain (see plain).
func plainWord(x uint64) bool {
	return x&highs == 0 && !hasLess(x, 0x20) && !hasByte(x, '"') && !hasByte(x, '\\')
}

// rawStringLen is the length of the string body at the start of s, up to its
// closing quote (or the end of s), stepping over escapes.
func rawStringLen(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			return i
		case '\\':
			i++
		}
	}
	return len(s)
}

// canonicalU reports whether hex, the four digits after a \u that decoded
// to r, are how JCS writes r: only the control characters without a short
// escape, as 00 and two lowercase digits.
func canonicalU(hex string, r rune) bool {
	switch r {
	case '\b', '\t', '\n', '\f', '\r':
		return false
	}
	return r < 0x20 && hex == "00"+hexDigits[r>>4:r>>4+1]+hexDigits[r&0xF:r&0xF+1]
}

// unicodeEscape reads XXXX after \u (and a following low surrogate escape).
func (p *parser) unicodeEscape() (rune, error) {
	hi, err := p.hex4()
	if err != nil {
		return 0, err
	}
	switch {
	case hi >= 0xDC00 && hi <= 0xDFFF:
		return 0, p.fail(cerr.JSONLoneSurrogate, "lone low surrogate \\u%04x", hi)
	case hi < 0xD800 || hi > 0xDBFF:
		return hi, nil
	}
	if len(p.s)-p.i < 6 || p.s[p.i] != '\\' || p.s[p.i+1] != 'u' {
		return 0, p.fail(cerr.JSONLoneSurrogate, "lone high surrogate \\u%04x", hi)
	}
	p.i += 2
	lo, err := p.hex4()
	if err != nil {
		return 0, err
	}
	if lo < 0xDC00 || lo > 0xDFFF {
		return 0, p.fail(cerr.JSONLoneSurrogate, "high surrogate \\u%04x followed by \\u%04x", hi, lo)
	}
	return 0x10000 + (hi-0xD800)<<10 + (lo - 0xDC00), nil
}

func (p *parser) hex4() (rune, error) {
	if len(p.s)-p.i < 4 {
		return 0, p.fail(cerr.JSONSyntax, "truncated \\u escape")
	}
	var r rune
	for k := 0; k < 4; k++ {
		c := p.s[p.i+k]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, p.fail(cerr.JSONSyntax, "invalid hex digit in \\u escape")
		}
		r = r<<4 | rune(d)
	}
	p.i += 4
	return r, nil
}

// number parses a JSON number and keeps its canonical ES6 text.
func (p *parser) number() (Value, error) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	digits := p.i
	if p.i < len(p.s) && p.s[p.i] == '0' {
		p.i++
	} else if p.i < len(p.s) && p.s[p.i] >= '1' && p.s[p.i] <= '9' {
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
	} else {
		return Value{}, p.fail(cerr.JSONSyntax, "invalid number")
	}
	intDigits := p.i - digits
	simple := true
	if p.i < len(p.s) && p.s[p.i] == '.' {
		simple = false
		p.i++
		if !p.digits() {
			return Value{}, p.fail(cerr.JSONSyntax, "invalid number: digits expected after '.'")
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		simple = false
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if !p.digits() {
			return Value{}, p.fail(cerr.JSONSyntax, "invalid number: digits expected in exponent")
		}
	}
	text := p.s[start:p.i]
	// Integers of up to 15 digits are exact doubles whose ES6 form is the
	// literal itself: the common case costs no float conversion.
	if simple && intDigits <= 15 {
		if text == "-0" {
			p.dirty++
			text = "0"
		}
		return Value{kind: Number, s: text}, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if math.IsInf(f, 0) {
		return Value{}, p.fail(cerr.JSONNumberOutOfRange, "number %s overflows an IEEE-754 double", clip(text))
	}
	if err != nil && !isRangeErr(err) {
		return Value{}, p.fail(cerr.JSONSyntax, "invalid number %s", clip(text))
	}
	canonical, ok := formatNumber(f)
	if !ok {
		return Value{}, p.fail(cerr.JSONNumberOutOfRange, "number %s cannot be represented", clip(text))
	}
	if canonical == text {
		canonical = text // the input's text, which rawContainer looks for
	} else {
		p.dirty++
	}
	return Value{kind: Number, s: canonical}, nil
}

func (p *parser) digits() bool {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
