package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/listening"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// authlibServer starts hosttest/oauthserver (an authorization server built
// on Authlib, in the venv make test builds: $(BUILD)/py-oauth) issuing
// tokens valid for expiresIn seconds, and returns its base URL.
func authlibServer(t *testing.T, rsSecret string, expiresIn int) string {
	t.Helper()
	python := os.Getenv("CRAWLCHECK_OAUTH_PYTHON")
	if python == "" {
		python, _ = filepath.Abs(filepath.Join("..", "..", "build", "py-oauth", "bin", "python"))
	}
	if _, err := os.Stat(python); err != nil {
		if os.Getenv("CRAWLCHECK_NEED_SERVERS") != "" {
			t.Fatalf("the Authlib venv is missing (%v): make oauth-deps", err)
		}
		t.Skip("the Authlib venv is not built (make oauth-deps)")
	}
	script, _ := filepath.Abs(filepath.Join("..", "..", "hosttest", "oauthserver", "server.py"))
	base, stop, err := listening.Start(exec.Command(python, script, rsSecret, fmt.Sprint(expiresIn)))
	if err != nil {
		t.Fatalf("the Authlib authorization server: %v", err)
	}
	t.Cleanup(stop)
	return base
}

// introspectedServer is an MCP server (go-sdk's) whose tokens the Authlib
// server vouches for (RFC 7662 introspection), for this resource (aud)
// alone, with the scopes *need holds (nil: open, no token asked): a request without a good token is
// answered 401, one without the scopes 403 insufficient_scope, each with
// the resource metadata URL (RFC 9728), which the server serves.
func introspectedServer(t *testing.T, as, rsSecret string, need *atomic.Value) string {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "behind-authlib", Version: "1.0.0"}, nil)
	server.AddTool(&mcp.Tool{Name: "get_issue", Description: "Get one issue.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	resource := srv.URL + "/mcp"
	prm := srv.URL + "/.well-known/oauth-protected-resource/mcp"
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: resource, AuthorizationServers: []string{as}, ScopesSupported: []string{"tools"},
	}))
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		scopes := need.Load().([]string)
		if scopes == nil { // open: no token asked
			mcpHandler.ServeHTTP(w, r)
			return
		}
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		var info struct {
			Active bool   `json:"active"`
			Aud    string `json:"aud"`
			Scope  string `json:"scope"`
		}
		if ok {
			req, _ := http.NewRequest(http.MethodPost, as+"/introspect", strings.NewReader(url.Values{"token": {token}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.SetBasicAuth("resource-server", rsSecret)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				json.NewDecoder(resp.Body).Decode(&info)
				resp.Body.Close()
			}
		}
		challenge := fmt.Sprintf("Bearer resource_metadata=%q, scope=%q", prm, strings.Join(scopes, " "))
		if !info.Active || info.Aud != resource {
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "no valid token for this resource", http.StatusUnauthorized)
			return
		}
		for _, s := range scopes {
			if !slices.Contains(strings.Fields(info.Scope), s) {
				w.Header().Set("WWW-Authenticate", challenge+`, error="insufficient_scope"`)
				http.Error(w, "insufficient scope", http.StatusForbidden)
				return
			}
		}
		mcpHandler.ServeHTTP(w, r)
	})
	return resource
}

// keptToken is the access and refresh token kept for endpoint.
func keptToken(t *testing.T, config, endpoint string) (access, refresh string, scopes []string) {
	t.Helper()
	var f struct {
		Servers map[string]struct {
			Scopes []string `json:"scopes"`
			Token  struct {
				AccessToken  string `json:"access_token"`
				RefreshToken string `json:"refresh_token"`
			} `json:"token"`
		} `json:"servers"`
	}
	data, err := os.ReadFile(filepath.Join(config, "crawlcheck", "tokens.json"))
	if err != nil || json.Unmarshal(data, &f) != nil {
		t.Fatalf("the token store: %v", err)
	}
	e := f.Servers[endpoint]
	return e.Token.AccessToken, e.Token.RefreshToken, e.Scopes
}

// tokenLife is how long the Authlib server's tokens live, in seconds.
const tokenLife = 2

// TestLoginRefreshAndStepUp, against an Authlib authorization server
// issuing 2-second tokens with rotating refresh tokens (the old tokens
// revoked): once the token has expired, lock refreshes it (with its
// resource); once it has expired again, two checks at once need a refresh,
// one makes it under the store's lock and the other uses its token, where
// without the lock the second would spend the refresh token the first had
// already rotated, and fail; a server that then needs a wider scope answers 403
// insufficient_scope, recorded with what to do, and a second login steps
// up to the scopes granted before and the new one.
func TestLoginRefreshAndStepUp(t *testing.T) {
	const rsSecret = "rs-secret-5d1c"
	as := authlibServer(t, rsSecret, tokenLife)
	var need atomic.Value
	need.Store([]string{"tools"})
	endpoint := introspectedServer(t, as, rsSecret, &need)
	config, _, lock := loginSetting(t)
	now := "2026-11-30T12:00:00Z"

	loginBy(t, endpoint)
	first, firstRefresh, _ := keptToken(t, config, endpoint)
	if first == "" || firstRefresh == "" {
		t.Fatal("login kept no access or refresh token")
	}
	time.Sleep(tokenLife*time.Second + 200*time.Millisecond) // expired, at the server too
	if code, _, stderr := runCLI("--now", now, "lock", "--url", endpoint, "-o", lock); code != 0 {
		t.Fatalf("lock after login: exit %d, %s", code, stderr)
	}
	if access, refresh, _ := keptToken(t, config, endpoint); access == first || refresh == firstRefresh {
		t.Error("lock used the token about to expire: no refresh")
	}

	time.Sleep(tokenLife*time.Second + 200*time.Millisecond)
	var wg sync.WaitGroup
	codes := make([]int, 2)
	errs := make([]string, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, errs[i] = runCLI("--now", now, "check", "--lock", lock, "--url", endpoint)
		}()
	}
	wg.Wait()
	for i, code := range codes {
		if code != 0 {
			t.Errorf("concurrent check %d: exit %d, %s", i, code, errs[i])
		}
	}
	if code, _, stderr := runCLI("--now", now, "check", "--lock", lock, "--url", endpoint); code != 0 {
		t.Fatalf("check after the concurrent refreshes: exit %d, %s (the token was lost)", code, stderr)
	}

	need.Store([]string{"tools", "admin"})
	code, rec, _ := runCLI("--now", now, "check", "--lock", lock, "--url", endpoint, "--json")
	if code == 0 || !strings.Contains(rec, "HTTP 403") || !strings.Contains(rec, "crawlcheck login --url "+endpoint) {
		t.Fatalf("check needing a wider scope: exit %d, %s", code, rec)
	}
	loginBy(t, endpoint)
	if _, _, scopes := keptToken(t, config, endpoint); !slices.Contains(scopes, "tools") || !slices.Contains(scopes, "admin") {
		t.Errorf("the step-up kept scopes %v, want tools and admin", scopes)
	}
	if code, _, stderr := runCLI("--now", now, "check", "--lock", lock, "--url", endpoint); code != 0 {
		t.Errorf("check after the step-up: exit %d, %s", code, stderr)
	}
}
