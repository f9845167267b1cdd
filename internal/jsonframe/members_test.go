package jsonframe

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestMembers: the framing gives encoding/json's members for every object
// of distinct members, and refuses what is not one.
func TestMembers(t *testing.T) {
	big := `"` + strings.Repeat(`a\"b\\c`, 4000) + `"`
	for _, body := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a" : "x\"}y" , "b":[1,{"c":"]"}],"d":null}`,
		`{"lock":` + big + `,"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`,
		"{\"\\u0061b\":true,\n\"c\":{\"d\":[[],{}]}}\r\n", `{"n":-1.5e3}`,
		`{"a":"x\\","b":"\\\"\\\\","c":["\\"]}`,
	} {
		got, ok := Members([]byte(body))
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("Members(%.60s) = %v, %v; want %v", body, got, ok, want)
		}
	}
	for _, body := range []string{
		``, `[]`, `"x"`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1} x`, `{"a":1}{}`, `{"a":1,"a":2}`,
		`{"a":[1}`, `{"a":{"b":1]}`, `{"a":"x}`, `{"a":tru}`, `{"a":1 2}`, `{a:1}`, `{"a":"\x"}`,
		`{"a":1,"\u0061":2}`, `{"a":"x\"}`, `{"a":["\\\"]}`,
	} {
		if q, ok := Members([]byte(body)); ok {
			t.Errorf("Members(%s) = %v, want refused", body, q)
		}
	}
}

// TestMembersKnown: a value that begins with a known value's bytes is
// framed as that value, and what follows it is still read: trailing bytes,
// a longer string or a literal that only begins like it are framed as
// without known values.
func TestMembersKnown(t *testing.T) {
	lock := `"` + strings.Repeat(`a\"b\\c`, 4000) + `"`
	known := []byte(lock)
	for _, body := range []string{
		`{"lock":` + lock + `,"tools":[]}`,
		`{"tools":[` + lock + `],"lock":` + lock + `}`,
		`{"lock":` + lock[:len(lock)-1] + `x"}`, // longer than the known string
		`{"lock":` + lock + ` 1}`,               // refused: bytes after the value
		`{"lock":` + lock + `,"lock":1}`,        // refused: a name twice
		`{"n":1}`, `{"n":1.5}`,
	} {
		got, gotOK := Members([]byte(body), known, []byte(`1`))
		want, wantOK := Members([]byte(body))
		if gotOK != wantOK || !reflect.DeepEqual(got, want) {
			t.Errorf("Members(%.40s…, known) = %v, %v; without known %v", body, len(got), gotOK, wantOK)
		}
	}
	if q, _ := Members([]byte(`{"lock":`+lock+`}`), known); string(q["lock"]) != lock {
		t.Error("a known value framed otherwise")
	}
}
