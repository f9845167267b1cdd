package service_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/internal/issuer/service"
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
