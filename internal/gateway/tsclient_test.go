package gateway_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/internal/gateway"
)

// TestTypeScriptClient: the official TypeScript clients (SDK 1.x and
// client 2.x, as bindings/js pins them) in front of the gateway, the
// stand-ins for desktop clients: the changed tool is withheld alone, its
// call refused with the gateway's error (code, message, data), the rest
// usable.
func TestTypeScriptClient(t *testing.T) {
	e := newEnv(t, threeTools)
	e.setTools(t, t2Changed)
	for _, major := range []string{"1", "2"} {
		t.Run("sdk"+major, func(t *testing.T) {
			var got struct {
				Tools []string `json:"tools"`
				Calls []struct {
					Name, Text, Message string
					Code                int
					Data                map[string]any
				} `json:"calls"`
			}
			stderr := tsClient(t, "gateway_client.mjs", major, map[string]any{
				"command": append([]string{crawlcheck, "run", "--lock", e.lock, "--log", e.log, "--"}, e.server...),
				"calls":   []string{"t1", "t2"},
			}, &got)
			if !slices.Equal(got.Tools, []string{"t1", "t3"}) {
				t.Errorf("tools %v, want t1 t3", got.Tools)
			}
			if len(got.Calls) != 2 || got.Calls[0].Text != "called t1" {
				t.Fatalf("calls %+v", got.Calls)
			}
			r := got.Calls[1]
			if r.Code != gateway.RefusedCode || !strings.Contains(r.Message, "description_changed") || !strings.Contains(r.Message, "crawlcheck approve --lock") || r.Data["record_sha256"] == nil {
				t.Errorf("t2's refusal: %+v", r)
			}
			if !strings.Contains(stderr, `tool "t2" withheld`) {
				t.Errorf("the client's stderr (the server's log) has no verdict:\n%s", stderr)
			}
		})
	}
	e.records(t)
}

// tsClient runs hosttest/interop/testdata/script, a client written with
// the official TypeScript SDK of the given major (as bindings/js pins
// them), under node with spec as its argument, decodes what it prints
// into got, and answers its stderr (the gateway's log comes through it).
func tsClient(t *testing.T, script, major string, spec map[string]any, got any) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	_, file, _, _ := runtime.Caller(0)
	here := filepath.Dir(file)
	modules := filepath.Join(here, "..", "..", "bindings", "js", "node_modules")
	arg, _ := json.Marshal(spec)
	cmd := exec.Command(node, filepath.Join(here, "..", "..", "hosttest", "interop", "testdata", script), modules, major, string(arg))
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(out, got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return stderr.String()
}
