// Package canon is the core's JSON: a strict parser, a value tree, and the
// RFC 8785 (JCS) serializer that every hash in the project is computed over.
//
// Why not encoding/json: it accepts duplicate keys (keeping the last), replaces
// invalid UTF-8 and lone surrogates with U+FFFD, and reflects on every value.
// A verifier must refuse what it cannot represent exactly, because a repaired
// document hashes the same as a document the server never sent. The parser
// here refuses duplicate keys, invalid UTF-8, lone surrogates, nesting deeper
// than MaxDepth, documents over MaxBytes and numbers that overflow a double,
// each with its own error code (core/cerr).
//
// Numbers are formatted by the ES6 rules of github.com/cyberphone/json-canonicalization
// (NumberToJSON); objects are sorted by UTF-16 code units as JCS requires. The
// serializer is our own, linear apart from the key sort (the reference
// canonicalizer sorts in O(n²)), and is cross-checked against the reference in
// tests and fuzzing.
package canon

import "unsafe"

// Limits of every document the core parses. Documented in docs/abi.md.
const (
	MaxBytes = 64 << 20 // bytes in one document
	MaxDepth = 128      // nesting of arrays and objects
)

// Kind is the JSON type of a Value.
type Kind uint8

// The JSON types.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

var kindNames = [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}

// String names the type with its article ("an array"), as messages use it.
func (k Kind) String() string { return kindNames[k] }

// Value is one JSON value. The zero Value is null.
//
// Numbers keep their canonical (ES6) text, so a number never round-trips
// through a float again. Object members keep the order they were built in;
// parsed objects are sorted in canonical order, and the serializer sorts any
// object that is not.
//
// A Value is 24 bytes, because a tool list can be millions of them: an enum
// of 26 million zeros is 52 MB of JSON, and at the 72 bytes a Value with a
// string, a slice of elements and a slice of members took, its tree alone
// was 36 times the input. So s holds everything: a string's value, a
// number's text, or — for an array or an object — its elements or members,
// as a string header whose data pointer is the first element and whose
// length is their count (see kids). The collector keeps and scans the
// elements through that pointer like through any other: it goes by the
// allocation's type, not by the pointer's. Only this file makes or reads
// such a header; every accessor checks the kind first.
//
// n is a boolean's value (1 for true) and, for an array or object parsed
// from text that was already its canonical form, that text's length (0
// otherwise): the serializer then copies the text instead of rebuilding it
// value by value (see rawText). One field for both keeps a Value 24 bytes
// and as cheap to copy as with a bool.
type Value struct {
	s    string
	kind Kind
	n    uint32
}

// arrayOf and objectOf make a container Value over its elements or members
// (the slice is kept, not copied).
func arrayOf(elems []Value) Value {
	if len(elems) == 0 {
		return Value{kind: Array}
	}
	return Value{kind: Array, s: unsafe.String((*byte)(unsafe.Pointer(&elems[0])), len(elems))}
}

func objectOf(members []Member) Value {
	if len(members) == 0 {
		return Value{kind: Object}
	}
	return Value{kind: Object, s: unsafe.String((*byte)(unsafe.Pointer(&members[0])), len(members))}
}

// kids returns the n things an array's or object's s points at.
func kids[T any](v Value) []T {
	if len(v.s) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.StringData(v.s))), len(v.s))
}

// rawText is the document text a raw array or object (n set) was parsed
// from. Its start is found through the first child, which the parser checked
// begins right after the opening bracket and points into the same text (see
// parser.rawContainer): a member name two bytes in (`{"`), a string element
// two bytes in (`["`), a number element one byte in, a container element
// one byte in, at its own start.
func rawText(v Value) string {
	return unsafe.String((*byte)(rawStart(v)), v.n)
}

func rawStart(v Value) unsafe.Pointer {
	if v.kind == Object {
		return unsafe.Add(unsafe.Pointer(unsafe.StringData(kids[Member](v)[0].Key)), -2)
	}
	e := kids[Value](v)[0]
	switch e.kind {
	case String:
		return unsafe.Add(unsafe.Pointer(unsafe.StringData(e.s)), -2)
	case Number:
		return unsafe.Add(unsafe.Pointer(unsafe.StringData(e.s)), -1)
	}
	return unsafe.Add(rawStart(e), -1)
}

// arr and obj are the elements of an array and the members of an object
// (nil for any other kind).
func (v Value) arr() []Value {
	if v.kind != Array {
		return nil
	}
	return kids[Value](v)
}

func (v Value) obj() []Member {
	if v.kind != Object {
		return nil
	}
	return kids[Member](v)
}

// Member is one name/value pair of an object.
type Member struct {
	_     [0]func() // not comparable: no equality function per [N]Member array in the binary
	Key   string
	Value Value
}

// Kind returns the JSON type.
func (v Value) Kind() Kind { return v.kind }

// IsNull reports whether v is null.
func (v Value) IsNull() bool { return v.kind == Null }

// Str returns the string and whether v is a string.
func (v Value) Str() (string, bool) {
	if v.kind != String {
		return "", false
	}
	return v.s, true
}

// BoolValue returns the boolean and whether v is a boolean.
func (v Value) BoolValue() (bool, bool) { return v.kind == Bool && v.n != 0, v.kind == Bool }

// NumberText returns the canonical text of a number and whether v is one.
func (v Value) NumberText() (string, bool) {
	if v.kind != Number {
		return "", false
	}
	return v.s, true
}

// Elems returns the elements of an array (nil otherwise, and for an empty
// array).
func (v Value) Elems() []Value { return v.arr() }

// Members returns the members of an object (nil otherwise, and for an empty
// object).
func (v Value) Members() []Member { return v.obj() }

// Get returns the member named key of an object.
func (v Value) Get(key string) (Value, bool) {
	obj := v.obj()
	for i := range obj {
		if obj[i].Key == key {
			return obj[i].Value, true
		}
	}
	return Value{}, false
}

// Has reports whether an object has a member named key.
func (v Value) Has(key string) bool { _, ok := v.Get(key); return ok }

// Without returns a copy of an object without the named members.
func (v Value) Without(keys ...string) Value {
	out := make([]Member, 0, len(v.obj()))
next:
	for _, m := range v.obj() {
		for _, k := range keys {
			if m.Key == k {
				continue next
			}
		}
		out = append(out, m)
	}
	return objectOf(out)
}

// Builders. They are how the core writes its answers, lockfiles and records.

// NullValue is JSON null.
func NullValue() Value { return Value{} }

// Str makes a string. The caller guarantees valid UTF-8 (all strings in the
// core come from validated input or from the core's own constants).
func Str(s string) Value { return Value{kind: String, s: s} }

// BoolOf makes a boolean.
func BoolOf(b bool) Value {
	if b {
		return Value{kind: Bool, n: 1}
	}
	return Value{kind: Bool}
}

// Int makes an integer number.
func Int(n int64) Value { return Value{kind: Number, s: formatInt(n)} }

// Arr makes an array.
func Arr(elems ...Value) Value { return arrayOf(elems) }

// Obj makes an object whose members keep the given order when indented; the
// canonical form sorts them.
func Obj(members ...Member) Value { return objectOf(members) }

// M makes a member.
func M(key string, v Value) Member { return Member{Key: key, Value: v} }

// StrOrNull makes a string, or null when ok is false.
func StrOrNull(s string, ok bool) Value {
	if !ok {
		return Value{}
	}
	return Str(s)
}

// Strs makes an array of strings.
func Strs(ss []string) Value {
	out := make([]Value, len(ss))
	for i, s := range ss {
		out[i] = Str(s)
	}
	return Arr(out...)
}

func formatInt(n int64) string {
	var buf [20]byte
	i := len(buf)
	u := uint64(n)
	if n < 0 {
		u = uint64(-n)
	}
	for {
		i--
		buf[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if n < 0 {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}

// Equal reports whether two values are the same JSON value (object member
// order does not matter; numbers compare by canonical text).
func Equal(a, b Value) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case Null:
		return true
	case Bool:
		return a.n == b.n
	case Number, String:
		return a.s == b.s
	case Array:
		ae, be := a.arr(), b.arr()
		if len(ae) != len(be) {
			return false
		}
		for i := range ae {
			if !Equal(ae[i], be[i]) {
				return false
			}
		}
		return true
	}
	if len(a.obj()) != len(b.obj()) {
		return false
	}
	for _, m := range a.obj() {
		bv, ok := b.Get(m.Key)
		if !ok || !Equal(m.Value, bv) {
			return false
		}
	}
	return true
}

// String returns the canonical JSON text of v.
func (v Value) String() string { return string(Canonical(v)) }
