package core_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/crawlcheck/verifier/core"
)

// TestKeyring: every op vector asked through one Keyring, twice (the second
// time with the keys derived), gives its envelope: signing ops included,
// and a seed that does not decode refused as core.Call refuses it.
func TestKeyring(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testdataDir, "ops", "*", "*.json"))
	var ring core.Keyring
	signing := 0
	for round := range 2 {
		for _, f := range files {
			vf := readOpFile(t, f)
			req, want := vf.requestBytes(t), compact(t, vf.Response)
			if bytes.Contains(req, []byte(`"private_key"`)) && round == 0 {
				signing++
			}
			if got := ring.Call(vf.Op, req); !bytes.Equal(got, want) {
				t.Errorf("round %d, %s:\n got  %s\n want %s", round+1, f, got, want)
			}
		}
	}
	if signing < 5 {
		t.Fatalf("only %d vectors sign", signing)
	}
}
