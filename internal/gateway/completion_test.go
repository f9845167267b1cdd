package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// rawFeatures starts the gateway in front of the issues scenario for a
// test that writes frames by hand, past the handshake: send writes one
// line, answer waits for the answer with that id.
func rawFeatures(t *testing.T) (send func(string), answer func(id string) map[string]json.RawMessage) {
	t.Helper()
	e := newFeaturesEnv(t, issuesScenario)
	stdin, stdout, stderr := e.startRaw(t)
	lines := make(chan map[string]json.RawMessage, 16)
	go func() {
		dec := json.NewDecoder(stdout)
		for {
			var m map[string]json.RawMessage
			if dec.Decode(&m) != nil {
				close(lines)
				return
			}
			lines <- m
		}
	}()
	answer = func(id string) map[string]json.RawMessage {
		t.Helper()
		timeout := time.After(deadline)
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatalf("the gateway ended\n%s", stderr.String())
				}
				if string(m["id"]) == id {
					return m
				}
			case <-timeout:
				t.Fatalf("no answer to %s\n%s", id, stderr.String())
			}
		}
	}
	send = func(s string) { stdin.Write([]byte(s + "\n")) }
	send(initializeFrame)
	answer("1")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return send, answer
}

// TestCompletionRefNamedTwice: a completion/complete whose params name
// "ref" twice (a server's decoder takes the last; a handed prompt's first
// would be judged) is not passed on (-32602), as a prompts/get whose params
// name "name" twice is not.
func TestCompletionRefNamedTwice(t *testing.T) {
	send, answer := rawFeatures(t)
	send(`{"jsonrpc":"2.0","id":2,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"weekly"},"argument":{"name":"number","value":"1"},"ref":{"type":"ref/prompt","name":"not_offered"}}}`)
	if got := string(answer("2")["error"]); !strings.Contains(got, "-32602") || !strings.Contains(got, "crawlcheck run") {
		t.Errorf("a completion naming ref twice reached the server: %s", got)
	}
}
