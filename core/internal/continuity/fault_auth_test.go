package continuity

import (
	"strings"
	"testing"
)

// TestAuthFaultsSayWhatToDo: a 401 and a 403 are worded by the core with
// the status, the login command for the endpoint and the header flags, and
// the resource metadata URL escaped; resource_metadata goes with them only.
func TestAuthFaultsSayWhatToDo(t *testing.T) {
	class, detail, err := HostFailure(Fault{Failure: FaultUnauthorized, At: AtHandshake, Endpoint: "https://mcp.example/mcp", ResourceMetadata: "https://mcp.example/.well-known/oauth-protected-resource\x1b[2J"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"HTTP 401", "crawlcheck login --url https://mcp.example/mcp", "--header", "resource metadata: https://mcp.example/.well-known/oauth-protected-resource"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail %q lacks %q", detail, want)
		}
	}
	if class != FailureUnavailable || strings.ContainsRune(detail, 0x1b) {
		t.Errorf("class %q, detail %q: want server_unavailable and the escape made visible", class, detail)
	}
	_, detail, err = HostFailure(Fault{Failure: FaultForbidden, At: AtToolsList, Page: 1})
	if err != nil || !strings.HasPrefix(detail, "tools/list page 1: the server answered HTTP 403") || !strings.Contains(detail, "crawlcheck login --url URL") {
		t.Errorf("forbidden: %q, %v", detail, err)
	}
	if _, _, err := HostFailure(Fault{Failure: FaultSessionFailed, At: AtHandshake, ResourceMetadata: "https://x"}); err == nil {
		t.Error("resource_metadata with session_failed is taken")
	}
}
