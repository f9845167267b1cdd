// Package vectors reads the shared test vectors in testdata/ into the exact
// bytes a host sends and the exact bytes it must get back.
//
// Two layouts exist:
//
//   - testdata/ops/<op>/<case>.json holds one call:
//     {"op": "...", "request": <JSON>, "response": <JSON>}, or in place of
//     "request" "request_raw": "<string>" for a request that is not valid
//     JSON, or "request_b64": "<base64>" for one that is not even UTF-8.
//   - Suites: a file of {"cases": [{"name", "request", <member>}]} for one
//     op, where the expected response is {"ok":true,"result":<member>}.
//     The table suites lists them.
//
// Bytes are taken from the file, never re-encoded: a JSON member is read as
// json.RawMessage and only compacted (json.Compact removes whitespace and
// nothing else), so key order, escapes and number spellings reach the core
// as the vector's author wrote them. Re-marshaling would sort keys and
// escape <, > and &.
package vectors

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Vector is one call and the response every host must return, byte for byte.
type Vector struct {
	Name    string // where it came from: "ops/<op>/<case>" or "<suite>/<name>"
	Op      string
	Request []byte
	Want    []byte
}

// suites are the files of many cases for one op. To add one, add a line.
var suites = []struct {
	file   string // under testdata/
	op     string
	member string // the case member holding the result
}{
	{"continuity.json", "continuity_check", "record"},
	{"guard.json", "guard", "answer"},
	{"faults.json", "continuity_check", "record"},
	{"issuer-faults.json", "continuity_check", "record"},
}

// Load reads every vector under the testdata directory root. Absent files
// and directories yield no vectors; a file that is present but malformed is
// an error.
func Load(root string) ([]Vector, error) {
	vs, err := loadOps(filepath.Join(root, "ops"))
	if err != nil {
		return nil, err
	}
	for _, s := range suites {
		more, err := loadSuite(filepath.Join(root, s.file), s.op, s.member)
		if err != nil {
			return nil, err
		}
		vs = append(vs, more...)
	}
	return vs, nil
}

func loadOps(dir string) ([]Vector, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".json") {
			files = append(files, path)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("vectors: %w", err)
	}
	sort.Strings(files)
	vs := make([]Vector, 0, len(files))
	for _, path := range files {
		v, err := loadOp(dir, path)
		if err != nil {
			return nil, fmt.Errorf("vectors: %s: %w", path, err)
		}
		vs = append(vs, v)
	}
	return vs, nil
}

func loadOp(dir, path string) (Vector, error) {
	var f struct {
		Op         string          `json:"op"`
		Request    json.RawMessage `json:"request"`
		RequestRaw *string         `json:"request_raw"`
		RequestB64 *string         `json:"request_b64"`
		Response   json.RawMessage `json:"response"`
	}
	if err := readJSON(path, &f); err != nil {
		return Vector{}, err
	}
	rel, _ := filepath.Rel(dir, path)
	v := Vector{Name: "ops/" + strings.TrimSuffix(filepath.ToSlash(rel), ".json"), Op: f.Op}
	if opDir := filepath.Base(filepath.Dir(path)); f.Op != opDir {
		return Vector{}, fmt.Errorf("op %q in directory %q", f.Op, opDir)
	}
	n := 0
	for _, present := range []bool{f.Request != nil, f.RequestRaw != nil, f.RequestB64 != nil} {
		if present {
			n++
		}
	}
	if n != 1 {
		return Vector{}, errors.New("needs exactly one of request, request_raw, request_b64")
	}
	switch {
	case f.RequestRaw != nil:
		v.Request = []byte(*f.RequestRaw)
	case f.RequestB64 != nil:
		b, err := base64.StdEncoding.DecodeString(*f.RequestB64)
		if err != nil {
			return Vector{}, fmt.Errorf("request_b64: %w", err)
		}
		v.Request = b
	default:
		v.Request = compact(f.Request)
	}
	if f.Response == nil {
		return Vector{}, errors.New("no response")
	}
	v.Want = compact(f.Response)
	return v, nil
}

func loadSuite(path, op, member string) ([]Vector, error) {
	var f struct {
		Cases []map[string]json.RawMessage `json:"cases"`
	}
	err := readJSON(path, &f)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("vectors: %s: %w", path, err)
	}
	suite := strings.TrimSuffix(filepath.Base(path), ".json")
	vs := make([]Vector, 0, len(f.Cases))
	for i, c := range f.Cases {
		var name string
		if err := json.Unmarshal(c["name"], &name); err != nil || name == "" {
			return nil, fmt.Errorf("vectors: %s: case %d: no name", path, i)
		}
		if c["request"] == nil || c[member] == nil {
			return nil, fmt.Errorf("vectors: %s: case %q: needs request and %s", path, name, member)
		}
		want := append([]byte(`{"ok":true,"result":`), compact(c[member])...)
		vs = append(vs, Vector{
			Name:    suite + "/" + name,
			Op:      op,
			Request: compact(c["request"]),
			Want:    append(want, '}'),
		})
	}
	return vs, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// compact is json.Compact of a member json.Unmarshal has already checked.
func compact(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		panic("vectors: compact of a checked member: " + err.Error())
	}
	return b.Bytes()
}

// IssuerFaultRecord is the record a host must give for a case of
// testdata/issuer-faults.json (its request and golden record) when its
// issuer is at url: the golden record, compacted, when url is the
// request's own; else, since a test issuer listens where it can, what call
// (the core's Call) answers continuity_check for the request naming url.
func IssuerFaultRecord(request map[string]json.RawMessage, record json.RawMessage, url string, call func(op string, request []byte) []byte) ([]byte, error) {
	var trace map[string]any
	if err := json.Unmarshal(request["issuer"], &trace); err != nil {
		return nil, fmt.Errorf("the request's issuer: %w", err)
	}
	if trace["url"] == url {
		var out bytes.Buffer
		if err := json.Compact(&out, record); err != nil {
			return nil, err
		}
		return out.Bytes(), nil
	}
	trace["url"] = url
	req := map[string]json.RawMessage{}
	for k, v := range request {
		req[k] = v
	}
	req["issuer"], _ = json.Marshal(trace)
	b, _ := json.Marshal(req)
	var env struct {
		OK     bool
		Result json.RawMessage
	}
	if resp := call("continuity_check", b); json.Unmarshal(resp, &env) != nil || !env.OK {
		return nil, fmt.Errorf("continuity_check: %s", resp)
	}
	return env.Result, nil
}

// Golden reads the golden file at path (one of testdata/'s, docs/testdata.md)
// into a G, the test's own view of it; a file missing or not of that shape
// fails t.
func Golden[G any](t testing.TB, path string) G {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g G
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return g
}
