package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/bearertest"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// secret is the bearer token of the server behind a login: no output of
// any command may hold it.
const secret = "s3cret-7f1e0c9a"

// loginServer is an MCP server (go-sdk's) behind go-sdk's own bearer-token
// middleware: a request without the token is answered 401 with a
// WWW-Authenticate naming the resource metadata URL. It returns the
// endpoint.
func loginServer(t *testing.T) string {
	t.Helper()
	return bearertest.Server(t, func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if token != secret {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
	})
}

// TestHeaderFlagsReachAServerBehindALogin: without credentials, lock
// refuses and check records HTTP 401 with the resource metadata URL and
// what to do; with --header, --header-env or --header-file, lock, check,
// scan and approve read the server as an open one. The secret is in no
// output, no lockfile and no record log, not even in the errors of a
// malformed flag.
func TestHeaderFlagsReachAServerBehindALogin(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no stored login
	url := loginServer(t)
	dir := t.TempDir()
	lock, log := filepath.Join(dir, "lock.json"), filepath.Join(dir, "records.jsonl")
	headerFile := filepath.Join(dir, "headers")
	os.WriteFile(headerFile, []byte("# the server's token\nAuthorization: Bearer "+secret+"\n"), 0o600)
	t.Setenv("CRAWLCHECK_TEST_TOKEN", "Bearer "+secret)
	t.Setenv("CRAWLCHECK_TEST_BARE", secret) // a bare token, as Codex's bearer_token_env_var holds it

	var outputs []string
	keep := func(code int, stdout, stderr string) int { outputs = append(outputs, stdout, stderr); return code }

	code := keep(runCLI("--now", "2026-11-30T12:00:00Z", "lock", "--url", url, "-o", lock))
	if code == 0 || !strings.Contains(outputs[len(outputs)-1], "HTTP 401") || !strings.Contains(outputs[len(outputs)-1], "crawlcheck login --url "+url) {
		t.Fatalf("lock without credentials: exit %d, %q", code, outputs[len(outputs)-1])
	}
	if code := keep(runCLI("--now", "2026-11-30T12:00:00Z", "lock", "--url", url, "--header", "Authorization: Bearer "+secret, "-o", lock)); code != 0 {
		t.Fatalf("lock with --header: exit %d, %s", code, outputs[len(outputs)-1])
	}
	code = keep(runCLI("--now", "2026-11-30T12:00:00Z", "check", "--lock", lock, "--url", url, "--json", "--log", log))
	if rec := outputs[len(outputs)-2]; code == 0 || !strings.Contains(rec, "HTTP 401") || !strings.Contains(rec, "resource metadata: "+strings.TrimSuffix(url, "/mcp")+"/.well-known/oauth-protected-resource/mcp") || !strings.Contains(rec, "crawlcheck login --url") {
		t.Errorf("check without credentials: exit %d, record %s", code, rec)
	}
	// Without --url, check reaches the endpoint the lockfile pins, with the headers.
	for _, flags := range [][]string{{"--url", url, "--header-env", "Authorization=CRAWLCHECK_TEST_TOKEN"}, {"--header-file", headerFile}, {"--bearer-env", "CRAWLCHECK_TEST_BARE"}} {
		code := keep(runCLI(append([]string{"--now", "2026-11-30T12:00:00Z", "check", "--lock", lock, "--json", "--log", log}, flags...)...))
		if rec := outputs[len(outputs)-2]; code != 0 || !strings.Contains(rec, `"unchanged"`) {
			t.Errorf("check %v: exit %d, %s %s", flags, code, rec, outputs[len(outputs)-1])
		}
	}
	if code := keep(runCLI("--now", "2026-11-30T12:00:00Z", "ci", "--lock", lock)); code == 0 || !strings.Contains(outputs[len(outputs)-2], "HTTP 401") {
		t.Errorf("ci without credentials: exit %d, %s", code, outputs[len(outputs)-2])
	}
	if code := keep(runCLI("--now", "2026-11-30T12:00:00Z", "ci", "--lock", lock, "--header-env", "Authorization=CRAWLCHECK_TEST_TOKEN")); code != 0 {
		t.Errorf("ci --header-env: exit %d, %s %s", code, outputs[len(outputs)-2], outputs[len(outputs)-1])
	}
	code = keep(runCLI("--now", "2026-11-30T12:00:00Z", "scan", "--url", url))
	if code == 0 || !strings.Contains(outputs[len(outputs)-1], "HTTP 401") || !strings.Contains(outputs[len(outputs)-1], "crawlcheck login --url "+url) {
		t.Errorf("scan without credentials: exit %d, %s", code, outputs[len(outputs)-1])
	}
	t.Logf("lock without credentials says: %s", outputs[1])
	if code := keep(runCLI("--now", "2026-11-30T12:00:00Z", "scan", "--url", url, "--header-file", headerFile)); code != 0 {
		t.Errorf("scan --header-file: exit %d, %s", code, outputs[len(outputs)-1])
	}
	if code := keep(runCLI("--now", "2026-11-30T12:00:00Z", "approve", "--lock", lock, "--url", url, "--header-file", headerFile, "--yes", "-o", filepath.Join(dir, "approved.json"))); code != 0 {
		t.Errorf("approve --header-file: exit %d, %s", code, outputs[len(outputs)-1])
	}
	// Malformed flags are refused without their values.
	for _, flags := range [][]string{
		{"--header", "Authorization Bearer " + secret},
		{"--header", "Auth orization: " + secret},
		{"--header", "Authorization: " + secret + "\r\nX: y"},
		{"--tools", lock, "--header", "Authorization: " + secret},
		{"--bearer-env", "CRAWLCHECK_TEST_UNSET"},
		{"--bearer-env", "Authorization=CRAWLCHECK_TEST_BARE"},
	} {
		if code := keep(runCLI(append([]string{"--now", "2026-11-30T12:00:00Z", "scan", "--url", url}, flags...)...)); code == 0 {
			t.Errorf("scan %q: exit 0", flags)
		}
	}
	for _, path := range []string{lock, log, filepath.Join(dir, "approved.json")} {
		data, _ := os.ReadFile(path)
		outputs = append(outputs, string(data))
	}
	for i, out := range outputs {
		if strings.Contains(out, secret) {
			t.Errorf("output %d holds the secret: %s", i, out)
		}
	}
}

// TestHeadersStayWithTheirOrigin: a header (a credential) goes to the
// endpoint's origin only, never to a server a redirect names.
func TestHeadersStayWithTheirOrigin(t *testing.T) {
	var leaked string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { leaked = r.Header.Get("Authorization") }))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, other.URL, http.StatusFound) }))
	defer first.Close()
	client := &http.Client{Transport: withHeaders(first.URL+"/mcp", []string{"Authorization=Bearer " + secret})}
	resp, err := client.Get(first.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if leaked != "" {
		t.Errorf("the redirect's target got Authorization %q", leaked)
	}
}
