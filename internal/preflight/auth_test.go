package preflight_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/bearertest"
	"github.com/crawlcheck/verifier/internal/preflight"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearerServer is an MCP server (go-sdk's) behind go-sdk's bearer-token
// middleware, which answers 401 with the resource metadata URL to a
// request without token and 403 insufficient_scope to a token without the
// scope "tools". It returns the endpoint.
func bearerServer(t *testing.T) string {
	t.Helper()
	return bearertest.Server(t, func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		switch token {
		case "good-token":
			return &auth.TokenInfo{Scopes: []string{"tools"}, Expiration: time.Now().Add(time.Hour)}, nil
		case "narrow-token":
			return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
		}
		return nil, auth.ErrInvalidToken
	}, "tools")
}

// TestConfigHeadersAndAuthFaults: Config.Headers reach a server behind a
// login, and a session without them is recorded as unauthorized (a 401),
// with a token without the scope forbidden (a 403), each record naming
// the status, what to do and the resource metadata URL, and holding no
// credential.
func TestConfigHeadersAndAuthFaults(t *testing.T) {
	url := bearerServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	tr, err := preflight.Wrap(&mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, HTTPClient: &http.Client{Transport: preflight.HeaderTransport(nil, url, http.Header{"Authorization": {"Bearer good-token"}})}})
	if err != nil {
		t.Fatal(err)
	}
	cs, obs := preflight.Connect(ctx, mcp.NewClient(impl, nil), tr, nil, nil)
	if cs == nil {
		t.Fatalf("connect with the token: %s", obs.Failure)
	}
	obs = preflight.Observe(ctx, cs, tr, nil)
	cs.Close()
	lock, err := preflight.MakeLock(obs, preflight.LockOptions{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(t.TempDir(), "lock.json")
	os.WriteFile(lockPath, lock, 0o644)
	for _, c := range []struct {
		token, want string
	}{
		{"good-token", `"unchanged"`},
		{"", "the handshake: the server answered HTTP 401 (it needs credentials): log in with `crawlcheck login --url " + url + "`"},
		{"narrow-token", "the server answered HTTP 403"},
	} {
		var raw string
		cfg := preflight.Config{LockPath: lockPath, Now: func() time.Time { return testNow }, Settings: preflight.Settings{Mode: "observe"},
			OnRecord: func(r preflight.Record) { raw = string(r.Raw) }}
		if c.token != "" {
			cfg.Headers = http.Header{"Authorization": {"Bearer " + c.token}}
		}
		// A session that never started is an error holding its record.
		if s, err := preflight.Open(ctx, impl, nil, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil, cfg); err == nil {
			s.Close()
		}
		if !strings.Contains(raw, c.want) {
			t.Errorf("token %q: the record lacks %q: %s", c.token, c.want, raw)
		}
		if c.token != "good-token" && c.want != `"unchanged"` && !strings.Contains(raw, "its resource metadata: "+strings.TrimSuffix(url, "/mcp")+"/.well-known/oauth-protected-resource/mcp") {
			t.Errorf("token %q: no resource metadata URL: %s", c.token, raw)
		}
		if c.token != "" && strings.Contains(raw, c.token) {
			t.Errorf("the record holds the token: %s", raw)
		}
	}
}
