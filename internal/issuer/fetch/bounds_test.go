package fetch_test

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/hosttest/mcpserver/scenario"
	"github.com/crawlcheck/verifier/internal/issuer/fetch"
)

// pager is an MCP server whose tools/list never ends: every page is a
// tool of about size bytes and a cursor to the next. It counts the pages
// it was asked for.
func pager(t *testing.T, size int, served *atomic.Int64) string {
	t.Helper()
	desc := strings.Repeat("x", size)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Cursor string `json:"cursor"`
			} `json:"params"`
		}
		json.NewDecoder(r.Body).Decode(&m)
		w.Header().Set("Content-Type", "application/json")
		switch m.Method {
		case "initialize":
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"pager","version":"1"}}}`)
		case "tools/list":
			n, _ := strconv.Atoi(m.Params.Cursor)
			served.Add(1)
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"tools":[{"name":"t`+strconv.Itoa(n)+`","description":"`+desc+`","inputSchema":{"type":"object"}}],"nextCursor":"`+strconv.Itoa(n+1)+`"}}`)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestPagesBytesCap (F3): a reading stops once its pages together pass the
// core's pages_bytes (64 MiB), with the fault pages_over_cap, instead of
// holding 16 MiB times the page cap.
func TestPagesBytesCap(t *testing.T) {
	var served atomic.Int64
	url := pager(t, 1<<20, &served)
	r := fetch.New(fetch.Policy{AllowHTTP: true, AllowPrivate: loopback}).Read(context.Background(), url)
	total := 0
	for _, p := range r.Pages {
		total += len(p.(string))
	}
	if r.Failure != "server_unavailable" || r.Fault != "pages_over_cap" || r.FailureAt != "tools/list" {
		t.Fatalf("%d pages of 1 MiB (%d bytes kept): failure %q fault %q at %q", served.Load(), total, r.Failure, r.Fault, r.FailureAt)
	}
	if total > core.MaxPagesBytes || served.Load() > int64(core.MaxPagesBytes>>20)+1 {
		t.Errorf("read %d pages, kept %d bytes, over the cap %d", served.Load(), total, core.MaxPagesBytes)
	}
}

// TestRedirectWithUserinfo (F16): a same-origin redirect to a URL carrying
// user:pass is refused; no Authorization travels and no credential is in
// the endpoint a reading names.
func TestRedirectWithUserinfo(t *testing.T) {
	f, _ := scenario.Parse([]byte(`{"tools":` + tools + `}`))
	inner := scenario.New(f, log.New(io.Discard, "", 0)).Handler()
	var sawAuth atomic.Bool
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			sawAuth.Store(true)
		}
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "http://user:pass@"+strings.TrimPrefix(srv.URL, "http://")+"/mcp", http.StatusPermanentRedirect)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	defer srv.Close()
	r := fetch.New(fetch.Policy{AllowHTTP: true, AllowPrivate: loopback}).Read(context.Background(), srv.URL+"/old")
	if r.Refused == nil || !fetch.Refused(r.Refused) || sawAuth.Load() || strings.Contains(r.Endpoint, "pass") {
		t.Fatalf("redirect to user:pass@: refused %v, auth sent %v, endpoint %q", r.Refused, sawAuth.Load(), r.Endpoint)
	}
}
