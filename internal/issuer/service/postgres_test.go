package service_test

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/fetch"
	"github.com/crawlcheck/verifier/internal/issuer/keys"
	"github.com/crawlcheck/verifier/internal/issuer/service"
	"github.com/crawlcheck/verifier/internal/issuer/store"
	"github.com/crawlcheck/verifier/internal/issuer/store/pgtest"
)

// TestTwoInstancesOnePostgres: two services on one PostgreSQL, as behind a
// load balancer, answer concurrently; no nonce is answered twice, every one
// is in the store, and a receipt one instance issued is found through the
// other.
func TestTwoInstancesOnePostgres(t *testing.T) {
	pg := pgtest.Run(t)
	dsn, err := pg.CreateDB("two")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "keys")
	now := time.Now().UTC()
	if _, err := keys.Init(dir, "issuer.test", now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	var urls []string
	var stores []store.Store
	for i := 0; i < 2; i++ {
		st, err := store.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		live, err := keys.Open(dir, now)
		if err != nil {
			t.Fatal(err)
		}
		svc, err := service.New(context.Background(), service.Config{Keys: live, Store: st, Fetch: fetch.New(fetch.Policy{}), Logger: log.New(io.Discard, "", 0)})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(svc.Handler())
		t.Cleanup(srv.Close)
		urls, stores = append(urls, srv.URL), append(stores, st)
	}
	e := &env{t: t, spec: loadOpenAPI(t), api: urls[0], mcp: "https://mcp.example.com/mcp"}
	lock := e.ok("POST", "/api/v1/mcp/lock", "/api/v1/mcp/lock", obj{"tools": json.RawMessage(tools), "server": obj{"url": e.mcp}})
	body := []byte(`{"lock":` + mustString(lock) + `,"tools":` + tools + `}`)
	var mu sync.Mutex
	nonces := map[string]int{}
	var digests []string
	var wg sync.WaitGroup
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			ce := &env{t: t, spec: e.spec, api: urls[c%2]}
			for i := 0; i < 10; i++ {
				var rc struct{ Nonce, SHA256 string }
				json.Unmarshal(ce.ok("POST", "/api/v1/mcp/lock/check", "/api/v1/mcp/lock/check", body), &rc)
				mu.Lock()
				nonces[rc.Nonce]++
				digests = append(digests, rc.SHA256)
				mu.Unlock()
			}
		}(c)
	}
	wg.Wait()
	if len(nonces) != 80 {
		t.Errorf("%d distinct nonces in 80 answers", len(nonces))
	}
	for n := range nonces {
		if ok, err := stores[1].NonceIssued(context.Background(), n); err != nil || !ok {
			t.Fatalf("nonce %s answered but not in the store: %v", n, err)
		}
	}
	other := &env{t: t, spec: e.spec, api: urls[1]}
	for _, d := range digests[:5] {
		other.ok("GET", "/api/v1/documents/{sha256}", "/api/v1/documents/"+d, nil)
	}
}
