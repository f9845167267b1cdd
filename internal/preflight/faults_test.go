package preflight_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/internal/preflight"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCheckOverCapLeavesRecord: pages that make a check larger than the
// core takes are the server's doing; Check answers with a record saying
// nothing could be compared, never with the core's input_too_large and no
// record (issue 10, item 4: check exited 2, the audit log had nothing).
func TestCheckOverCapLeavesRecord(t *testing.T) {
	s := start(t, "http", `{"tools":`+threeTools+`}`)
	lock, err := os.ReadFile(lockOf(t, s, preflight.LockOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	big := `{"tools":[{"name":"t1","description":"` + strings.Repeat("a", 33<<20) + `"}],"nextCursor":"c2"}`
	obs := preflight.Observation{Endpoint: s.url, Pages: [][]byte{[]byte(big), []byte(big)}}
	rec, err := preflight.Check(preflight.Request{Lock: lock, Observation: obs, Now: testNow, Settings: preflight.Settings{Mode: "enforce"}})
	if err != nil {
		t.Fatalf("no record: %v", err)
	}
	if rec.Observed.Failure != preflight.FailureUnavailable || rec.Effect == preflight.EffectProceed {
		t.Fatalf("record: failure %q, effect %s", rec.Observed.Failure, rec.Effect)
	}
	if !bytes.Contains(rec.Raw, []byte("tools/list page 2: the pages so far exceed 67108864 bytes, more than one check can carry")) {
		t.Errorf("the record does not say why: %.400s", rec.Raw)
	}
}

// TestAnswerOverLimit: an answer over Options.MaxAnswerBytes is cut off
// (neither the tap nor the SDK reads it whole) and the observation says
// so, over HTTP (JSON body and event stream) and stdio.
func TestAnswerOverLimit(t *testing.T) {
	big := `{"tools":[{"name":"big","description":"` + strings.Repeat("a", 200<<10) + `"}]}`
	for _, c := range []struct{ kind, scenario string }{
		{"http", big},
		{"http", strings.Replace(big, `{"tools"`, `{"http_sse":true,"tools"`, 1)},
		{"stdio", big},
	} {
		s := start(t, c.kind, c.scenario)
		obs := observeWith(t, s, &preflight.Options{MaxAnswerBytes: 64 << 10})
		if obs.Failure != preflight.FailureTooLarge || obs.FailureDetail != "65536" || len(obs.Pages) != 0 {
			t.Errorf("%s: failure %q (%s), %d pages", c.kind, obs.Failure, obs.FailureDetail, len(obs.Pages))
		}
		if obs := observeWith(t, s, &preflight.Options{MaxAnswerBytes: 1 << 20}); obs.Failure != "" || len(obs.Pages) != 1 {
			t.Errorf("%s under the limit: %q %s", c.kind, obs.Failure, obs.FailureDetail)
		}
	}
}

// observeWith connects to s once with opts and returns what it saw.
func observeWith(t *testing.T, s *server, opts *preflight.Options) preflight.Observation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	cs, obs := preflight.Connect(ctx, mcp.NewClient(impl, nil), s.transport(t), nil, opts)
	if cs != nil {
		cs.Close()
	}
	return obs
}

// TestRefusedHandshakeAnswerIsSessionFailed: a handshake answer the go-sdk
// refuses (the attacker's bad_server_info: a lone surrogate and 1e400 in
// serverInfo) is session_failed, every time. The SDK closes the session it
// failed, the child exits because its stdin closed, and whether its
// stdout's end was read before the fault was named was a race that made it
// process_exited as often as not; JS and Python record session_failed.
func TestRefusedHandshakeAnswerIsSessionFailed(t *testing.T) {
	for i := range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
		tr, err := preflight.Wrap(&mcp.CommandTransport{Command: exec.Command(attackerBin, "--attack", "bad_server_info")})
		if err != nil {
			t.Fatal(err)
		}
		cs, obs := preflight.Connect(ctx, mcp.NewClient(impl, nil), tr, nil, nil)
		cancel()
		if cs != nil {
			cs.Close()
			t.Fatal("the go-sdk took the handshake answer")
		}
		if obs.Failure != preflight.FaultSessionFailed || obs.FailureAt != preflight.AtHandshake {
			t.Fatalf("connection %d: failure %q at %q, want %q at the handshake", i+1, obs.Failure, obs.FailureAt, preflight.FaultSessionFailed)
		}
	}
}
