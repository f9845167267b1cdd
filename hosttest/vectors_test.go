package hosttest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"testing"

	"github.com/crawlcheck/verifier/hosttest/rawreq"
	"github.com/crawlcheck/verifier/hosttest/vectors"
)

// TestVectors runs every vector in testdata/ through the three builds; each
// must answer exactly the vector's response.
func TestVectors(t *testing.T) {
	vs, err := vectors.Load("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	calls := make([]call, len(vs))
	for i, v := range vs {
		calls[i] = call{v.Name, v.Op, v.Request}
	}
	got := ask(t, calls)
	split := 0
	for i, v := range vs {
		if _, a := rawreq.Split(v.Request); a != nil {
			split++
		}
		for _, h := range got[i].each() {
			if !bytes.Equal(h.resp, v.Want) {
				t.Errorf("%s via %s:\n  got  %s\n  want %s", v.Name, h.host, clip(h.resp), clip(v.Want))
			}
		}
	}
	t.Logf("%d vectors, %d of them with documents sent as attachments through ABI 2", len(vs), split)
}

// TestEveryOpHasVectors: once testdata/ops exists, every op the core lists
// must have vectors, so a vector directory that goes missing fails instead
// of quietly testing less.
func TestEveryOpHasVectors(t *testing.T) {
	if _, err := os.Stat("../testdata/ops"); errors.Is(err, fs.ErrNotExist) {
		t.Skip("no testdata/ops yet")
	}
	vs, err := vectors.Load("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]int{}
	for _, v := range vs {
		covered[v.Op]++
	}
	for _, op := range listedOps(t) {
		if covered[op] == 0 {
			t.Errorf("op %s is listed by version but has no vectors (testdata/ops/%s/ or its suite file)", op, op)
		}
	}
}

// TestVectorsAreCompact guards the loader: what is sent is the file's
// bytes minus whitespace, never re-encoded.
func TestVectorsAreCompact(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir+"/ops/canonicalize/a.json", `{"op": "canonicalize",
	  "request": {"z": "<&>", "a": [1e3, -0]},
	  "response": {"ok": true, "result": {"x": "\u00e9"}}}`)
	writeFile(t, dir+"/ops/canonicalize/b.json", `{"op":"canonicalize","request_raw":"{\"json\":","response":{"ok":false}}`)
	writeFile(t, dir+"/ops/version/c.json", `{"op":"version","request_b64":"/w==","response":{"ok":false}}`)
	writeFile(t, dir+"/continuity.json", `{"cases":[{"name":"n","request":{"b":1, "a":2},"record":{"r": true}}]}`)
	vs, err := vectors.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []vectors.Vector{
		{Name: "ops/canonicalize/a", Op: "canonicalize", Request: []byte(`{"z":"<&>","a":[1e3,-0]}`), Want: []byte(`{"ok":true,"result":{"x":"\u00e9"}}`)},
		{Name: "ops/canonicalize/b", Op: "canonicalize", Request: []byte(`{"json":`), Want: []byte(`{"ok":false}`)},
		{Name: "ops/version/c", Op: "version", Request: []byte{0xff}, Want: []byte(`{"ok":false}`)},
		{Name: "continuity/n", Op: "continuity_check", Request: []byte(`{"b":1,"a":2}`), Want: []byte(`{"ok":true,"result":{"r":true}}`)},
	}
	if fmt.Sprintf("%q", vs) != fmt.Sprintf("%q", want) {
		t.Errorf("loaded\n%q\nwant\n%q", vs, want)
	}
}
