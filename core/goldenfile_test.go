package core_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/core/internal/canon"
)

// holdDocument writes doc (indented) to the golden file at path when
// -update is given, then checks that the file holds exactly it: for a
// golden file whose cases are not goldenFile's (a server or an issuer
// beside each request). It answers the file's bytes.
func holdDocument(t *testing.T, path string, doc canon.Value) []byte {
	t.Helper()
	want := canon.Indent(doc)
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./core -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the cases (run go test ./core -update and read the diff)", path)
	}
	return got
}

// holdGenerated writes each file (path: its content) when -update is given;
// otherwise a file whose content differs is stale, because what says.
func holdGenerated(t *testing.T, what string, files map[string]string) {
	t.Helper()
	for path, want := range files {
		if *update {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%s is stale: %s (run go test ./core -update and read the diff)", path, what)
		}
	}
}

// goldenFile describes one golden file of cases: each case's request to op
// and the result it must give, under the member named result.
type goldenFile struct {
	path, kind, about, op, result string
}

// hold writes the file from the cases when -update is given, then checks
// that the file holds exactly these cases and that every request in it gives
// exactly its result, byte for byte once compacted.
func (g goldenFile) hold(t *testing.T, cases []goldenCase) {
	t.Helper()
	if *update {
		rows := make([]canon.Value, 0, len(cases))
		for _, c := range cases {
			rv, err := canon.Parse(mustJSON(t, c.Request))
			if err != nil {
				t.Fatal(err)
			}
			res, err := canon.Parse(call(t, g.op, c.Request))
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, canon.Obj(canon.M("name", canon.Str(c.Name)), canon.M("request", rv), canon.M(g.result, res)))
		}
		doc := canon.Obj(
			canon.M("kind", canon.Str(g.kind)),
			canon.M("v", canon.Int(1)),
			canon.M("about", canon.Str(g.about)),
			canon.M("cases", canon.Arr(rows...)),
		)
		if err := os.WriteFile(g.path, canon.Indent(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(g.path)
	if err != nil {
		t.Fatalf("%v (run go test ./core -update)", err)
	}
	var file struct {
		Cases []map[string]json.RawMessage `json:"cases"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) != len(cases) {
		t.Fatalf("%s has %d cases, the code defines %d (run go test ./core -update and read the diff)", g.path, len(file.Cases), len(cases))
	}
	for i, fc := range file.Cases {
		c := cases[i]
		var name string
		json.Unmarshal(fc["name"], &name)
		if name != c.Name {
			t.Errorf("case %d is %q in the file, %q in the code", i, name, c.Name)
			continue
		}
		want, _ := canon.Parse(mustJSON(t, c.Request))
		if got := compact(t, fc["request"]); !bytes.Equal(got, canon.Canonical(want)) {
			t.Errorf("%s: the file's request differs from the code's (run -update and read the diff)", c.Name)
		}
		got := core.Call(g.op, compact(t, fc["request"]))
		if exp := okEnvelope(compact(t, fc[g.result])); !bytes.Equal(got, exp) {
			t.Errorf("%s: %s differs\n got  %s\n want %s", c.Name, g.result, got, exp)
		}
	}
}
