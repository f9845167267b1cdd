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
		svc, err := service.New(context.Background(), service.Config{Keys: live, Store: st, Fetch: fetch.New(fetch.Policy{}), Logger: log.New(io.Discard, "", 0),
			TenantTokens: tenantHashes(testTenantToken)})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(svc.Handler())
		t.Cleanup(srv.Close)
		urls, stores = append(urls, srv.URL), append(stores, st)
	}
	e := &env{t: t, spec: loadOpenAPI(t), api: urls[0], mcp: "https://mcp.example.com/mcp", auth: "Bearer " + testTenantToken}
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
			ce := &env{t: t, spec: e.spec, api: urls[c%2], auth: e.auth}
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
	// The tenant that caused them reads them back from either instance;
	// anonymous reads none (F8).
	other := &env{t: t, spec: e.spec, api: urls[1], auth: e.auth}
	for _, d := range digests[:5] {
		other.ok("GET", "/api/v1/documents/{sha256}", "/api/v1/documents/"+d, nil)
	}
	other.auth = ""
	other.problem("GET", "/api/v1/documents/{sha256}", "/api/v1/documents/"+digests[0], nil, 404, "not_found")
}

// TestPilotTwoInstancesOnePostgres: uploads of one pilot's log to two
// instances at once are each accepted whole, answered as duplicates, or
// refused with 409 conflict (its head moved meanwhile) and sent again; at
// the end the pilot holds every record once, its head is the log's last.
func TestPilotTwoInstancesOnePostgres(t *testing.T) {
	pg := pgtest.Run(t)
	dsn, err := pg.CreateDB("pilot2")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "keys")
	now := time.Now().UTC()
	if _, err := keys.Init(dir, "issuer.test", now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	var envs []*env
	var st store.Store
	spec := loadOpenAPI(t)
	for i := 0; i < 2; i++ {
		s, err := store.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		live, err := keys.Open(dir, now)
		if err != nil {
			t.Fatal(err)
		}
		svc, err := service.New(context.Background(), service.Config{Keys: live, Store: s, Fetch: fetch.New(fetch.Policy{}), Logger: log.New(io.Discard, "", 0)})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(svc.Handler())
		t.Cleanup(srv.Close)
		envs, st = append(envs, &env{t: t, spec: spec, api: srv.URL}), s
	}
	var p struct {
		ID    string `json:"pilot_id"`
		Token string `json:"token"`
	}
	_, out := envs[0].do("POST", "/api/v1/pilot", "/api/v1/pilot", nil)
	json.Unmarshal(out, &p)
	recs, sums := records(t, 6)
	var wg sync.WaitGroup
	var mu sync.Mutex
	conflicts := 0
	for c := 0; c < 6; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for try := 0; try < 50; try++ {
				u := envs[c%2].upload(p.ID, p.Token, lines(recs[:c+1]...))
				if u.status == 200 {
					return
				}
				if u.status != 409 && u.status != 429 {
					t.Errorf("upload %d: %d %s", c, u.status, u.body)
					return
				}
				mu.Lock()
				conflicts++
				mu.Unlock()
				time.Sleep(10 * time.Millisecond)
			}
			t.Errorf("upload %d never went through", c)
		}(c)
	}
	wg.Wait()
	got, err := st.GetPilot(context.Background(), p.ID)
	if err != nil || got.Head != sums[5] || got.Records != 6 || got.LoggedHead != sums[5] {
		t.Fatalf("after concurrent uploads (%d conflicts): %+v, %v", conflicts, got, err)
	}
	if u := envs[1].upload(p.ID, p.Token, lines(recs...)); u.statuses() != "duplicate duplicate duplicate duplicate duplicate duplicate" {
		t.Fatalf("the whole log again: %s", u.body)
	}
}
