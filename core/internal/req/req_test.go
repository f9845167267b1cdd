package req

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/core/cerr"
)

func mustParse(t *testing.T, s string) Obj {
	t.Helper()
	o, err := Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func wantErr(t *testing.T, err error, code cerr.Code, msg string) {
	t.Helper()
	if cerr.CodeOf(err) != code || !strings.Contains(cerr.Message(err), msg) {
		t.Errorf("got %v, want %s containing %q", err, code, msg)
	}
}

func TestParse(t *testing.T) {
	_, err := Parse([]byte(`[]`))
	wantErr(t, err, cerr.BadRequest, "the request is an array, not an object")
	_, err = Parse([]byte(`{"a":1,"a":2}`))
	wantErr(t, err, cerr.JSONDuplicateKey, "request: ")
	_, err = Parse([]byte(`{`))
	wantErr(t, err, cerr.JSONSyntax, "request: ")
	if o := mustParse(t, `{}`); o.Path != "request" {
		t.Errorf("path %q", o.Path)
	}
}

func TestFields(t *testing.T) {
	o := mustParse(t, `{"s":"x","e":"","n":null,"i":1,"b":true,"t":"2026-10-07T12:45:00+02:00","o":{"k":"v"},
		"ss":["a","b"],"bad":[1],"doc":"{\"a\":1}","docv":{"a":1},"baddoc":"{\"a\":1,\"a\":1}"}`)

	wantErr(t, o.Only("s"), cerr.BadRequest, `request has unknown field "b" (known: [s])`)
	if err := o.Only("s", "e", "n", "i", "b", "t", "o", "ss", "bad", "doc", "docv", "baddoc"); err != nil {
		t.Error(err)
	}
	if !o.Has("s") || o.Has("n") || o.Has("missing") {
		t.Error("Has: null and absent are not present")
	}

	if s, err := o.Str("s", true); s != "x" || err != nil {
		t.Errorf("Str: %q %v", s, err)
	}
	if s, err := o.Str("n", false); s != "" || err != nil {
		t.Errorf("optional null: %q %v", s, err)
	}
	_, err := o.Str("missing", true)
	wantErr(t, err, cerr.BadRequest, "request.missing is required")
	_, err = o.Str("e", true)
	wantErr(t, err, cerr.BadRequest, "request.e must not be empty")
	_, err = o.Str("i", false)
	wantErr(t, err, cerr.BadRequest, "request.i must be a string")

	if s, err := o.OneOf("missing", "def", "a", "b"); s != "def" || err != nil {
		t.Errorf("OneOf default: %q %v", s, err)
	}
	if s, err := o.OneOf("s", "def", "x", "y"); s != "x" || err != nil {
		t.Errorf("OneOf: %q %v", s, err)
	}
	_, err = o.OneOf("s", "def", "a", "b")
	wantErr(t, err, cerr.BadRequest, `request.s must be one of [a b], got "x"`)

	if b, err := o.Bool("b"); !b || err != nil {
		t.Errorf("Bool: %v %v", b, err)
	}
	if b, err := o.Bool("missing"); b || err != nil {
		t.Errorf("Bool absent: %v %v", b, err)
	}
	_, err = o.Bool("s")
	wantErr(t, err, cerr.BadRequest, "request.s must be a boolean")
	if p, err := o.OptBool("missing"); p != nil || err != nil {
		t.Errorf("OptBool absent: %v %v", p, err)
	}
	if p, err := o.OptBool("b"); p == nil || !*p || err != nil {
		t.Errorf("OptBool: %v %v", p, err)
	}

	if tm, err := o.Time("t"); err != nil || !tm.Equal(time.Date(2026, 10, 7, 10, 45, 0, 0, time.UTC)) || tm.Location() != time.UTC {
		t.Errorf("Time: %v %v", tm, err)
	}
	_, err = o.Time("s")
	wantErr(t, err, cerr.BadRequest, `request.s must be an RFC 3339 time, got "x"`)
	_, err = o.Time("missing")
	wantErr(t, err, cerr.BadRequest, "request.missing is required")

	sub, ok, err := o.Object("o")
	if !ok || err != nil || sub.Path != "request.o" {
		t.Errorf("Object: %+v %v %v", sub, ok, err)
	}
	_, err = sub.Str("k", false)
	if err != nil {
		t.Error(err)
	}
	_, err = sub.Bool("k")
	wantErr(t, err, cerr.BadRequest, "request.o.k must be a boolean")
	if _, ok, err := o.Object("missing"); ok || err != nil {
		t.Error("Object absent")
	}
	_, _, err = o.Object("s")
	wantErr(t, err, cerr.BadRequest, "request.s must be an object")

	if ss, err := o.Strings("ss"); len(ss) != 2 || ss[1] != "b" || err != nil {
		t.Errorf("Strings: %v %v", ss, err)
	}
	_, err = o.Strings("bad")
	wantErr(t, err, cerr.BadRequest, "element 0 is a number")
	_, err = o.Strings("s")
	wantErr(t, err, cerr.BadRequest, "request.s must be an array of strings")

	for _, name := range []string{"doc", "docv"} {
		if v, ok, err := o.Doc(name); !ok || err != nil || v.String() != `{"a":1}` {
			t.Errorf("Doc(%s): %s %v %v", name, v, ok, err)
		}
	}
	if _, ok, err := o.Doc("n"); ok || err != nil {
		t.Error("Doc of null")
	}
	_, _, err = o.Doc("baddoc")
	wantErr(t, err, cerr.JSONDuplicateKey, "request.baddoc: ")
}

func TestPages(t *testing.T) {
	raw := "{\"tools\":[{\"name\":\"\xff\"}]}"
	o := mustParse(t, `{"p":["{\"tools\":[]}",{"base64":"`+base64.StdEncoding.EncodeToString([]byte(raw))+`"}],"n":null}`)
	ps, err := o.Pages("p")
	if err != nil || len(ps) != 2 || ps[0] != `{"tools":[]}` || ps[1] != raw {
		t.Errorf("Pages: %q %v", ps, err)
	}
	if ps, err := o.Pages("n"); ps != nil || err != nil {
		t.Error("Pages of null")
	}
	for doc, msg := range map[string]string{
		`{"p":"x"}`:                          "request.p must be an array",
		`{"p":[1]}`:                          "element 0 must be a string",
		`{"p":[{"base64":"AA==","x":1}]}`:    "element 0 must be a string",
		`{"p":[{"b64":"AA=="}]}`:             "element 0 must be a string",
		`{"p":[{"base64":1}]}`:               "element 0 must be a string",
		`{"p":["",{"base64":"not base64"}]}`: "element 1: invalid base64",
	} {
		_, err := mustParse(t, doc).Pages("p")
		wantErr(t, err, cerr.BadRequest, msg)
	}
}

func TestReaderKeepsTheFirstError(t *testing.T) {
	o := mustParse(t, `{"a":1,"b":"x","t":"not a time"}`)
	rd := o.Read()
	if s := rd.Str("b", true); s != "x" || rd.Err() != nil {
		t.Fatalf("Str: %q %v", s, rd.Err())
	}
	_ = rd.Str("a", false) // the first error
	_ = rd.Time("t")       // a second one, not kept
	_ = rd.Str("missing", true)
	wantErr(t, rd.Err(), cerr.BadRequest, "request.a must be a string")
	if s := rd.Str("b", true); s != "" {
		t.Errorf("a read after an error answered %q, want the zero value", s)
	}
}

func TestReaderObjects(t *testing.T) {
	o := mustParse(t, `{"xs":[{"k":"a"},{"k":"b"}],"bad":[{"k":"a"},{"k":"b","z":1}],"notarr":{},"notobj":[1]}`)
	rd := o.Read()
	var got []string
	rd.Objects("xs", "{k}", []string{"k"}, func(i int, e *Reader) { got = append(got, e.Str("k", true)+e.Field("k")) })
	if rd.Err() != nil || strings.Join(got, ",") != "arequest.xs[0].k,brequest.xs[1].k" {
		t.Errorf("Objects: %q %v", got, rd.Err())
	}
	for field, msg := range map[string]string{
		"bad":    `request.bad[1] has unknown field "z"`,
		"notarr": "request.notarr must be an array of {k}",
		"notobj": "request.notobj[0] must be an object",
	} {
		rd := o.Read()
		rd.Objects(field, "{k}", []string{"k"}, func(int, *Reader) {})
		wantErr(t, rd.Err(), cerr.BadRequest, msg)
	}
	rd = o.Read()
	rd.Objects("xs", "{k}", []string{"k"}, func(i int, e *Reader) {
		if i == 0 {
			e.Fail(cerr.New(cerr.KeyInvalid, "first"))
		} else {
			t.Error("Objects went on after an element failed")
		}
	})
	wantErr(t, rd.Err(), cerr.KeyInvalid, "first")
}
