package req

import (
	"time"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
)

// Reader reads the fields of a request object in the order an op needs
// them and keeps the first error: after it every read answers the zero
// value without looking, so an op reads its fields one after another and
// checks Err once, and the error it answers is the first one in that
// order. Paths in messages come from the object's Path.
type Reader struct {
	O   Obj
	err error
}

// Read starts reading o.
func (o Obj) Read() *Reader { return &Reader{O: o} }

// Err is the first error a read met, nil when none did.
func (r *Reader) Err() error { return r.err }

// Failed reports whether a read has failed.
func (r *Reader) Failed() bool { return r.err != nil }

// Fail records err unless an earlier error is kept; it reports whether err
// was nil.
func (r *Reader) Fail(err error) bool {
	if r.err == nil {
		r.err = err
	}
	return err == nil
}

// In records err, if any, as an error in the named field (its message
// prefixed with the field's path).
func (r *Reader) In(name string, err error) bool { return r.Fail(cerr.In(r.Field(name), err)) }

// Field is the path of a field for messages ("request.lock").
func (r *Reader) Field(name string) string { return r.O.field(name) }

// Has reports whether the field is present and not null.
func (r *Reader) Has(name string) bool { return r.O.Has(name) }

// Value returns a field's value (null when absent).
func (r *Reader) Value(name string) canon.Value { return r.O.Value(name) }

// Str reads a string field (Obj.Str).
func (r *Reader) Str(name string, required bool) string {
	if r.err != nil {
		return ""
	}
	s, err := r.O.Str(name, required)
	r.Fail(err)
	return s
}

// OneOf reads a string field that must be one of allowed (Obj.OneOf).
func (r *Reader) OneOf(name, def string, allowed ...string) string {
	if r.err != nil {
		return ""
	}
	s, err := r.O.OneOf(name, def, allowed...)
	r.Fail(err)
	return s
}

// Bool reads a boolean field, false when absent.
func (r *Reader) Bool(name string) bool {
	if r.err != nil {
		return false
	}
	b, err := r.O.Bool(name)
	r.Fail(err)
	return b
}

// OptBool reads a boolean field, nil when absent.
func (r *Reader) OptBool(name string) *bool {
	if r.err != nil {
		return nil
	}
	b, err := r.O.OptBool(name)
	r.Fail(err)
	return b
}

// Time reads a required time field.
func (r *Reader) Time(name string) time.Time {
	if r.err != nil {
		return time.Time{}
	}
	t, err := r.O.Time(name)
	r.Fail(err)
	return t
}

// Strings reads an array-of-strings field, nil when absent.
func (r *Reader) Strings(name string) []string {
	if r.err != nil {
		return nil
	}
	s, err := r.O.Strings(name)
	r.Fail(err)
	return s
}

// Pages reads an array of raw documents (Obj.Pages).
func (r *Reader) Pages(name string) []string {
	if r.err != nil {
		return nil
	}
	p, err := r.O.Pages(name)
	r.Fail(err)
	return p
}

// Object reads an object field; ok is false when absent.
func (r *Reader) Object(name string) (o Obj, ok bool) {
	if r.err != nil {
		return Obj{}, false
	}
	o, ok, err := r.O.Object(name)
	r.Fail(err)
	return o, ok
}

// Doc reads a document field (Obj.Doc); ok is false when absent.
func (r *Reader) Doc(name string) (v canon.Value, ok bool) {
	if r.err != nil {
		return canon.Value{}, false
	}
	v, ok, err := r.O.Doc(name)
	r.Fail(err)
	return v, ok
}

// RequiredDoc reads a document field that must be present.
func (r *Reader) RequiredDoc(name string) canon.Value {
	v, ok := r.Doc(name)
	if !ok && r.err == nil {
		r.err = cerr.New(cerr.BadRequest, "%s is required", r.Field(name))
	}
	return v
}

// Objects reads an array of objects, each with only the named fields, and
// hands each to each with its index and path ("request.evidence[2]"); the
// first error, in the array or from each, is kept. An absent field is an
// empty array. what words the element in messages ("{kid, public_key}").
func (r *Reader) Objects(name, what string, fields []string, each func(i int, o *Reader)) {
	if r.err != nil || !r.Has(name) {
		return
	}
	v := r.Value(name)
	if v.Kind() != canon.Array {
		r.err = cerr.New(cerr.BadRequest, "%s must be an array of %s", r.Field(name), what)
		return
	}
	for i, e := range v.Elems() {
		o := Obj{V: e, Path: r.Field(name) + "[" + canon.Int(int64(i)).String() + "]", att: r.O.att}
		if e.Kind() != canon.Object {
			r.err = cerr.New(cerr.BadRequest, "%s must be an object", o.Path)
			return
		}
		if !r.Fail(o.Only(fields...)) {
			return
		}
		er := o.Read()
		each(i, er)
		if !r.Fail(er.err) {
			return
		}
	}
}

// Text reads a document field as given (Obj.Text): a JSON value or the
// document's bytes as a string, unparsed.
func (r *Reader) Text(name string) canon.Value {
	if r.err != nil {
		return canon.Value{}
	}
	v, err := r.O.Text(name)
	r.Fail(err)
	return v
}

// Verbatim reads an object field the op keeps as given (Obj.Verbatim);
// ok is false when absent.
func (r *Reader) Verbatim(name string) (o Obj, ok bool) {
	if r.err != nil {
		return Obj{}, false
	}
	o, ok, err := r.O.Verbatim(name)
	r.Fail(err)
	return o, ok
}

// Page reads one raw document (Obj.Raw), "" when absent.
func (r *Reader) Page(name string, required bool) string {
	if r.err != nil {
		return ""
	}
	p, ok, err := r.O.Raw(name)
	if !r.Fail(err) {
		return ""
	}
	if !ok && required {
		r.err = cerr.New(cerr.BadRequest, "%s is required", r.Field(name))
	}
	return p
}
