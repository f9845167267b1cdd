package tools

import (
	"testing"

	"github.com/crawlcheck/verifier/core/internal/canon"
)

func TestVariantSpellings(t *testing.T) {
	for _, n := range []string{"Description", "DESCRIPTION", "InputSchema", "input_schema", "input-schema", "Name", "Title", "output_schema", "meta", "_Meta", "Annotations", "ICONS", "Execution"} {
		if !IsVariantSpelling(n) {
			t.Errorf("%q is read as a schema member by some client, but not a variant", n)
		}
	}
	for _, n := range []string{"description", "inputSchema", "_meta", "title", "x-vendor", "descriptions", "schema"} {
		if IsVariantSpelling(n) {
			t.Errorf("%q is not a variant spelling", n)
		}
	}
}

func TestHandoffWritesOnlyCoveredMembers(t *testing.T) {
	v, err := canon.ParseString(`[{"name":"t","description":"ok","Description":"EVIL","inputSchema":{"type":"object"},"annotations":null,"title":"T","_meta":{"ui":{"resourceUri":"ui://x"}},"x":1,"input_schema":{}}]`)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := Hash(v)
	if err != nil {
		t.Fatal(err)
	}
	tool := &ts[0]
	if got, want := string(tool.Handoff(true, true)), `{"_meta":{"ui":{"resourceUri":"ui://x"}},"description":"ok","inputSchema":{"type":"object"},"name":"t","title":"T","x":1}`; got != want {
		t.Errorf("extended handoff\n got %s\nwant %s", got, want)
	}
	if got, want := string(tool.Handoff(true, false)), `{"description":"ok","inputSchema":{"type":"object"},"name":"t"}`; got != want {
		t.Errorf("four-part handoff\n got %s\nwant %s", got, want)
	}
	h := tool.MemberHashes()
	if h[MemberUnknown] != canon.SHA256Hex(canon.Obj(canon.M("Description", canon.Str("EVIL")), canon.M("x", canon.Int(1)), canon.M("input_schema", canon.Obj()))) {
		t.Error("the unknown bucket does not cover every unnamed member")
	}
	if h[MemberMeta] != canon.SHA256Hex(canon.Obj()) || h[MemberMetaUI] != canon.SHA256Hex(canon.Obj(canon.M("resourceUri", canon.Str("ui://x")))) {
		t.Error("_meta and _meta.ui are not hashed apart")
	}
	if h[MemberIcons] != nullPartHash {
		t.Error("an absent member hashes as null")
	}
}
