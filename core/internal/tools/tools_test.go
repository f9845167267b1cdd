package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
)

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func parse(t testing.TB, s string) canon.Value {
	t.Helper()
	v, err := canon.ParseString(s)
	if err != nil {
		t.Fatalf("parse %s: %v", s, err)
	}
	return v
}

func hashList(t testing.TB, s string) []Tool {
	t.Helper()
	ts, err := Hash(parse(t, s))
	if err != nil {
		t.Fatalf("Hash(%s): %v", s, err)
	}
	return ts
}

// Each case gives a tool as a server might send it and, written out by hand,
// the canonical strings the spec formulas hash: the whole tool
// {annotations, description, inputSchema, name} with absent parts as null,
// each part alone, and agentgate's raw name, raw description and schema.
var hashCases = []struct {
	name, tool                                string
	canonical                                 string
	partName, partDesc, partSchema, partAnnot string // canonical JSON of each part
	agName, agDesc, agSchema                  string // the strings agentgate hashes
}{
	{
		name:      "all parts, keys out of order, numbers and escapes normalised",
		tool:      `{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string","maxLength":1.0E3}}},"description":"Echo \u00e9 \"text\"\n","annotations":{"readOnlyHint":true,"title":"E"}}`,
		canonical: `{"annotations":{"readOnlyHint":true,"title":"E"},"description":"Echo é \"text\"\n","inputSchema":{"properties":{"text":{"maxLength":1000,"type":"string"}},"type":"object"},"name":"echo"}`,
		partName:  `"echo"`, partDesc: `"Echo é \"text\"\n"`,
		partSchema: `{"properties":{"text":{"maxLength":1000,"type":"string"}},"type":"object"}`,
		partAnnot:  `{"readOnlyHint":true,"title":"E"}`,
		agName:     "echo", agDesc: "Echo é \"text\"\n",
		agSchema: `{"properties":{"text":{"maxLength":1000,"type":"string"}},"type":"object"}`,
	},
	{
		name:      "name only: absent parts are null, agentgate uses \"\" and {}",
		tool:      `{"name":"ping"}`,
		canonical: `{"annotations":null,"description":null,"inputSchema":null,"name":"ping"}`,
		partName:  `"ping"`, partDesc: `null`, partSchema: `null`, partAnnot: `null`,
		agName: "ping", agDesc: "", agSchema: `{}`,
	},
	{
		name:      "explicit null description and annotations hash as absent",
		tool:      `{"name":"ping","description":null,"annotations":null,"inputSchema":{}}`,
		canonical: `{"annotations":null,"description":null,"inputSchema":{},"name":"ping"}`,
		partName:  `"ping"`, partDesc: `null`, partSchema: `{}`, partAnnot: `null`,
		agName: "ping", agDesc: "", agSchema: `{}`,
	},
	{
		name:      "unknown members are not hashed",
		tool:      `{"name":"x","title":"X","_meta":{"a":1},"outputSchema":{"type":"object"}}`,
		canonical: `{"annotations":null,"description":null,"inputSchema":null,"name":"x"}`,
		partName:  `"x"`, partDesc: `null`, partSchema: `null`, partAnnot: `null`,
		agName: "x", agDesc: "", agSchema: `{}`,
	},
	{
		name:      "control characters and non-BMP text",
		tool:      `{"name":"t\u0001","description":"\ud83d\ude00\t\u007f"}`,
		canonical: "{\"annotations\":null,\"description\":\"\U0001F600\\t\u007f\",\"inputSchema\":null,\"name\":\"t\\u0001\"}",
		partName:  `"t\u0001"`, partDesc: "\"\U0001F600\\t\u007f\"", partSchema: `null`, partAnnot: `null`,
		agName: "t\x01", agDesc: "\U0001F600\t\u007f", agSchema: `{}`,
	},
	{
		name:      "empty description is a description",
		tool:      `{"name":"e","description":""}`,
		canonical: `{"annotations":null,"description":"","inputSchema":null,"name":"e"}`,
		partName:  `"e"`, partDesc: `""`, partSchema: `null`, partAnnot: `null`,
		agName: "e", agDesc: "", agSchema: `{}`,
	},
}

func TestHashMatchesSpecFormulas(t *testing.T) {
	for _, c := range hashCases {
		t.Run(c.name, func(t *testing.T) {
			ts := hashList(t, "["+c.tool+"]")
			if len(ts) != 1 {
				t.Fatalf("got %d tools", len(ts))
			}
			tl := ts[0]
			if tl.SHA256 != sum(c.canonical) {
				t.Errorf("sha256 = %s, want sha256(%s) = %s", tl.SHA256, c.canonical, sum(c.canonical))
			}
			want := Parts{Name: sum(c.partName), Description: sum(c.partDesc), InputSchema: sum(c.partSchema), Annotations: sum(c.partAnnot)}
			if tl.Parts() != want {
				t.Errorf("parts = %+v\nwant %+v", tl.Parts(), want)
			}
			ag := tl.Agentgate()
			wantAG := Agentgate{NameHash: sum(c.agName), DescriptionHash: sum(c.agDesc), InputSchemaHash: sum(c.agSchema)}
			if ag != wantAG {
				t.Errorf("agentgate = %+v\nwant %+v", ag, wantAG)
			}
			for _, p := range []string{PartName, PartDescription, PartInputSchema, PartAnnotations} {
				if got, ok := tl.Parts().Value().Get(p); !ok || got.String() != `"`+tl.Parts().Get(p)+`"` {
					t.Errorf("Parts.Value()[%s] = %s, Get = %s", p, got, tl.Parts().Get(p))
				}
			}
		})
	}
}

func TestListHashes(t *testing.T) {
	ts := hashList(t, `[{"name":"b","description":"B"},{"name":"a"},{"name":"\uffff"},{"name":"\ud83d\ude00"}]`)
	hs := []string{ts[0].SHA256, ts[1].SHA256, ts[2].SHA256, ts[3].SHA256}
	sorted := append([]string(nil), hs...)
	// Sort by hand: the spec sorts the hex strings.
	for i := range sorted {
		for j := i + 1; j < len(sorted); j++ {
			if sorted[j] < sorted[i] {
				sorted[i], sorted[j] = sorted[j], sorted[i]
			}
		}
	}
	want := sum(strings.Join(sorted, "\n"))
	if got := ListSHA256(ts); got != want {
		t.Errorf("tools_sha256 = %s, want %s", got, want)
	}
	reversed := []Tool{ts[3], ts[2], ts[1], ts[0]}
	if ListSHA256(reversed) != want {
		t.Error("tools_sha256 depends on the order of the tools")
	}
	if got, want := ToolsSHA256(nil), sum(""); got != want {
		t.Errorf("tools_sha256 of no tools = %s, want sha256(\"\") = %s", got, want)
	}

	// surfaceHash: the triples sorted by name in UTF-16 order, where
	// U+1F600 (a surrogate pair, D83D…) sorts before U+FFFF.
	triple := func(tl Tool) string {
		ag := tl.Agentgate()
		return `["` + ag.NameHash + `","` + ag.DescriptionHash + `","` + ag.InputSchemaHash + `"]`
	}
	wantSurface := sum("[" + triple(ts[1]) + "," + triple(ts[0]) + "," + triple(ts[3]) + "," + triple(ts[2]) + "]")
	names := []string{ts[0].Name, ts[1].Name, ts[2].Name, ts[3].Name}
	ags := []Agentgate{ts[0].Agentgate(), ts[1].Agentgate(), ts[2].Agentgate(), ts[3].Agentgate()}
	if got := SurfaceHash(names, ags); got != wantSurface {
		t.Errorf("surfaceHash = %s, want %s", got, wantSurface)
	}
	if got, want := SurfaceHash(nil, nil), sum("[]"); got != want {
		t.Errorf("surfaceHash of no tools = %s, want sha256(\"[]\") = %s", got, want)
	}
}

func TestHashKeepsOrderAndFields(t *testing.T) {
	ts := hashList(t, `[{"name":"z","description":"Z","inputSchema":{"type":"object"},"annotations":{"a":1}},{"name":"a","description":null}]`)
	if ts[0].Name != "z" || ts[1].Name != "a" {
		t.Fatalf("order not kept: %s, %s", ts[0].Name, ts[1].Name)
	}
	if !ts[0].HasDescription || ts[0].Description != "Z" || ts[1].HasDescription || ts[1].Description != "" {
		t.Errorf("descriptions: %+v %+v", ts[0], ts[1])
	}
	if ts[0].InputSchema.String() != `{"type":"object"}` || ts[0].Annotations.String() != `{"a":1}` {
		t.Errorf("schema %s annotations %s", ts[0].InputSchema, ts[0].Annotations)
	}
	if !ts[1].InputSchema.IsNull() || !ts[1].Annotations.IsNull() {
		t.Errorf("absent parts not null: %s %s", ts[1].InputSchema, ts[1].Annotations)
	}
}

func TestHashRefusesMalformedLists(t *testing.T) {
	for _, c := range []struct{ list, msg string }{
		{`{"tools":[]}`, "not an array"},
		{`null`, "not an array"},
		{`[null]`, "tools[0]: is null"},
		{`[{"name":"a"},"b"]`, "tools[1]: is a string"},
		{`[[]]`, "tools[0]: is an array"},
		{`[{"description":"x"}]`, "has no name"},
		{`[{"name":""}]`, "name is empty"},
		{`[{"name":null}]`, "name is null"},
		{`[{"name":1}]`, "name is a number"},
		{`[{"name":["a"]}]`, "name is an array"},
		{`[{"name":"a","description":1}]`, "description is a number"},
		{`[{"name":"a","description":{}}]`, "description is an object"},
		{`[{"name":"a","inputSchema":[]}]`, "inputSchema is an array"},
		{`[{"name":"a","inputSchema":"{}"}]`, "inputSchema is a string"},
		{`[{"name":"a","inputSchema":null}]`, "inputSchema is null"},
		{`[{"name":"a","annotations":true}]`, "annotations is a boolean"},
		{`[{"name":"a","annotations":[]}]`, "annotations is an array"},
		{`[{"name":"a"},{"name":"b"},{"name":"a"}]`, `tools[0] and tools[2] are both named "a"`},
	} {
		_, err := Hash(parse(t, c.list))
		if cerr.CodeOf(err) != cerr.ToolsMalformed {
			t.Errorf("Hash(%s) = %v, want tools_malformed", c.list, err)
			continue
		}
		if !strings.Contains(cerr.Message(err), c.msg) {
			t.Errorf("Hash(%s) message %q does not say %q", c.list, cerr.Message(err), c.msg)
		}
	}
}

func TestIsHexHash(t *testing.T) {
	for s, want := range map[string]bool{
		sum("x"):                  true,
		strings.ToUpper(sum("x")): false,
		sum("x")[:63]:             false,
		sum("x") + "0":            false,
		strings.Repeat("g", 64):   false,
		"":                        false,
	} {
		if IsHexHash(s) != want {
			t.Errorf("IsHexHash(%q) = %v", s, !want)
		}
	}
}

func TestSortEntriesUTF16(t *testing.T) {
	names := []string{"\uffff", "b", "\U0001F600", "B", "a"}
	SortEntries(names, func(s string) string { return s })
	want := []string{"B", "a", "b", "\U0001F600", "\uffff"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("sorted %q, want %q", names, want)
	}
}
