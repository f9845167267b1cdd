package fetch_test

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/hosttest/mcpserver/scenario"
	"github.com/crawlcheck/verifier/internal/issuer/fetch"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

func mcp(t *testing.T, doc string) string {
	t.Helper()
	f, err := scenario.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(scenario.New(f, log.New(io.Discard, "", 0)).Handler())
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

const tools = `[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"}},{"name":"c","inputSchema":{"type":"object"}}]`

// TestBounds: an answer over MaxAnswer is answer_too_large with the limit;
// the page cap stops the walk; the deadline is check_timeout.
func TestBounds(t *testing.T) {
	ctx := context.Background()
	url := mcp(t, `{"tools":`+tools+`,"page_size":1}`)
	f := fetch.New(fetch.Policy{AllowHTTP: true, AllowPrivate: loopback, PageCap: 2})
	if r := f.Read(ctx, url); r.Refused != nil || r.Failure != "" || !r.PageCapReached || len(r.Pages) != 2 {
		t.Errorf("page cap 2 over 3 pages: %+v", r)
	}
	big := mcp(t, `{"tools":[{"name":"a","description":"`+strings.Repeat("x", 5000)+`","inputSchema":{"type":"object"}}]}`)
	small := fetch.New(fetch.Policy{AllowHTTP: true, AllowPrivate: loopback, MaxAnswer: 4096})
	if r := small.Read(ctx, big); r.Failure != "answer_too_large" || r.FailureDetail != "4096" {
		t.Errorf("an answer over 4096 bytes: %q %q", r.Failure, r.FailureDetail)
	}
	hang := mcp(t, `{"tools":`+tools+`,"hang_handshake":true}`)
	dctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if r := f.Read(dctx, hang); r.Failure != "check_timeout" || r.Fault != "timeout" || r.FailureAt != "handshake" {
		t.Errorf("a hanging server: %q %q %q at %q", r.Failure, r.Fault, r.FailureDetail, r.FailureAt)
	}
}

// TestFaults: a server that cannot be read is a host fault the core words
// (Fault, FailureAt, FailurePage), classified from what the client saw,
// never from its error text.
func TestFaults(t *testing.T) {
	ctx := context.Background()
	f := fetch.New(fetch.Policy{AllowHTTP: true, AllowPrivate: loopback})
	ln := httptest.NewServer(http.NotFoundHandler())
	down := ln.URL + "/mcp"
	ln.Close()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "broken", http.StatusInternalServerError)
	}))
	t.Cleanup(broken.Close)
	for _, c := range []struct {
		name, url, fault string
	}{
		{"nothing listening", down, "connect_refused"},
		{"answering 500", broken.URL + "/mcp", "session_failed"},
	} {
		if r := f.Read(ctx, c.url); r.Fault != c.fault || r.FailureAt != "handshake" || r.FailurePage != 0 {
			t.Errorf("%s: fault %q at %q page %d (%s)", c.name, r.Fault, r.FailureAt, r.FailurePage, r.FailureDetail)
		} else if r.FailureDetail != c.fault+" at handshake" {
			// F12: the detail is the class and the step, never the error's
			// text, which names the address dialled.
			t.Errorf("%s: detail %q, want %q", c.name, r.FailureDetail, c.fault+" at handshake")
		}
	}
}

// TestPolicy: the refusals come from the policy and the dialled address,
// never from what a name says.
func TestPolicy(t *testing.T) {
	ctx := context.Background()
	url := mcp(t, `{"tools":`+tools+`}`)
	port := url[strings.LastIndex(url, ":")+1:]
	strict := fetch.New(fetch.Policy{AllowHTTP: true})
	for _, u := range []string{
		url,                              // 127.0.0.1
		"http://localhost:" + port,       // a name for loopback
		"http://[::1]:" + port + "/mcp",  // IPv6 loopback
		"http://10.0.0.1:1/mcp",          // private
		"http://169.254.169.254/latest",  // metadata
		"http://[64:ff9b::7f00:1]:1/mcp", // NAT64 of 127.0.0.1
		"http://0.0.0.0:" + port + "/mcp",
	} {
		r := strict.Read(ctx, u)
		if r.Refused == nil || !fetch.Refused(r.Refused) {
			t.Errorf("%s: not refused: %+v", u, r)
			continue
		}
		// F12: the refusal names its class, never the address a name
		// resolved to (localhost is 127.0.0.1 or ::1: neither is told).
		if msg := r.Refused.Error(); strings.Contains(msg, "127.0.0.1") || strings.Contains(msg, "::1") || !strings.Contains(msg, "range this issuer does not read") {
			t.Errorf("%s: refused with %q, want the class and no address", u, msg)
		}
	}
	for _, u := range []string{"ftp://example.com/x", "http://user:pw@127.0.0.1/", "https:///nohost"} {
		if err := fetch.New(fetch.Policy{AllowHTTP: true}).Check(u); err == nil {
			t.Errorf("%s: accepted", u)
		}
	}
	if r := fetch.New(fetch.Policy{AllowPrivate: loopback}).Read(ctx, url); r.Refused == nil || !strings.Contains(r.Refused.Error(), "plain http") {
		t.Errorf("http without AllowHTTP: %+v", r)
	}
	allowed := fetch.New(fetch.Policy{AllowHTTP: true, AllowPrivate: loopback})
	if r := allowed.Read(ctx, url); r.Refused != nil || r.Failure != "" || len(r.Pages) != 1 {
		t.Errorf("allowlisted loopback: %+v", r)
	}
	// No cookie the server sets comes back, and no credential is sent.
	var sawCookie, sawAuth bool
	f, _ := scenario.Parse([]byte(`{"tools":` + tools + `}`))
	inner := scenario.New(f, log.New(io.Discard, "", 0)).Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawCookie = sawCookie || r.Header.Get("Cookie") != ""
		sawAuth = sawAuth || r.Header.Get("Authorization") != ""
		http.SetCookie(w, &http.Cookie{Name: "s", Value: "1"})
		inner.ServeHTTP(w, r)
	}))
	defer srv.Close()
	if r := allowed.Read(ctx, srv.URL+"/mcp"); r.Failure != "" || sawCookie || sawAuth {
		t.Errorf("cookies or credentials travelled: cookie %v auth %v %+v", sawCookie, sawAuth, r)
	}
}
