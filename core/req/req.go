// Package req reads op requests: strictly parsed JSON objects whose fields
// are named, typed and checked, with errors that name the field.
//
// Unknown fields are refused: a misspelt "operator_keys" silently ignored
// would turn a signed-baseline requirement off.
package req

import (
	"encoding/base64"
	"time"

	"github.com/crawlcheck/verifier/core/canon"
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/timefmt"
)

// Obj is a request object, or an object inside one, with its path for messages.
type Obj struct {
	V    canon.Value
	Path string
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
	s, ok := o.Value(name).Str()
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
	return Obj{V: v, Path: o.field(name)}, true, nil
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
// document's text) or {"base64": "..."} (its exact bytes, for a host that
// holds bytes which may not be valid UTF-8: the core, not the host, must be
// the one to refuse them).
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
		if s, ok := e.Str(); ok {
			out[i] = s
			continue
		}
		b64, _ := e.Get("base64")
		s, ok := b64.Str()
		if e.Kind() != canon.Object || len(e.Members()) != 1 || !ok {
			return nil, o.bad(name, "element %d must be a string or {\"base64\": string}", i)
		}
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, o.bad(name, "element %d: invalid base64", i)
		}
		out[i] = string(raw)
	}
	return out, nil
}

// Doc returns a document field: a JSON value, or a string holding the
// document's bytes, parsed strictly. ok is false when absent.
func (o Obj) Doc(name string) (v canon.Value, ok bool, err error) {
	if !o.Has(name) {
		return v, false, nil
	}
	v = o.Value(name)
	if s, isStr := v.Str(); isStr {
		v, err = canon.ParseString(s)
		if err != nil {
			return v, false, cerr.In(o.field(name), err)
		}
	}
	return v, true, nil
}
