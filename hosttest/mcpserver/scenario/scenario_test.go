package scenario

import (
	"slices"
	"strings"
	"testing"
)

func TestEditObjectKeepsOtherBytes(t *testing.T) {
	const tool = `{"n\u0061me":"a","description":"old","x":[1.0,"\u00e9"],"annotations":{"readOnlyHint":true}}`
	got, err := editObject([]byte(tool), []byte(`{"description":"new","title":"T"}`), []string{"annotations"})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"n\u0061me":"a","description":"new","x":[1.0,"\u00e9"],"title":"T"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// The escaped key still matches by its value.
	if name := toolName(got); name != "a" {
		t.Errorf("toolName = %q", name)
	}
}

func TestEditObjectRefusesNonObjects(t *testing.T) {
	for _, in := range []string{`null`, `[1]`, `"s"`} {
		if _, err := editObject([]byte(in), []byte(`{"a":1}`), nil); err == nil {
			t.Errorf("editObject(%s) succeeded", in)
		}
	}
}

func mustParse(t *testing.T, doc string) *File {
	t.Helper()
	f, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestPages(t *testing.T) {
	tools := `[{"name":"a"},{"name":"b"},{"name":"c"}]`
	cases := []struct {
		knobs     string
		cursor    *string
		want      string
		wantLast  bool
		wantError bool
	}{
		{`"page_size":0`, nil, `{"tools":[{"name":"a"},{"name":"b"},{"name":"c"}]}`, true, false},
		{`"page_size":2`, nil, `{"tools":[{"name":"a"},{"name":"b"}],"nextCursor":"cursor-2"}`, false, false},
		{`"page_size":2`, ptr("cursor-2"), `{"tools":[{"name":"c"}]}`, true, false},
		{`"page_size":2`, ptr("cursor-9"), `{"tools":[]}`, true, false},
		{`"page_size":2`, ptr("bogus"), ``, false, true},
		{`"page_size":2,"cursor":"stuck"`, ptr("cursor-2"), `{"tools":[{"name":"c"}],"nextCursor":"cursor-2"}`, true, false},
		{`"page_size":2,"cursor":"empty"`, nil, `{"tools":[{"name":"a"},{"name":"b"}],"nextCursor":""}`, false, false},
		{`"page_size":2,"cursor":"empty"`, ptr(""), `{"tools":[{"name":"c"}]}`, true, false},
		{`"page_size":2,"pages_raw":{"2":"{not json"}`, ptr("cursor-2"), `{not json`, true, false},
	}
	for _, c := range cases {
		st := NewState(mustParse(t, `{`+c.knobs+`,"tools":`+tools+`}`))
		cursor, has := "", c.cursor != nil
		if has {
			cursor = *c.cursor
		}
		got, last, rerr := st.Page(cursor, has)
		if (rerr != nil) != c.wantError || string(got) != c.want || last != c.wantLast {
			t.Errorf("%s cursor %v: got %s last=%v err=%v; want %s last=%v err=%v", c.knobs, c.cursor, got, last, rerr, c.want, c.wantLast, c.wantError)
		}
	}
}

func ptr(s string) *string { return &s }

func TestMutationAfterListings(t *testing.T) {
	st := NewState(mustParse(t, `{"tools":[{"name":"a"}],"mutations":[
		{"after_lists":2,"notify":true,"ops":[{"op":"replace","name":"a","tool":{"name":"a","v":2}}]}]}`))
	for i, want := range []bool{false, true, false} {
		notify, err := st.ListingCompleted()
		if err != nil || notify != want {
			t.Fatalf("listing %d: notify %v err %v, want %v", i+1, notify, err, want)
		}
	}
	if got, _, _ := st.Page("", false); string(got) != `{"tools":[{"name":"a","v":2}]}` {
		t.Errorf("after the mutation: %s", got)
	}
}

func TestFailedMutationChangesNothing(t *testing.T) {
	st := NewState(mustParse(t, `{"tools":[{"name":"a"},{"name":"b"}]}`))
	_, err := st.ApplyAdmin([]byte(`{"ops":[{"op":"remove","name":"a"},{"op":"remove","name":"zzz"}]}`))
	if err == nil || !strings.Contains(err.Error(), `"zzz"`) {
		t.Fatalf("err = %v, want a missing-tool error", err)
	}
	if got := st.Snapshot().ToolNames; len(got) != 2 {
		t.Errorf("tools after a failed mutation: %v", got)
	}
	if _, err := st.ApplyAdmin(nil); err == nil {
		t.Error("applied an admin mutation the file does not have")
	}
}

func TestParseRefuses(t *testing.T) {
	for _, doc := range []string{
		`{"tools":[],"pagesize":2}`,
		`{"tools":[],"cursor":"sideways"}`,
		`{"tools":[],"handshake":"ssh"}`,
		`{"tools":[],"page_size":-1}`,
		`{"tools":[],"pages_raw":{"0":"x"}}`,
		`{"tools":[],"mutations":[{"ops":[]}]}`,
		`{"tools":[],"mutations":[{"ops":[{"op":"edit","name":"a"}]}]}`,
		`{"tools":[],"mutations":[{"ops":[{"op":"edit","name":"a","set":[1]}]}]}`,
		`{"tools":[]} {}`,
	} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("Parse(%s) succeeded", doc)
		}
	}
}

func TestToolsAreCompactedOnly(t *testing.T) {
	f := mustParse(t, "{\"tools\":[ {\"name\" : \"a\",\n \"name\":\"b\", \"d\":\"x  y\"}, null ]}")
	if got := string(f.Tools[0]) + " " + string(f.Tools[1]); got != `{"name":"a","name":"b","d":"x  y"} null` {
		t.Errorf("tools %s", got)
	}
	if err := mustParse(t, `{"tools":[],"pages_raw":{"1":"a\nb"}}`).checkStdio(); err == nil {
		t.Error("a raw page with a newline was accepted for stdio")
	}
}

func TestSnapshotNamesEveryCall(t *testing.T) {
	st := NewState(mustParse(t, `{"tools":[{"name":"a"}]}`))
	if got := st.Snapshot().Calls; got == nil || len(got) != 0 {
		t.Fatalf("calls before any: %#v, want []", got)
	}
	st.Called("a")
	st.Called("not-offered")
	if got := st.Snapshot().Calls; !slices.Equal(got, []string{"a", "not-offered"}) {
		t.Errorf("calls = %v", got)
	}
}
