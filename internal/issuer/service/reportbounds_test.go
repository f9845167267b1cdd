package service_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/service"
	"github.com/crawlcheck/verifier/internal/issuer/store"
)

// TestReportPerEndpoint (F5, F4): a report reads the sweep's changes of the
// endpoints its records name, endpoint by endpoint, and no other (every
// change of the week was parsed: 20,000 events, 3.9 GiB; here a change it
// cannot read on an endpoint the records do not name was a 500), and the
// records it reads are bounded by their bytes (records_cut).
func TestReportPerEndpointSQLite(t *testing.T) { testReportPerEndpoint(t, nil) }

func TestReportPerEndpointPostgres(t *testing.T) { testReportPerEndpoint(t, pgStore(t, "report")) }

func testReportPerEndpoint(t *testing.T, st store.Store) {
	recs, _ := records(t, 4)
	e := newEnv(t, allowLoopback(), service.Config{Store: st, MaxReportBytes: int64(len(recs[0]) + len(recs[1]) + 2)})
	ss, _ := store.SweepOf(e.st)
	ctx := t.Context()
	seen := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	for _, u := range []string{"https://other.example/mcp", "https://third.example/mcp"} {
		if err := ss.SweepRegister(ctx, store.SweepEndpoint{URL: u, Owner: "operator", Interval: time.Hour, Added: seen, Next: seen}); err != nil {
			t.Fatal(err)
		}
		if err := ss.SweepRecord(ctx, u, store.SweepReading{At: seen, Next: seen.Add(time.Hour), Surface: "s1", Body: []byte("{}"),
			Change: &store.SweepChange{URL: u, SeenAt: seen, From: "s0", To: "s1", Detail: []byte("not the core's diff")}}); err != nil {
			t.Fatal(err)
		}
	}
	id, token := e.newPilot()
	if u := e.upload(id, token, lines(recs...)); u.status != 200 {
		t.Fatalf("upload: %d %s", u.status, u.body)
	}
	req, _ := http.NewRequest("GET", e.api+"/api/v1/pilot/"+id+"/report?week=2026-W49", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Records    int
		RecordsCut bool `json:"records_cut"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &r) != nil || r.Records != 2 || !r.RecordsCut {
		t.Fatalf("report: %d %s; want 2 records read of 4, cut", resp.StatusCode, body)
	}
}
