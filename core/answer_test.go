package core_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"sort"
	"testing"

	"github.com/crawlcheck/verifier/core"
)

// TestCallAnswer: for every op vector, CallAnswer's members are the
// result's members as Call's envelope carries them, byte for byte, and a
// refusal is the envelope's code and message; through a Keyring too.
func TestCallAnswer(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testdataDir, "ops", "*", "*.json"))
	var ring core.Keyring
	for _, f := range files {
		vf := readOpFile(t, f)
		req := vf.requestBytes(t)
		var env struct {
			OK     bool
			Result map[string]json.RawMessage
			Error  struct{ Code, Message string }
		}
		if err := json.Unmarshal(core.Call(vf.Op, req), &env); err != nil {
			t.Fatal(err)
		}
		for _, call := range []func(string, []byte) (core.Answer, error){core.CallAnswer, ring.CallAnswer} {
			a, err := call(vf.Op, req)
			if !env.OK {
				var ce *core.Error
				if !errors.As(err, &ce) || ce.Code != env.Error.Code || ce.Message != env.Error.Message {
					t.Errorf("%s: %v, want %s: %s", f, err, env.Error.Code, env.Error.Message)
				}
				continue
			}
			names := make([]string, 0, len(env.Result))
			for n := range env.Result {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				if got, ok := a.JSON(n); err != nil || !ok || !bytes.Equal(got, env.Result[n]) {
					t.Errorf("%s: member %s: %.80s, want %.80s (%v)", f, n, got, env.Result[n], err)
				}
			}
		}
	}
	if _, err := core.CallAnswer("no_such_op", []byte(`{}`)); err == nil {
		t.Error("an unknown op answered")
	}
}
