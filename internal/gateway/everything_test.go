package gateway_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// everything is server-everything as the repository pins it
// (bindings/js/package.json; `npm ci` there installs it).
func everything(t *testing.T) []string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "bindings", "js", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("server-everything is not installed (npm ci in bindings/js): %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	return []string{node, filepath.Clean(script), "stdio"}
}

// everythingEnv is an env whose server is server-everything, locked over
// initialize (with lockFlags: the capabilities the client will declare).
func everythingEnv(t *testing.T, lockFlags ...string) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{dir: dir, lock: filepath.Join(dir, "lock.json"), log: filepath.Join(dir, "records.jsonl"), server: everything(t)}
	cli(t, append(append([]string{"lock"}, lockFlags...), "--handshake", "initialize", "--server", strings.Join(e.server, " "), "-o", e.lock)...)
	return e
}

// TestEverythingRoundTrips: server-everything behind the gateway, driven
// by the go-sdk client declaring roots, sampling and elicitation: the
// server's requests (roots/list, sampling/createMessage,
// elicitation/create), the client's ping, progress notifications, logging
// and a cancelled call all pass through, and the session stays usable.
func TestEverythingRoundTrips(t *testing.T) {
	e := everythingEnv(t, "--capabilities", "roots,sampling,elicitation")
	cmd, stderr := e.gatewayCmd("", e.server)
	roundTrips(t, e, cmd, stderr)
}

// roundTrips drives server-everything through the gateway cmd runs.
func roundTrips(t *testing.T, e *env, cmd *exec.Cmd, stderr *lockedBuffer) {
	var mu sync.Mutex
	var progress []float64
	var logs []string
	var sampled, elicited int
	opts := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}, Sampling: &mcp.SamplingCapabilities{}, Elicitation: &mcp.ElicitationCapabilities{}},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			mu.Lock()
			sampled++
			mu.Unlock()
			return &mcp.CreateMessageResult{Model: "gateway-test", Role: "assistant", Content: &mcp.TextContent{Text: "sampled through the gateway"}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			elicited++
			mu.Unlock()
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Progress)
			mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			mu.Lock()
			if s, ok := req.Params.Data.(string); ok {
				logs = append(logs, req.Params.Logger+": "+s)
			} else {
				logs = append(logs, req.Params.Logger+": (data)")
			}
			mu.Unlock()
		},
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "gateway-test", Version: "1"}, opts)
	client.AddRoots(&mcp.Root{URI: "file:///gateway-test-root", Name: "gateway-test-root"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*deadline)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	s := &session{ClientSession: cs, stderr: stderr}

	got := names(t, s)
	for _, want := range []string{"echo", "get-roots-list", "trigger-sampling-request", "trigger-elicitation-request", "trigger-long-running-operation"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s not handed over: %v\nstderr:\n%s", want, got, stderr.String())
		}
	}
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Errorf("logging/setLevel: %v", err)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Errorf("ping: %v", err)
	}
	callOK := func(name string, args map[string]any, meta mcp.Meta) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
		if err != nil || res.IsError {
			t.Errorf("%s: %v %+v", name, err, res)
			return ""
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	if out := callOK("echo", map[string]any{"message": "hi"}, nil); !strings.Contains(out, "hi") {
		t.Errorf("echo: %q", out)
	}
	if out := callOK("trigger-sampling-request", map[string]any{"prompt": "hello", "maxTokens": 5}, nil); !strings.Contains(out, "sampled through the gateway") {
		t.Errorf("sampling: %q", out)
	}
	callOK("trigger-elicitation-request", map[string]any{}, nil)
	if out := callOK("get-roots-list", map[string]any{}, nil); !strings.Contains(out, "gateway-test-root") {
		t.Errorf("roots: %q", out)
	}
	callOK("trigger-long-running-operation", map[string]any{"duration": 0.4, "steps": 2}, mcp.Meta{"progressToken": "gw-progress"})
	callOK("toggle-simulated-logging", map[string]any{}, nil)

	// A call cancelled by the client: notifications/cancelled reaches the
	// server, and the session goes on.
	cctx, ccancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = cs.CallTool(cctx, &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 5, "steps": 5}})
	ccancel()
	if err == nil {
		t.Error("the cancelled call returned no error")
	}
	if out := callOK("echo", map[string]any{"message": "after"}, nil); !strings.Contains(out, "after") {
		t.Errorf("echo after the cancelled call: %q", out)
	}

	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		done := len(logs) > 0
		mu.Unlock()
		if done {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if sampled != 1 || elicited != 1 {
		t.Errorf("sampled %d, elicited %d; want 1 each", sampled, elicited)
	}
	if !slices.Equal(progress, []float64{1, 2}) {
		t.Errorf("progress %v, want [1 2]", progress)
	}
	if len(logs) == 0 {
		t.Errorf("no logging message came through")
	}
	e.records(t)
}
