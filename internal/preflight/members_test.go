package preflight

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestMembersOfValid: for any valid JSON, the one-pass split the recorder's
// already-decoded frames take gives members' answer (the same members and
// bytes, the same refusal of a repeated name).
func TestMembersOfValid(t *testing.T) {
	docs := []string{
		`{}`, ` { } `, `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","x":[1,{"y":"]}"}]}],"nextCursor":"c"}}`,
		"{\"a\" : 1 ,\n\t\"b\":true , \"c\":null,\"d\":-1.5e3,\"e\":\"q\\\"}\" }",
		`{"\u0072esult":{"tools":[]},"id":"7"}`, `{"result":1,"result":2}`, `{"r\u00e9sult":[]}`,
		"{\"\xff\":1}", `{"a":[[],{},[{}]],"b":"\\"}`, `null`, `[1]`, `"s"`, `7`,
	}
	for _, d := range docs {
		if !json.Valid([]byte(d)) {
			t.Fatalf("not valid: %s", d)
		}
		want, werr := members([]byte(d))
		got, gerr := membersOfValid([]byte(d))
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got  %q %v\n want %q %v", d, got, gerr, want, werr)
		}
	}
}

func FuzzMembersOfValid(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`))
	f.Add([]byte(`{"a" : [1, "x\"]"], "b":{}}`))
	f.Fuzz(func(t *testing.T, d []byte) {
		if !json.Valid(d) {
			return
		}
		want, werr := members(d)
		got, gerr := membersOfValid(d)
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got  %q %v\n want %q %v", d, got, gerr, want, werr)
		}
	})
}
