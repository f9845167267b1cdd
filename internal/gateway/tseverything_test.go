package gateway_test

import (
	"slices"
	"strings"
	"testing"
)

// TestEverythingTypeScript: server-everything behind the gateway, driven
// by the official TypeScript clients (SDK 1.x and client 2.x, as
// bindings/js pins them) declaring roots, sampling and elicitation, the
// stand-ins for desktop clients: the server's sampling, elicitation and
// roots requests reach the client and their answers the server, ping,
// progress and logging come through, a call the client cancels ends and
// the session goes on (TestEverythingRoundTrips drives the same with the
// go-sdk client).
func TestEverythingTypeScript(t *testing.T) {
	e := everythingEnv(t, "--capabilities", "roots,sampling,elicitation")
	type result struct {
		Tools                               []string
		Sampled, Elicited, RootsAsked, Logs int
		Ping                                bool
		Progress                            []float64
		Calls                               map[string]struct{ Text, Error string }
	}
	for _, major := range []string{"1", "2"} {
		t.Run("sdk"+major, func(t *testing.T) {
			var got result
			tsClient(t, "gateway_everything.mjs", major, map[string]any{
				"command": append([]string{crawlcheck, "run", "--lock", e.lock, "--log", e.log, "--"}, e.server...),
			}, &got)
			for _, want := range []string{"echo", "get-roots-list", "trigger-sampling-request", "trigger-elicitation-request", "trigger-long-running-operation", "toggle-simulated-logging"} {
				if !slices.Contains(got.Tools, want) {
					t.Errorf("%s not handed over: %v", want, got.Tools)
				}
			}
			for label, want := range map[string]string{"echo": "hi", "sampling": "sampled through the gateway", "roots": "gateway-test-root", "after": "after"} {
				if c := got.Calls[label]; c.Error != "" || !strings.Contains(c.Text, want) {
					t.Errorf("%s: %+v, want a result holding %q", label, c, want)
				}
			}
			for _, label := range []string{"elicitation", "progress", "logging"} {
				if c := got.Calls[label]; c.Error != "" {
					t.Errorf("%s: %s", label, c.Error)
				}
			}
			if c := got.Calls["cancelled"]; c.Error == "" {
				t.Errorf("the cancelled call returned a result: %+v", c)
			}
			if got.Sampled != 1 || got.Elicited != 1 || got.RootsAsked < 1 {
				t.Errorf("sampled %d, elicited %d, roots asked %d; want 1, 1, at least 1", got.Sampled, got.Elicited, got.RootsAsked)
			}
			if !got.Ping {
				t.Error("ping did not come back")
			}
			// The last step's progress comes just before the result, and
			// the TypeScript clients, straight to the server as through the
			// gateway, sometimes drop it (the request is done when its
			// handler runs): [1] or [1 2], never none.
			if !slices.Equal(got.Progress, []float64{1}) && !slices.Equal(got.Progress, []float64{1, 2}) {
				t.Errorf("progress %v, want [1 2] (or [1])", got.Progress)
			}
			if got.Logs == 0 {
				t.Error("no logging message came through")
			}
		})
	}
	e.records(t)
}
