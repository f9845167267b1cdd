package service_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/service"
	"github.com/crawlcheck/verifier/internal/issuer/store"
	"github.com/crawlcheck/verifier/internal/issuer/store/pgtest"
)

// newPilot makes a pilot and answers its id and token.
func (e *env) newPilot() (string, string) {
	e.t.Helper()
	status, out := e.do("POST", "/api/v1/pilot", "/api/v1/pilot", nil)
	var p struct {
		ID    string `json:"pilot_id"`
		Token string `json:"token"`
	}
	if json.Unmarshal(out, &p); status != http.StatusCreated {
		e.t.Fatalf("POST /api/v1/pilot: %d %s", status, out)
	}
	return p.ID, p.Token
}

// TestPilotQuotas (F4): a pilot keeps at most its quota of records and of
// their bytes (413 quota_exceeded, nothing of the upload kept), and uploads
// at most its bytes an hour (429 rate_limited), on SQLite and PostgreSQL.
func TestPilotQuotasSQLite(t *testing.T) {
	testPilotQuotas(t, func(cfg service.Config) *env { return newEnv(t, allowLoopback(), cfg) })
}

func TestPilotQuotasPostgres(t *testing.T) {
	pg := pgtest.Run(t)
	testPilotQuotas(t, func(cfg service.Config) *env {
		cfg.Store = pgStoreOn(t, pg, fmt.Sprintf("quota%d", cfg.MaxPilotRecords))
		return newEnv(t, allowLoopback(), cfg)
	})
}

func testPilotQuotas(t *testing.T, open func(service.Config) *env) {
	recs, _ := records(t, 6)

	e := open(service.Config{MaxPilotRecords: 4})
	id, token := e.newPilot()
	if u := e.upload(id, token, lines(recs[:3]...)); u.status != 200 || u.answer.Accepted != 3 {
		t.Fatalf("3 records under a quota of 4: %d %s", u.status, u.body)
	}
	u := e.upload(id, token, lines(recs[3:5]...))
	if u.status != http.StatusRequestEntityTooLarge || !strings.Contains(string(u.body), "quota_exceeded") || !strings.Contains(string(u.body), "4 records") {
		t.Fatalf("2 more over a quota of 4: %d %s", u.status, u.body)
	}
	if p, _ := e.st.GetPilot(t.Context(), id); p.Records != 3 {
		t.Fatalf("the refused upload kept records: %d", p.Records)
	}
	if u := e.upload(id, token, lines(recs[3])); u.status != 200 || u.answer.Accepted != 1 {
		t.Fatalf("the 4th record: %d %s", u.status, u.body)
	}

	e = open(service.Config{MaxPilotRecords: 5, MaxPilotBytes: int64(len(recs[0]) + len(recs[1]))})
	id, token = e.newPilot()
	if u := e.upload(id, token, lines(recs[:2]...)); u.status != 200 {
		t.Fatalf("2 records within a quota of their bytes: %d %s", u.status, u.body)
	}
	if u := e.upload(id, token, lines(recs[2])); u.status != http.StatusRequestEntityTooLarge || !strings.Contains(string(u.body), "quota_exceeded") {
		t.Fatalf("a record over the bytes quota: %d %s", u.status, u.body)
	}

	e = open(service.Config{MaxPilotRecords: 6, PilotBytesPerHour: int64(len(lines(recs[:3]...)))})
	id, token = e.newPilot()
	if u := e.upload(id, token, lines(recs[:3]...)); u.status != 200 {
		t.Fatalf("3 records within an hour's bytes: %d %s", u.status, u.body)
	}
	if u := e.upload(id, token, lines(recs[3])); u.status != http.StatusTooManyRequests || !strings.Contains(string(u.body), "rate_limited") {
		t.Fatalf("a record past an hour's bytes: %d %s", u.status, u.body)
	}
}

// TestPilotsPerClient (F4, F11): a pilot's quotas bound what one pilot
// keeps; the pilots one client (its /24 or /64) makes are bounded too, or
// the quotas would multiply by the pilots made at the live readings' rate.
func TestPilotsPerClient(t *testing.T) {
	e := newEnv(t, allowLoopback(), service.Config{})
	for range service.DefaultPilotsPerHour {
		e.newPilot()
	}
	if status, out := e.do("POST", "/api/v1/pilot", "/api/v1/pilot", nil); status != http.StatusTooManyRequests || !strings.Contains(string(out), "rate_limited") {
		t.Fatalf("pilot %d of one client in an hour: %d %s", service.DefaultPilotsPerHour+1, status, out)
	}
}

// TestEndpointQuotaConcurrent: a pilot's endpoints stay at MaxPilotServers
// when registrations arrive at once. The count was read, then the endpoint
// inserted, so two registrations at 19 both passed it; the store now
// inserts only while the owner holds fewer (one statement on SQLite, under
// a lock of the owner's on PostgreSQL). With 19 registered, of 8 at once
// exactly one is 201 and the others 409.
func TestEndpointQuotaConcurrentSQLite(t *testing.T) { testEndpointQuotaConcurrent(t, nil) }

func TestEndpointQuotaConcurrentPostgres(t *testing.T) {
	testEndpointQuotaConcurrent(t, pgStore(t, "endpointquota"))
}

func testEndpointQuotaConcurrent(t *testing.T, st store.Store) {
	e := newEnv(t, allowLoopback(), service.Config{Store: st})
	id, token := e.newPilot()
	ss, _ := store.SweepOf(e.st)
	for i := 1; i < service.MaxPilotServers; i++ {
		u := fmt.Sprintf("https://s%d.example/mcp", i)
		if err := ss.SweepRegister(t.Context(), store.SweepEndpoint{URL: u, Owner: "pilot:" + id, Interval: time.Hour, Added: e.now, Next: e.now}); err != nil {
			t.Fatal(err)
		}
	}
	const at = 8
	statuses := make([]int, at)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range at {
		wg.Go(func() {
			<-start
			req, _ := http.NewRequest("POST", e.api+"/api/v1/pilot/"+id+"/servers", strings.NewReader(fmt.Sprintf(`{"url":"https://late%d.example/mcp"}`, i)))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		})
	}
	close(start)
	wg.Wait()
	created := 0
	for _, s := range statuses {
		switch s {
		case 201:
			created++
		case 409:
		default:
			t.Errorf("a registration answered %d", s)
		}
	}
	mine, err := ss.SweepEndpoints(t.Context(), "pilot:"+id)
	if err != nil {
		t.Fatal(err)
	}
	if created != 1 || len(mine) != service.MaxPilotServers {
		t.Fatalf("%d of %d registrations at once were created (%v), the pilot has %d endpoints; want 1 and %d", created, at, statuses, len(mine), service.MaxPilotServers)
	}
}
