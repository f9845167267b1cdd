// Package bearertest starts, for tests, an MCP server behind go-sdk's own
// bearer-token check (auth.RequireBearerToken): a 401 with the protected
// resource metadata URL in WWW-Authenticate to a request without a token
// the verifier takes, 403 insufficient_scope to one that lacks a scope
// asked for. The CLI's header and login tests and the Go preflight's fault
// tests reach a server behind a login through it.
package bearertest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server serves one tool at the answered URL (…/mcp), letting through the
// tokens verify accepts and that hold every one of scopes.
func Server(t testing.TB, verify auth.TokenVerifier, scopes ...string) string {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "behind-login", Version: "1.0.0"}, nil)
	server.AddTool(&mcp.Tool{Name: "get_issue", Description: "Get one issue.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mw := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: srv.URL + "/.well-known/oauth-protected-resource/mcp", Scopes: scopes})
	mux.Handle("/mcp", mw(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)))
	return srv.URL + "/mcp"
}
