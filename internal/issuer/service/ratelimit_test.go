package service_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/fetch"
	"github.com/crawlcheck/verifier/internal/issuer/keys"
	"github.com/crawlcheck/verifier/internal/issuer/service"
	"github.com/crawlcheck/verifier/internal/issuer/store"
)

// TestRateLimitKeys (F11): the live readings' limit is keyed by the
// client's IPv4 /24 and IPv6 /64 (a /64 is one subscriber, 2^64 addresses),
// and a full table forgets the least recently used client, never every
// client at once (wiping it at 10,000 keys let a limited client start
// afresh by sending from 10,000 others). The clients are anonymous, which
// the operator allows (AnonymousLocks): else each is 401 before any limit.
func TestRateLimitKeys(t *testing.T) {
	h := limitedService(t, service.Config{AnonymousLocks: true})
	// A reading of an ftp URL is refused (403) after the rate limit, with
	// nothing dialled: 403 is a reading allowed, 429 one refused.
	from := func(addr string) int {
		r := httptest.NewRequest("GET", "/api/v1/mcp/lock?url=ftp://example.com/", nil)
		r.RemoteAddr = addr
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for _, c := range []struct {
		addr string
		want int
	}{
		{"[2001:db8:1:2::1]:4000", http.StatusForbidden},
		{"[2001:db8:1:2:ffff:ffff:ffff:9]:4001", http.StatusTooManyRequests}, // the same /64
		{"[2001:db8:1:3::1]:4000", http.StatusForbidden},                     // another /64
		{"192.0.2.1:4000", http.StatusForbidden},
		{"192.0.2.77:4001", http.StatusTooManyRequests}, // the same /24
		{"[::ffff:192.0.2.9]:4001", http.StatusTooManyRequests},
		{"192.0.3.1:4000", http.StatusForbidden}, // another /24
	} {
		if got := from(c.addr); got != c.want {
			t.Errorf("%s: %d, want %d", c.addr, got, c.want)
		}
	}
	// A client over its limit stays over it while 20,000 others come and go.
	hot := "198.51.100.1:1"
	if got := from(hot); got != http.StatusForbidden {
		t.Fatalf("the client's first reading: %d", got)
	}
	for i := range 20000 {
		if i%500 == 0 {
			if got := from(hot); got != http.StatusTooManyRequests {
				t.Fatalf("after %d other clients the limited client was let through: %d", i, got)
			}
		}
		from(fmt.Sprintf("10.%d.%d.1:1", i/256, i%256))
	}
}

// TestRateLimitByTenant (issue 37, F11: limits keyed by tenant too): a
// tenant's live readings share one budget from whatever network they come,
// where an anonymous client would have one per /24; another tenant keeps
// its own.
func TestRateLimitByTenant(t *testing.T) {
	const other = service.TenantTokenPrefix + "globex.b3RoZXItc2VjcmV0"
	h := limitedService(t, service.Config{TenantTokens: tenantHashes(testTenantToken, other)})
	// A reading of an ftp URL is refused (403) after the limits, with
	// nothing dialled: 403 is a reading allowed, 429 one refused.
	from := func(addr, token string) int {
		r := httptest.NewRequest("GET", "/api/v1/mcp/lock?url=ftp://example.com/", nil)
		r.RemoteAddr = addr
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for _, c := range []struct {
		addr, token string
		want        int
	}{
		{"192.0.2.1:4000", testTenantToken, http.StatusForbidden},
		{"198.51.100.1:4000", testTenantToken, http.StatusTooManyRequests}, // another /24, the same tenant
		{"[2001:db8:9::1]:4000", testTenantToken, http.StatusTooManyRequests},
		{"203.0.113.1:4000", other, http.StatusForbidden}, // another tenant
	} {
		if got := from(c.addr, c.token); got != c.want {
			t.Errorf("%s as %.12s…: %d, want %d", c.addr, c.token, got, c.want)
		}
	}
}

// limitedService is a service whose rate limit lets one live reading
// through per client and key, and no more within the test: cfg's other
// members as given.
func limitedService(t *testing.T, cfg service.Config) http.Handler {
	t.Helper()
	dir := t.TempDir()
	now := time.Now().UTC()
	if _, err := keys.Init(filepath.Join(dir, "keys"), "issuer.test", now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	live, err := keys.Open(filepath.Join(dir, "keys"), now)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenSQLite(context.Background(), filepath.Join(dir, "issuer.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg.Keys, cfg.Store, cfg.Fetch = live, st, fetch.New(fetch.Policy{})
	cfg.Logger, cfg.RatePerSecond, cfg.RateBurst = log.New(io.Discard, "", 0), 0.0001, 1
	svc, err := service.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return svc.Handler()
}
