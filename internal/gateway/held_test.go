package gateway

import (
	"bytes"
	"strings"
	"testing"
)

// A tools/call, prompts/get, resources/read or completion/complete held
// for a check whose params the gateway refuses (-32602) is released like
// any other: its held entry does not outlive the answer (a client sending
// such requests without end would grow the map without end), and one the
// client cancelled while it was held gets no answer.
func TestHeldBadParamsReleased(t *testing.T) {
	for _, c := range []struct {
		frame string
		judge func(g *Gateway, frame []byte, env envelope)
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":1}}`, func(g *Gateway, f []byte, e envelope) { g.judgeCall(f, e, true) }},
		{`{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":["x"]}}`, func(g *Gateway, f []byte, e envelope) { g.judgeItem(f, e, true) }},
		{`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{}}`, func(g *Gateway, f []byte, e envelope) { g.judgeItem(f, e, true) }},
		{`{"jsonrpc":"2.0","id":7,"method":"completion/complete","params":{"ref":{"type":"ref/prompt"}}}`, func(g *Gateway, f []byte, e envelope) { g.judgeItem(f, e, true) }},
		{`{"jsonrpc":"2.0","id":7,"method":"completion/complete","params":{"ref":{"type":"ref/tool","name":"x"}}}`, func(g *Gateway, f []byte, e envelope) { g.judgeItem(f, e, true) }},
	} {
		for _, cancelled := range []bool{false, true} {
			var out bytes.Buffer
			g := &Gateway{cfg: Config{Stdout: &out}, held: map[string]bool{}}
			env, err := parseEnvelope([]byte(c.frame))
			if err != nil {
				t.Fatal(err)
			}
			g.held[idKey(env.id)] = cancelled
			c.judge(g, []byte(c.frame), env)
			if len(g.held) != 0 {
				t.Errorf("%s (cancelled %v): still held after its answer: %v", c.frame, cancelled, g.held)
			}
			if answered := strings.Contains(out.String(), `"code":-32602`); answered == cancelled {
				t.Errorf("%s (cancelled %v): answered %v: %s", c.frame, cancelled, answered, out.String())
			}
		}
	}
}
