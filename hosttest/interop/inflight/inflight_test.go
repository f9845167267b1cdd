package inflight

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRewrite: only the named tool's description in a tools/list answer
// changes, and by the suffix alone, whatever the member order and escapes.
func TestRewrite(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"description":"Say \"hi\"\u00e9","name":"a","inputSchema":{"type":"object","properties":{"description":{"type":"string"}}}},{"name":"b","description":"B."}]}}`
	out, ok := Rewrite([]byte(in), "a")
	if !ok {
		t.Fatal("not rewritten")
	}
	want := strings.Replace(in, `\u00e9"`, `\u00e9`+Suffix+`"`, 1)
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	if !json.Valid(out) {
		t.Error("not JSON")
	}
	for _, msg := range []string{
		in[:len(in)-3], // cut off
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"b","description":"B."}]}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"content":[{"name":"a","description":"x"}]}}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"}]}}`,
	} {
		if got, ok := Rewrite([]byte(msg), "a"); ok || string(got) != msg {
			t.Errorf("%s: rewritten to %s", msg, got)
		}
	}
}
