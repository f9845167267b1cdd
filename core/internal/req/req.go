// Package req reads op requests: strictly parsed JSON objects whose fields
// are named, typed and checked, with errors that name the field.
//
// Unknown fields are refused: a misspelt "operator_keys" silently ignored
// would turn a signed-baseline requirement off.
//
// Under ABI 2 (ParseRaw) a document field may hold a reference to an
// attachment, {"$raw": i}, instead of the document's bytes as a JSON string
// (docs/abi.md). The accessors that read documents and strings — Str, Doc,
// Pages, Text — resolve it, so an op reads a field the same way whichever way
// it came. Fields read as JSON values (Value, Object) never resolve one: a
// server's serverInfo or a tool schema is content, and a {"$raw": 0} inside it
// is data, not a reference.
package req

import (
	"encoding/base64"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/ed25519"
	"github.com/crawlcheck/verifier/core/timefmt"
)

// Obj is a request object, or an object inside one, with its path for messages.
type Obj struct {
	V    canon.Value
	Path string
	att  *attachments // nil under ABI 1: no field is a reference

	// Keys, when set, derives a private key from its seed's text in
	// place of sig.PrivateKey: a native host's core.Keyring, which keeps
	// the keys it derived (the instance keeps none).
	Keys func(seedB64 string) (ed25519.PrivateKey, error)
}

// Parse parses a request document; it must be a JSON object.
func Parse(data []byte) (Obj, error) {
	v, err := canon.Parse(data)
	if err != nil {
		return Obj{}, cerr.In("request", err)
	}
	if v.Kind() != canon.Object {
		return Obj{}, cerr.New(cerr.BadRequest, "the request is %s, not an object", v.Kind())
	}
	return Obj{V: v, Path: "request"}, nil
}

func (o Obj) field(name string) string { return o.Path + "." + name }

func (o Obj) bad(name, format string, args ...any) error {
	return cerr.New(cerr.BadRequest, o.field(name)+" "+format, args...)
}

// Only refuses members other than the named ones.
func (o Obj) Only(names ...string) error {
next:
	for _, m := range o.V.Members() {
		for _, n := range names {
			if m.Key == n {
				continue next
			}
		}
		return cerr.New(cerr.BadRequest, "%s has unknown field %q (known: %v)", o.Path, m.Key, names)
	}
	return nil
}

// Has reports whether the field is present and not null.
func (o Obj) Has(name string) bool {
	v, ok := o.V.Get(name)
	return ok && !v.IsNull()
}

// Value returns a field's value (null when absent).
func (o Obj) Value(name string) canon.Value { v, _ := o.V.Get(name); return v }

// Str returns a string field; required fields must be present and non-empty.
func (o Obj) Str(name string, required bool) (string, error) {
	if !o.Has(name) {
		if required {
			return "", o.bad(name, "is required")
		}
		return "", nil
	}
	v := o.Value(name)
	s, ok := v.Str()
	if !ok {
		var err error
		if s, ok, err = o.resolve(v, name); err != nil {
			return "", err
		}
		if ok && !utf8.ValidString(s) {
			return "", cerr.New(cerr.JSONInvalidUTF8, "%s: attachment is not valid UTF-8", o.field(name))
		}
	}
	if !ok {
		return "", o.bad(name, "must be a string")
	}
	if required && s == "" {
		return "", o.bad(name, "must not be empty")
	}
	return s, nil
}

// OneOf returns a string field that must be one of the allowed values; def
// when absent.
func (o Obj) OneOf(name, def string, allowed ...string) (string, error) {
	s, err := o.Str(name, false)
	if err != nil || s == "" {
		return def, err
	}
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", o.bad(name, "must be one of %v, got %q", allowed, s)
}

// Bool returns a boolean field (false when absent).
func (o Obj) Bool(name string) (bool, error) {
	if !o.Has(name) {
		return false, nil
	}
	b, ok := o.Value(name).BoolValue()
	if !ok {
		return false, o.bad(name, "must be a boolean")
	}
	return b, nil
}

// OptBool returns a boolean field, nil when absent.
func (o Obj) OptBool(name string) (*bool, error) {
	if !o.Has(name) {
		return nil, nil
	}
	b, err := o.Bool(name)
	return &b, err
}

// Time returns a required RFC 3339 time field.
func (o Obj) Time(name string) (time.Time, error) {
	s, err := o.Str(name, true)
	if err != nil {
		return time.Time{}, err
	}
	t, err := timefmt.Parse(s)
	if err != nil {
		return time.Time{}, o.bad(name, "must be an RFC 3339 time, got %q", s)
	}
	return t, nil
}

// Object returns an object field; ok is false when absent.
func (o Obj) Object(name string) (Obj, bool, error) {
	if !o.Has(name) {
		return Obj{}, false, nil
	}
	v := o.Value(name)
	if v.Kind() != canon.Object {
		return Obj{}, false, o.bad(name, "must be an object")
	}
	return Obj{V: v, Path: o.field(name), att: o.att}, true, nil
}

// At is the same object named by another path in messages; its {"$raw": i}
// references still resolve against the request's attachments.
func (o Obj) At(path string) Obj {
	o.Path = path
	return o
}

// Verbatim is Object for a field whose value the op keeps as given (a
// receipt signs its inputs): under ABI 2 it refuses one holding {"$raw": …}
// anywhere, since no reference in it would be resolved.
func (o Obj) Verbatim(name string) (Obj, bool, error) {
	obj, ok, err := o.Object(name)
	if err == nil && ok && o.att != nil && hasReference(obj.V) {
		return Obj{}, false, o.bad(name, "is kept as given, so it cannot hold {\"$raw\": …} references: send its documents as strings")
	}
	obj.att = nil
	return obj, ok, err
}

func hasReference(v canon.Value) bool {
	for _, m := range v.Members() {
		if m.Key == "$raw" || hasReference(m.Value) {
			return true
		}
	}
	for _, e := range v.Elems() {
		if hasReference(e) {
			return true
		}
	}
	return false
}

// Strings returns an array-of-strings field (nil when absent).
func (o Obj) Strings(name string) ([]string, error) {
	if !o.Has(name) {
		return nil, nil
	}
	v := o.Value(name)
	if v.Kind() != canon.Array {
		return nil, o.bad(name, "must be an array of strings")
	}
	out := make([]string, len(v.Elems()))
	for i, e := range v.Elems() {
		s, ok := e.Str()
		if !ok {
			return nil, o.bad(name, "must be an array of strings (element %d is %s)", i, e.Kind())
		}
		out[i] = s
	}
	return out, nil
}

// Pages returns an array of raw documents: each element is a string (the
// document's text), {"base64": "..."} or, under ABI 2, {"$raw": i} (its exact
// bytes, for a host that holds bytes which may not be valid UTF-8: the core,
// not the host, must be the one to refuse them).
func (o Obj) Pages(name string) ([]string, error) {
	if !o.Has(name) {
		return nil, nil
	}
	v := o.Value(name)
	if v.Kind() != canon.Array {
		return nil, o.bad(name, "must be an array")
	}
	out := make([]string, len(v.Elems()))
	for i, e := range v.Elems() {
		s, err := o.rawDoc(e, name+"["+canon.Int(int64(i)).String()+"]")
		if why, ok := err.(rawDocError); ok {
			return nil, o.bad(name, "element %d%s", i, string(why))
		} else if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// Raw returns one raw document, as an element of Pages is given; ok is
// false when absent.
func (o Obj) Raw(name string) (s string, ok bool, err error) {
	if !o.Has(name) {
		return "", false, nil
	}
	s, err = o.rawDoc(o.Value(name), name)
	if why, ok := err.(rawDocError); ok {
		return "", true, o.bad(name, "%s", strings.TrimLeft(string(why), ": "))
	} else if err != nil {
		return "", true, err
	}
	return s, true, nil
}

// rawDocError is why a value is not a raw document; the caller names the
// field.
type rawDocError string

func (e rawDocError) Error() string { return string(e) }

func (o Obj) rawDoc(e canon.Value, path string) (string, error) {
	if s, ok := e.Str(); ok {
		return s, nil
	}
	if s, ok, err := o.resolve(e, path); err != nil {
		return "", err
	} else if ok {
		return s, nil
	}
	b64, _ := e.Get("base64")
	s, ok := b64.Str()
	if e.Kind() != canon.Object || len(e.Members()) != 1 || !ok {
		return "", rawDocError(" must be a string or {\"base64\": string}")
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", rawDocError(": invalid base64")
	}
	return string(raw), nil
}

// Doc returns a document field: a JSON value, or a string holding the
// document's bytes, parsed strictly. ok is false when absent.
func (o Obj) Doc(name string) (v canon.Value, ok bool, err error) {
	if !o.Has(name) {
		return v, false, nil
	}
	v = o.Value(name)
	s, isStr, err := o.text(name)
	if err != nil {
		return v, false, err
	}
	if isStr {
		v, err = canon.ParseString(s)
		if err != nil {
			return v, false, cerr.In(o.field(name), err)
		}
	}
	return v, true, nil
}

// Text returns a document field as given, without parsing it: a JSON value,
// or a string holding the document's bytes (an attachment's under ABI 2,
// which need not be valid UTF-8). For a document whose parse failure is an
// answer, not an error (a receipt from an issuer). Null when absent.
func (o Obj) Text(name string) (canon.Value, error) {
	s, ok, err := o.text(name)
	if err != nil || !ok {
		return o.Value(name), err
	}
	return canon.Str(s), nil
}

// DocText returns the bytes of a document field given as a string or, under
// ABI 2, an attachment; ok is false when it is absent or a JSON value. A
// cache keys a parsed document by them.
func (o Obj) DocText(name string) (string, bool, error) { return o.text(name) }

// text returns a string field's string, or the bytes of the attachment a
// reference in it names; ok is false when it is neither.
func (o Obj) text(name string) (string, bool, error) {
	v := o.Value(name)
	if s, ok := v.Str(); ok {
		return s, true, nil
	}
	return o.resolve(v, name)
}

// attachments are the documents of an ABI-2 request: frames of
// little-endian uint32 length, then that many bytes.
type attachments struct {
	frames [][]byte
}

// ParseRaw parses an ABI-2 request and its attachments. An attachment that
// no {"$raw": i} in the request names is refused here, before any op runs;
// a reference is resolved (and an index out of range refused) where a field
// is read. A field resolves to the attachment's bytes in place (see
// resolve): the caller keeps attachments unchanged until the call returns.
func ParseRaw(data, attachments []byte) (Obj, error) {
	att, err := splitFrames(attachments)
	if err != nil {
		return Obj{}, err
	}
	return ParseParts(data, att.frames)
}

// ParseParts is ParseRaw with the attachments given one by one, as a Go
// host holds them, rather than framed: they are read in place as well.
func ParseParts(data []byte, parts [][]byte) (Obj, error) {
	o, err := Parse(data)
	if err != nil {
		return o, err
	}
	att := &attachments{frames: parts}
	o.att = att
	named := make([]bool, len(att.frames))
	markReferences(o.V, named)
	for i, ok := range named {
		if !ok {
			return Obj{}, cerr.New(cerr.BadRequest, "attachment %d of %d is not referenced by any field", i, len(named))
		}
	}
	return o, nil
}

// markReferences marks the attachments that a {"$raw": i} anywhere in v
// names. Anywhere: which of them a field resolves depends on the op, but an
// attachment nothing names is surely a host's mistake.
func markReferences(v canon.Value, named []bool) {
	if ms := v.Members(); len(ms) == 1 && ms[0].Key == "$raw" {
		if i, ok := index(ms[0].Value, len(named)); ok && i < len(named) {
			named[i] = true
		}
		return
	}
	for _, m := range v.Members() {
		markReferences(m.Value, named)
	}
	for _, e := range v.Elems() {
		markReferences(e, named)
	}
}

// index reads the attachment index of a reference: a non-negative integer;
// any value past n is returned as n.
func index(v canon.Value, n int) (int, bool) {
	digits, isNum := v.NumberText()
	if !isNum || digits == "" {
		return 0, false
	}
	i := 0
	for _, c := range []byte(digits) {
		if c < '0' || c > '9' {
			return 0, false
		}
		if i <= n { // past n it is out of range; stop before it could overflow
			i = i*10 + int(c-'0')
		}
	}
	return min(i, n), true
}

func splitFrames(b []byte) (*attachments, error) {
	a := &attachments{}
	for len(b) > 0 {
		i := canon.Int(int64(len(a.frames))).String()
		if len(b) < 4 {
			return nil, cerr.New(cerr.BadRequest, "attachments: frame "+i+" has %d bytes where a 4-byte length belongs", len(b))
		}
		n := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24
		if n > uint64(len(b)-4) {
			return nil, cerr.New(cerr.BadRequest, "attachments: frame "+i+" declares %d bytes, %d follow", int64(n), len(b)-4)
		}
		a.frames = append(a.frames, b[4:4+n])
		b = b[4+n:]
	}
	return a, nil
}

// resolve returns the bytes of the attachment v names, if v is a reference
// {"$raw": i} of an ABI-2 request; ok is false for any other value.
func (o Obj) resolve(v canon.Value, name string) (string, bool, error) {
	ms := v.Members()
	if o.att == nil || v.Kind() != canon.Object || len(ms) != 1 || ms[0].Key != "$raw" {
		return "", false, nil
	}
	n := len(o.att.frames)
	i, ok := index(ms[0].Value, n)
	switch {
	case !ok:
		return "", false, o.bad(name, "is a reference: {\"$raw\": <attachment index>}, a non-negative integer")
	case i >= n:
		return "", false, o.bad(name, "names an attachment the request does not have (it has %d)", n)
	}
	// The attachment's bytes, not a copy: every host hands them over for
	// the call and does not change them during it (the wasm module's and
	// the C library's buffers are the host's until the call returns), and
	// nothing of a request outlives its call (the lockfile cache parses its
	// own copy). A copy here was a tenth of a native 1,000-tool check and
	// one more list-sized buffer at crawlcheck lock's peak.
	f := o.att.frames[i]
	return unsafe.String(unsafe.SliceData(f), len(f)), true, nil
}
