package preflight_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/preflight"
)

// newPilot makes a pilot on the issuer.
func newPilot(t *testing.T, iss *testIssuer) preflight.Pilot {
	t.Helper()
	resp, err := http.Post(iss.url+"/api/v1/pilot", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct {
		ID    string `json:"pilot_id"`
		Token string `json:"token"`
	}
	if resp.StatusCode != http.StatusCreated || json.NewDecoder(resp.Body).Decode(&p) != nil {
		t.Fatalf("POST /api/v1/pilot: %s", resp.Status)
	}
	return preflight.Pilot{URL: iss.url, ID: p.ID, Token: p.Token}
}

// acked is the offset the ack file keeps (0 without one).
func acked(logPath string) int64 {
	b, _ := os.ReadFile(preflight.PilotAckPath(logPath))
	n, _ := strconv.ParseInt(strings.Fields(string(b) + " 0")[0], 10, 64)
	return n
}

// TestPilotUploadIssuerDown: a session with a pilot checks as fast with the
// issuer down as without one, every record waits in the log, and once the
// issuer is back the background upload sends them all; the issuer then
// holds each once (an upload sent again answers duplicates).
func TestPilotUploadIssuerDown(t *testing.T) {
	s := start(t, "http", `{"tools":`+threeTools+`}`)
	iss := startIssuer(t)
	p := newPilot(t, iss)
	iss.knobs(t, `{"down":"503"}`)
	lockPath := lockOf(t, s, preflight.LockOptions{})
	logPath := filepath.Join(t.TempDir(), "records.jsonl")
	start := time.Now()
	sess, recs := open(t, s, preflight.Config{LockPath: lockPath, LogPath: logPath, Pilot: &p})
	recs.next(t)
	for i := 0; i < 3; i++ {
		if _, err := sess.Recheck(context.Background()); err != nil {
			t.Fatalf("a check with the issuer down: %v", err)
		}
		recs.next(t)
	}
	if d := time.Since(start); d > checkTimeout {
		t.Errorf("four checks with the pilot's issuer down took %v", d)
	}
	data, _ := os.ReadFile(logPath)
	if acked(logPath) != 0 || bytes.Count(data, []byte("\n")) != 4 {
		t.Fatalf("with the issuer down: acked %d of %d bytes", acked(logPath), len(data))
	}
	// The session's uploader is in its backoff; a new session after the
	// issuer is back sends what waits (as after a restart).
	sess.Close()
	iss.knobs(t, `{}`)
	_, recs = open(t, s, preflight.Config{LockPath: lockPath, LogPath: logPath, Pilot: &p})
	recs.next(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, _ = os.ReadFile(logPath)
		if acked(logPath) == int64(len(data)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the issuer is back, but %d of %d bytes are acknowledged", acked(logPath), len(data))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The issuer holds every record as written: sent whole, each is a duplicate.
	req, _ := http.NewRequest("POST", iss.url+"/api/v1/pilot/"+p.ID+"/records", bytes.NewReader(data))
	req.Header.Set("Authorization", "Bearer "+p.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct{ Results []struct{ Status string } }
	json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	if len(answer.Results) != 5 {
		t.Fatalf("the whole log sent: %+v", answer)
	}
	for _, r := range answer.Results {
		if r.Status != "duplicate" {
			t.Fatalf("the whole log sent: %+v (every record must be held as written)", answer)
		}
	}
	// Sent again (the ack file lost): every record is a duplicate.
	os.Remove(preflight.PilotAckPath(logPath))
	if n, err := preflight.UploadPending(context.Background(), p, logPath); err != nil || n != 5 || acked(logPath) != int64(len(data)) {
		t.Fatalf("sent again: %d, %v", n, err)
	}
}

// TestPilotUploadBackoff: an uploader whose issuer is down keeps every
// record and tries again with backoff, and sends them once it is back.
func TestPilotUploadBackoff(t *testing.T) {
	uploadWithBackoff(t, 20*time.Millisecond, 100*time.Millisecond)
}

// TestPilotUploadMaxBackoffAlone: a deployment that bounds only the longest
// wait (under the default 1 s least) still tries again within it: the core
// moves the default min to the max given, where it had refused the bounds
// and the uploader had stopped for good after its first failed pass.
func TestPilotUploadMaxBackoffAlone(t *testing.T) {
	uploadWithBackoff(t, 0, 100*time.Millisecond)
}

func uploadWithBackoff(t *testing.T, least, most time.Duration) {
	s := start(t, "http", `{"tools":`+threeTools+`}`)
	iss := startIssuer(t)
	p := newPilot(t, iss)
	lockPath := lockOf(t, s, preflight.LockOptions{})
	logPath := filepath.Join(t.TempDir(), "records.jsonl")
	sess, recs := open(t, s, preflight.Config{LockPath: lockPath, LogPath: logPath})
	recs.next(t)
	sess.Recheck(context.Background())
	recs.next(t)
	sess.Close()
	iss.knobs(t, `{"down":"503"}`)
	u := preflight.NewUploader(p, logPath)
	u.MinBackoff, u.MaxBackoff = least, most
	u.Start()
	defer u.Close()
	time.Sleep(300 * time.Millisecond)
	if acked(logPath) != 0 || u.Err() == nil || !strings.Contains(u.Err().Error(), "HTTP 503") {
		t.Fatalf("with the issuer down: acked %d, err %v", acked(logPath), u.Err())
	}
	iss.knobs(t, `{}`)
	data, _ := os.ReadFile(logPath)
	deadline := time.Now().Add(5 * time.Second)
	for acked(logPath) != int64(len(data)) {
		if time.Now().After(deadline) {
			t.Fatalf("the issuer is back, but %d of %d bytes are acknowledged (%v)", acked(logPath), len(data), u.Err())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPilotUploadBatches: a log is sent in batches of at most 500 lines
// (every line answered, here each edited: not a record the core wrote), and
// a line over the issuer's 8 MiB stays in the log with an error naming it.
func TestPilotUploadBatches(t *testing.T) {
	iss := startIssuer(t)
	p := newPilot(t, iss)
	logPath := filepath.Join(t.TempDir(), "records.jsonl")
	os.WriteFile(logPath, bytes.Repeat([]byte("{}\n"), 600), 0o644)
	if n, err := preflight.UploadPending(context.Background(), p, logPath); err != nil || n != 600 || acked(logPath) != 1800 {
		t.Fatalf("600 lines: %d acknowledged, %v (offset %d)", n, err, acked(logPath))
	}
	f, _ := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(append(bytes.Repeat([]byte("x"), 9<<20), '\n'))
	f.Close()
	if n, err := preflight.UploadPending(context.Background(), p, logPath); err == nil || n != 0 || !strings.Contains(err.Error(), "is over 8388608 bytes") || acked(logPath) != 1800 {
		t.Fatalf("a 9 MiB line: %d, %v (offset %d)", n, err, acked(logPath))
	}
}

// TestPilotUploadRecordKey (issue 37, F7): a pilot made with a record key
// takes the uploads its host signs with it, and none without: the same log
// uploaded without the key is refused and nothing of it acknowledged.
func TestPilotUploadRecordKey(t *testing.T) {
	s := start(t, "http", `{"tools":`+threeTools+`}`)
	iss := startIssuer(t)
	resp, err := http.Post(iss.url+"/api/v1/pilot?record_key=true", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	var made struct {
		ID        string `json:"pilot_id"`
		Token     string `json:"token"`
		RecordKey string `json:"record_key"`
	}
	json.NewDecoder(resp.Body).Decode(&made)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || made.RecordKey == "" {
		t.Fatalf("POST /api/v1/pilot?record_key=true: %s %+v", resp.Status, made)
	}
	lockPath := lockOf(t, s, preflight.LockOptions{})
	logPath := filepath.Join(t.TempDir(), "records.jsonl")
	sess, recs := open(t, s, preflight.Config{LockPath: lockPath, LogPath: logPath})
	recs.next(t)
	sess.Close()
	unsigned := preflight.Pilot{URL: iss.url, ID: made.ID, Token: made.Token}
	if n, err := preflight.UploadPending(context.Background(), unsigned, logPath); err == nil || n != 0 || acked(logPath) != 0 {
		t.Fatalf("an unsigned upload to a pilot with a record key: %d records, %v, acked %d", n, err, acked(logPath))
	}
	signed := unsigned
	signed.RecordKey = made.RecordKey
	data, _ := os.ReadFile(logPath)
	if n, err := preflight.UploadPending(context.Background(), signed, logPath); err != nil || n != 1 || acked(logPath) != int64(len(data)) {
		t.Fatalf("a signed upload: %d records, %v, acked %d of %d", n, err, acked(logPath), len(data))
	}
}
