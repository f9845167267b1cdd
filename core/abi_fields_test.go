package core_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/core/cerr"
)

// TestEveryOpDeclared: the op table and the declarations name the same ops.
func TestEveryOpDeclared(t *testing.T) {
	var declared []string
	for _, s := range core.Specs() {
		declared = append(declared, s.Name)
	}
	slices.Sort(declared)
	if !slices.Equal(declared, core.Ops()) {
		t.Errorf("declared ops %v, op table %v: declare every op in core/ops_spec.go", declared, core.Ops())
	}
}

// TestResultFields holds every successful result in testdata/ops to its op's
// declaration: no member the declaration lacks, every member it does not
// mark optional.
func TestResultFields(t *testing.T) {
	spec := map[string]core.OpSpec{}
	for _, s := range core.Specs() {
		spec[s.Name] = s
	}
	files, _ := filepath.Glob(filepath.Join(testdataDir, "ops", "*", "*.json"))
	seen := map[string]bool{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Op       string
			Response struct {
				OK     bool
				Result map[string]json.RawMessage
			}
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		s, ok := spec[v.Op]
		if !ok || !v.Response.OK {
			continue
		}
		seen[v.Op] = true
		declared := map[string]bool{}
		for _, fd := range s.Result {
			declared[fd.Name] = true
			if _, present := v.Response.Result[fd.Name]; !present && !fd.Optional {
				t.Errorf("%s: result lacks %q, which the declaration does not mark optional", f, fd.Name)
			}
		}
		for k := range v.Response.Result {
			if !declared[k] {
				t.Errorf("%s: result member %q is not declared", f, k)
			}
		}
	}
	for _, s := range core.Specs() {
		if !seen[s.Name] {
			t.Errorf("op %s has no successful vector to check its result declaration against", s.Name)
		}
	}
}

const (
	fieldsBegin = "<!-- ops: generated from core/ops_spec.go by go test ./core -update; do not edit -->"
	fieldsEnd   = "<!-- end of ops -->"
)

// abiFields renders the declarations as docs/abi.md's Ops section.
func abiFields() string {
	var b strings.Builder
	b.WriteString(fieldsBegin + "\n")
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	table := func(head string, fs []core.Field) {
		if len(fs) == 0 {
			b.WriteString("\n" + head + ": none.\n")
			return
		}
		b.WriteString("\n| " + head + " | type | |\n|---|---|---|\n")
		for _, f := range fs {
			typ := f.Type
			if f.Optional {
				typ += ", optional"
			}
			b.WriteString("| `" + f.Name + "` | " + cell(typ) + " | " + cell(f.Doc) + " |\n")
		}
	}
	for _, s := range core.Specs() {
		b.WriteString("\n### `" + s.Name + "`\n\n" + s.Summary + "\n")
		table("request field", s.Request)
		table("result member", s.Result)
	}
	b.WriteString("\n" + fieldsEnd)
	return b.String()
}

// TestABIFields holds docs/abi.md's field tables to the declarations.
func TestABIFields(t *testing.T) {
	path := filepath.Join("..", "docs", "abi.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(fieldsBegin)), bytes.Index(doc, []byte(fieldsEnd))
	if i < 0 || j < i {
		t.Fatalf("%s lacks the ops markers", path)
	}
	want := append(append(append([]byte{}, doc[:i]...), abiFields()...), doc[j+len(fieldsEnd):]...)
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(doc, want) {
		t.Errorf("%s: the field tables differ from core/ops_spec.go (run go test ./core -update and read the diff)", path)
	}
}

// TestErrorCodesDocumented holds docs/abi.md's error-code table to
// cerr.Codes: the same codes, in the same order.
func TestErrorCodesDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "abi.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## Error codes (closed list)")
	if !ok {
		t.Fatal("docs/abi.md has no error-code section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9_]+)` \\|").FindAllStringSubmatch(section, -1) {
		documented = append(documented, m[1])
	}
	var codes []string
	for _, c := range cerr.Codes {
		codes = append(codes, string(c))
	}
	if !slices.Equal(documented, codes) {
		t.Errorf("docs/abi.md documents error codes %v; cerr.Codes is %v", documented, codes)
	}
}
