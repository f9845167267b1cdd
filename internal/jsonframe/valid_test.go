package jsonframe

import "testing"

// TestSkipValid: each step lands right after the value it starts on, in
// valid documents whose strings hold the delimiters the walk counts.
func TestSkipValid(t *testing.T) {
	for _, c := range []struct {
		doc  string
		at   int
		want string // what lies after the value
	}{
		{`"a\"}]," , 1`, 0, ` , 1`},
		{`{"a":[1,{"b":"]}"}],"c":"\\"} ,2`, 0, ` ,2`},
		{`[[],{},"[",true] x`, 0, ` x`},
		{`true,false`, 0, `,false`},
		{`-12.5e3}`, 0, `}`},
		{`  {"k":null}`, 2, ``},
	} {
		if got := c.doc[SkipValidValue([]byte(c.doc), c.at):]; got != c.want {
			t.Errorf("SkipValidValue(%q, %d) leaves %q, want %q", c.doc, c.at, got, c.want)
		}
	}
	if i := SkipSpace([]byte(" \t\r\n x"), 0); i != 5 {
		t.Errorf("SkipSpace: %d, want 5", i)
	}
	if i := SkipValidString([]byte(`"\\\\" y`), 0); i != 6 {
		t.Errorf("SkipValidString over an escaped backslash: %d, want 6", i)
	}
}
