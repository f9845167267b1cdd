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
type Value struct {
	kind Kind
	b    bool
	s    string // string value, or canonical number text
	arr  []Value
	obj  []Member
}

// Member is one name/value pair of an object.
type Member struct {
	Key   string
	Value Value
}

// Kind returns the JSON type.
func (v Value) Kind() Kind { return v.kind }

// IsNull reports whether v is null.
func (v Value) IsNull() bool { return v.kind == Null }

// Str returns the string and whether v is a string.
func (v Value) Str() (string, bool) { return v.s, v.kind == String }

// BoolValue returns the boolean and whether v is a boolean.
func (v Value) BoolValue() (bool, bool) { return v.b, v.kind == Bool }

// NumberText returns the canonical text of a number and whether v is one.
func (v Value) NumberText() (string, bool) { return v.s, v.kind == Number }

// Elems returns the elements of an array (nil otherwise).
func (v Value) Elems() []Value { return v.arr }

// Members returns the members of an object (nil otherwise).
func (v Value) Members() []Member { return v.obj }

// Get returns the member named key of an object.
func (v Value) Get(key string) (Value, bool) {
	for i := range v.obj {
		if v.obj[i].Key == key {
			return v.obj[i].Value, true
		}
	}
	return Value{}, false
}

// Has reports whether an object has a member named key.
func (v Value) Has(key string) bool { _, ok := v.Get(key); return ok }

// Without returns a copy of an object without the named members.
func (v Value) Without(keys ...string) Value {
	out := make([]Member, 0, len(v.obj))
next:
	for _, m := range v.obj {
		for _, k := range keys {
			if m.Key == k {
				continue next
			}
		}
		out = append(out, m)
	}
	return Value{kind: Object, obj: out}
}

// Builders. They are how the core writes its answers, lockfiles and records.

// NullValue is JSON null.
func NullValue() Value { return Value{} }

// Str makes a string. The caller guarantees valid UTF-8 (all strings in the
// core come from validated input or from the core's own constants).
func Str(s string) Value { return Value{kind: String, s: s} }

// BoolOf makes a boolean.
func BoolOf(b bool) Value { return Value{kind: Bool, b: b} }

// Int makes an integer number.
func Int(n int64) Value { return Value{kind: Number, s: formatInt(n)} }

// Arr makes an array.
func Arr(elems ...Value) Value {
	if elems == nil {
		elems = []Value{}
	}
	return Value{kind: Array, arr: elems}
}

// Obj makes an object whose members keep the given order when indented; the
// canonical form sorts them.
func Obj(members ...Member) Value {
	if members == nil {
		members = []Member{}
	}
	return Value{kind: Object, obj: members}
}

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
		return a.b == b.b
	case Number, String:
		return a.s == b.s
	case Array:
		if len(a.arr) != len(b.arr) {
			return false
		}
		for i := range a.arr {
			if !Equal(a.arr[i], b.arr[i]) {
				return false
			}
		}
		return true
	}
	if len(a.obj) != len(b.obj) {
		return false
	}
	for _, m := range a.obj {
		bv, ok := b.Get(m.Key)
		if !ok || !Equal(m.Value, bv) {
			return false
		}
	}
	return true
}

// String returns the canonical JSON text of v.
func (v Value) String() string { return string(Canonical(v)) }
