package service_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/internal/issuer/service"
)

// raw sends bytes on a connection of its own and reads the one answer.
func raw(t *testing.T, addr, req string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go io.WriteString(c, req)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%.40q: %v", req, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// TestEveryErrorIsAProblem (F17): net/http's own answers (a malformed
// request, headers too large, a transfer coding it does not know, the
// mux's 404 and 405) and the log's 404s are problem+json like the API's,
// and a store's failure says no more than that it failed.
func TestEveryErrorIsAProblem(t *testing.T) {
	e := newEnv(t, allowLoopback(), service.Config{})
	addr := strings.TrimPrefix(e.api, "http://")
	for _, c := range []struct {
		name, req string
		status    int
	}{
		{"a malformed request line", "BLAH\r\n\r\n", 400},
		{"two Host headers", "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
		{"headers past the bound", "GET /healthz HTTP/1.1\r\nHost: a\r\nX-Big: " + strings.Repeat("a", 2<<20) + "\r\n\r\n", 431},
		{"an unknown transfer coding", "POST /api/v1/mcp/lock HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
		{"a path nothing serves", "GET /nothing HTTP/1.1\r\nHost: a\r\n\r\n", 404},
		{"a method the mux refuses", "POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", 405},
		{"a log path that is no tile", "GET /log/other HTTP/1.1\r\nHost: a\r\n\r\n", 404},
		{"a tile past the log", "GET /log/tile/0/x072/x057/x594/x037/x927/936 HTTP/1.1\r\nHost: a\r\n\r\n", 404},
		{"the checkpoint of an empty log", "GET /log/checkpoint HTTP/1.1\r\nHost: a\r\n\r\n", 404},
	} {
		resp, body := raw(t, addr, c.req)
		var p struct {
			Type   string
			Status int
			Code   string
		}
		if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != "application/problem+json" ||
			json.Unmarshal(body, &p) != nil || p.Status != c.status || !strings.HasPrefix(p.Type, "urn:crawlcheck:problem:") || p.Code == "" {
			t.Errorf("%s: %d %q %q", c.name, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	e.st.Close()
	for _, path := range []string{"/readyz", "/api/v1/documents/" + strings.Repeat("a", 64)} {
		status, body := e.do("GET", map[bool]string{true: "/readyz", false: "/api/v1/documents/{sha256}"}[path == "/readyz"], path, nil)
		if status != 503 || strings.Contains(string(body), "sql") || strings.Contains(string(body), "closed") {
			t.Errorf("%s with the store closed: %d %s", path, status, body)
		}
	}
}
