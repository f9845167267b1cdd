package service_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/heappeak"
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

// TestReportMemoryBounded (F4, F5): a report's heap does not grow with the
// pilot's records. It held every record it read (up to 16 MiB) and then
// the same bytes again as one log for the chain check; it now reads them a
// page at a time, each page's chain checked and its records counted before
// the next is read: over 10 MiB of records, the heap the report takes stays
// under the records' own size (before: 36 to 38 MiB on SQLite and
// PostgreSQL; now 3 to 5 MiB, most of it the collector's headroom).
func TestReportMemoryBoundedSQLite(t *testing.T) { testReportMemoryBounded(t, nil) }

func TestReportMemoryBoundedPostgres(t *testing.T) {
	testReportMemoryBounded(t, pgStore(t, "reportmemory"))
}

func testReportMemoryBounded(t *testing.T, st store.Store) {
	e := newEnv(t, allowLoopback(), service.Config{Store: st})
	id, token := e.newPilot()
	var batch bytes.Buffer
	var prev string
	size, n := 0, 0
	lock := madeLock(t, obj{"tools": json.RawMessage(tools), "approved_at": "2026-12-01T10:00:00Z", "server": obj{"url": "https://mcp.example.com/mcp"}})
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for size < 10<<20 {
		var rec json.RawMessage
		rec, prev = chainedRecord(t, obj{"now": start.Add(time.Duration(n) * time.Second).Format(time.RFC3339), "mode": "enforce", "lock": lock,
			"observed": obj{"endpoint": "https://mcp.example.com/mcp", "pages": []string{`{"tools":` + tools + `}`}}}, prev)
		batch.Write(rec)
		batch.WriteByte('\n')
		size, n = size+len(rec)+1, n+1
		if batch.Len() > 1<<20 || size >= 10<<20 {
			if u := e.upload(id, token, batch.Bytes()); u.status != 200 {
				t.Fatalf("upload: %d %s", u.status, u.body)
			}
			batch.Reset()
		}
	}
	req, _ := http.NewRequest("GET", e.api+"/api/v1/pilot/"+id+"/report?week=2026-W49", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	var body []byte
	var status int
	peak := heappeak.Of(func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		status = resp.StatusCode
		body, _ = io.ReadAll(resp.Body)
	})
	var r struct {
		Records    int
		RecordsCut bool `json:"records_cut"`
		Chain      struct{ Valid bool }
	}
	if status != 200 || json.Unmarshal(body, &r) != nil || r.Records != n || r.RecordsCut || !r.Chain.Valid {
		t.Fatalf("report: %d %.300s; want %d records, whole, chained", status, body, n)
	}
	t.Logf("%d records, %d bytes; the report's peak heap %d bytes", n, size, peak)
	if peak > uint64(size) {
		t.Errorf("the report took %d bytes of heap for %d bytes of records: its memory grows with them", peak, size)
	}
}
