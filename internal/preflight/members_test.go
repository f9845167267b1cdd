package preflight

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/crawlcheck/verifier/internal/corecall"
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

// TestParseHandoff: the one-pass reading of the core's handoff gives what
// encoding/json reads of the same bytes, for every continuity_handoff
// vector and for tool texts with every escape RFC 8785 writes.
func TestParseHandoff(t *testing.T) {
	var answers [][]byte
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "ops", "continuity_handoff", "*.json"))
	if len(paths) == 0 {
		t.Fatal("no continuity_handoff vectors")
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Request  json.RawMessage `json:"request"`
			Response struct{ OK bool }
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		if !v.Response.OK {
			continue // a refused request: no handoff to read
		}
		raw, err := corecall.Call("continuity_handoff", v.Request)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		answers = append(answers, raw)
	}
	// A handed tool's text as the core writes it: control characters as
	// \b \f \n \r \t or \u00XX, quotes and backslashes escaped, the rest
	// (DEL, U+2028, astral characters) as they are.
	answers = append(answers, []byte(`{"calls":{"names":["a\"b"],"unlisted":true},"instructions":"x\u001fy","record":`+
		`{"effect":"proceed","kind":"crawlcheck-continuity-record","record_sha256":"00"},"session":"proceed",`+
		`"tools":[{"name":"a\"b","tool":"{\"d\":\"\\\\ \b\f\n\r\t\u0000\u001f \u007f\u2028 é 😀\",\"name\":\"a\\\"b\"}"},{"name":"","tool":""},`+
		// Escapes RFC 8785 does not write, read as encoding/json reads them.
		`{"name":"c","tool":"\/\u00e9\ud83d\ude00\u0041"}],"withheld":[]}`))
	for _, raw := range answers {
		got, err := readHandoff(raw, true)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		var want struct {
			Record json.RawMessage `json:"record"`
			Handoff
		}
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		wantRec, err := ParseRecord(want.Record)
		if err != nil {
			t.Fatal(err)
		}
		wantRec.Handoff = &want.Handoff
		if !reflect.DeepEqual(got, wantRec) {
			t.Errorf("%.300s:\n got  %+v\n want %+v", raw, got.Handoff, wantRec.Handoff)
		}
		// A host that hands no tools on gets the rest of it.
		none, err := readHandoff(raw, false)
		wantRec.Handoff.Tools = nil
		if err != nil || !reflect.DeepEqual(none, wantRec) {
			t.Errorf("%.300s without tools:\n got  %+v\n want %+v", raw, none.Handoff, wantRec.Handoff)
		}
	}
}

// readHandoff reads a continuity_handoff answer as the engine's executor
// reads its hand action and record.
func readHandoff(raw []byte, tools bool) (Record, error) {
	fields, err := membersOfValid(raw)
	if err != nil {
		return Record{}, err
	}
	rec, err := ParseRecord(fields["record"])
	if err != nil {
		return Record{}, err
	}
	rec.Handoff, err = handoffOf(fields, tools)
	return rec, err
}
