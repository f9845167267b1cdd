package service_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/service"
)

// records are n chained continuity records, as a host's record log holds
// them (the core's bytes, one a line).
func records(t testing.TB, n int) ([]string, []string) {
	lock := madeLock(t, obj{"tools": json.RawMessage(tools), "approved_at": "2026-12-01T10:00:00Z", "server": obj{"url": "https://mcp.example.com/mcp"}})
	var lines, sums []string
	prev := ""
	for i := 0; i < n; i++ {
		rec, sha := chainedRecord(t, obj{"now": fmt.Sprintf("2026-12-01T10:%02d:00Z", i+1), "mode": "enforce", "lock": lock,
			"observed": obj{"endpoint": "https://mcp.example.com/mcp", "pages": []string{`{"tools":` + tools + `}`}}}, prev)
		lines, sums, prev = append(lines, string(rec)), append(sums, sha), sha
	}
	return lines, sums
}

type upload struct {
	status int
	body   []byte
	proof  string
	answer struct {
		PilotID  string `json:"pilot_id"`
		Head     *string
		Accepted int
		Results  []struct {
			RecordSHA256 *string `json:"record_sha256"`
			Status       string
			Reason       *string
			Expected     *string `json:"expected_prev_record_sha256"`
		}
	}
}

// upload posts JSON lines with a bearer token, the answer validated
// against the OpenAPI document.
func (e *env) upload(id, token string, body []byte) upload {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.api+"/api/v1/pilot/"+id+"/records", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/jsonl")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var u upload
	u.status = resp.StatusCode
	u.body, _ = io.ReadAll(resp.Body)
	e.spec.validate(e.t, "POST", "/api/v1/pilot/{id}/records", resp, u.body)
	p, _ := base64.StdEncoding.DecodeString(resp.Header.Get(service.LogProofHeader))
	u.proof = string(p)
	if u.status == http.StatusOK {
		json.Unmarshal(u.body, &u.answer)
	}
	return u
}

func (u upload) statuses() string {
	var s []string
	for _, r := range u.answer.Results {
		s = append(s, r.Status)
	}
	return strings.Join(s, " ")
}

func lines(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }

func TestPilotSQLite(t *testing.T) { testPilot(t, newEnv(t, allowLoopback(), service.Config{})) }

func TestPilotPostgres(t *testing.T) {
	st := pgStore(t, "pilot")
	testPilot(t, newEnv(t, allowLoopback(), service.Config{Store: st}))
}

// testPilot: a pilot made with a token shown once (kept as its hash);
// uploads judged record by record — accepted, a retry's duplicates, an
// edited record refused with its reason, a gap that stops the batch naming
// the record expected — each head the pilot's chain reaches committed to
// the log with a proof the core verifies; bounds, authentication and the
// rate limit.
func testPilot(t *testing.T, e *env) {
	ctx := context.Background()
	var p struct{ PilotID, Token string }
	status, out := e.do("POST", "/api/v1/pilot", "/api/v1/pilot", nil)
	if status != http.StatusCreated {
		t.Fatalf("POST /api/v1/pilot: %d %s", status, out)
	}
	json.Unmarshal(out, &struct {
		PilotID *string `json:"pilot_id"`
		Token   *string `json:"token"`
	}{&p.PilotID, &p.Token})
	stored, err := e.st.GetPilot(ctx, p.PilotID)
	if h := sha256.Sum256([]byte(p.Token)); err != nil || stored.TokenSHA256 != hex.EncodeToString(h[:]) {
		t.Fatalf("the store holds %+v, %v: want the token's hash", stored, err)
	}
	recs, sums := records(t, 6)
	dir := json.RawMessage(e.ok("GET", "/api/v1/keys", "/api/v1/keys", nil))
	logged := func(u upload, prev *string, head string) {
		t.Helper()
		entry := map[string]any{"kind": "crawlcheck-log-entry", "v": 1, "type": "crawlcheck-pilot-batch", "prev_head": prev, "head": head}
		var v verdict
		json.Unmarshal(coreOp(t, "log_verify", obj{"entry": string(canonical(t, entry)), "proof": u.proof, "now": e.now.Format(time.RFC3339), "key_directory": dir}), &v)
		if !v.Valid {
			t.Fatalf("the upload's log proof does not prove the commitment to %s: %v\n%s", head, v.Detail, u.proof)
		}
	}

	for _, bad := range []struct{ id, token string }{{p.PilotID, ""}, {p.PilotID, "cct_wrong"}, {"pilot-00", p.Token}} {
		if u := e.upload(bad.id, bad.token, lines(recs[0])); u.status != http.StatusUnauthorized {
			t.Fatalf("upload as %q with %q: %d %s", bad.id, bad.token, u.status, u.body)
		}
	}

	u := e.upload(p.PilotID, p.Token, lines(recs[0], recs[1]))
	if u.status != 200 || u.statuses() != "accepted accepted" || *u.answer.Head != sums[1] || u.answer.Accepted != 2 {
		t.Fatalf("first upload: %d %s", u.status, u.body)
	}
	logged(u, nil, sums[1])

	// The answer was lost; the host sends the batch again with one more.
	u = e.upload(p.PilotID, p.Token, lines(recs[0], recs[1], recs[2]))
	if u.status != 200 || u.statuses() != "duplicate duplicate accepted" || *u.answer.Head != sums[2] {
		t.Fatalf("retried upload: %d %s", u.status, u.body)
	}
	logged(u, &sums[1], sums[2])

	u = e.upload(p.PilotID, p.Token, lines(recs[1], recs[2]))
	if u.status != 200 || u.statuses() != "duplicate duplicate" || u.proof != "" {
		t.Fatalf("an upload of what the pilot holds: %d %s (proof %q)", u.status, u.body, u.proof)
	}

	edited := strings.Replace(recs[3], `"mode":"enforce"`, `"mode":"observe"`, 1)
	u = e.upload(p.PilotID, p.Token, lines(edited, recs[4], recs[5]))
	if u.status != 200 || u.statuses() != "edited chain_gap" || *u.answer.Head != sums[2] {
		t.Fatalf("edited record: %d %s", u.status, u.body)
	}
	if r := u.answer.Results[0]; r.Reason == nil || !strings.Contains(*r.Reason, "edited after it was made") {
		t.Errorf("the edited record's reason: %v", r.Reason)
	}
	if r := u.answer.Results[1]; r.Expected == nil || *r.Expected != sums[2] {
		t.Errorf("the gap names %v, want the pilot's head %s", r.Expected, sums[2])
	}

	u = e.upload(p.PilotID, p.Token, lines(recs[3], recs[4], recs[5]))
	if u.status != 200 || u.statuses() != "accepted accepted accepted" || *u.answer.Head != sums[5] {
		t.Fatalf("the unedited records: %d %s", u.status, u.body)
	}
	logged(u, &sums[2], sums[5])
	if got, _ := e.st.GetPilot(ctx, p.PilotID); got.Head != sums[5] || got.LoggedHead != sums[5] || got.Records != 6 {
		t.Errorf("the pilot in the store: %+v", got)
	}
	held, err := e.st.PilotHolds(ctx, p.PilotID, sums)
	if err != nil || len(held) != 6 {
		t.Errorf("the store holds %d of the 6 records (%v)", len(held), err)
	}

	for _, c := range []struct {
		name   string
		body   []byte
		status int
		code   string
	}{
		{"empty", nil, 400, "bad_request"},
		{"not UTF-8", []byte("{\"kind\":\"\xff\"}\n"), 400, "bad_request"},
		{"over 8 MiB", bytes.Repeat([]byte("x"), service.MaxPilotBody+1), 413, "body_too_large"},
		{"over 5,000 lines", bytes.Repeat([]byte("{}\n"), service.MaxPilotLines+1), 413, "body_too_large"},
	} {
		u := e.upload(p.PilotID, p.Token, c.body)
		var pr struct{ Code string }
		json.Unmarshal(u.body, &pr)
		if u.status != c.status || pr.Code != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, u.status, u.body, c.status, c.code)
		}
	}
	limited := false
	for i := 0; i < 30 && !limited; i++ {
		limited = e.upload(p.PilotID, p.Token, lines(recs[5])).status == http.StatusTooManyRequests
	}
	if !limited {
		t.Error("30 uploads at once were never rate limited")
	}
}

// canonical is a plain value's canonical JSON, by the core.
func canonical(t testing.TB, v any) []byte {
	b, _ := json.Marshal(v)
	var out struct{ Canonical string }
	json.Unmarshal(coreOp(t, "canonicalize", obj{"json": string(b)}), &out)
	return []byte(out.Canonical)
}

// TestPilotLogFailsThenRecovers: when the log cannot take an upload's
// commitment (no key signs its checkpoint), the records are kept but the
// upload is not acknowledged (503); the host's retry, all duplicates, gets
// the commitment to the head the log missed, with its proof.
func TestPilotLogFailsThenRecovers(t *testing.T) {
	e := newEnv(t, allowLoopback(), service.Config{})
	var p struct {
		ID    string `json:"pilot_id"`
		Token string `json:"token"`
	}
	_, out := e.do("POST", "/api/v1/pilot", "/api/v1/pilot", nil)
	json.Unmarshal(out, &p)
	recs, sums := records(t, 2)
	keysFile := filepath.Join(e.dir, "keys", "keys.json")
	kept, err := os.ReadFile(keysFile)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(keysFile, bytes.ReplaceAll(kept, []byte(`"status": "active"`), []byte(`"status": "retired"`)), 0o600)
	u := e.upload(p.ID, p.Token, lines(recs...))
	var pr struct{ Code string }
	json.Unmarshal(u.body, &pr)
	if u.status != http.StatusServiceUnavailable || pr.Code != "store_unavailable" || u.proof != "" {
		t.Fatalf("with no key to sign the checkpoint: %d %s", u.status, u.body)
	}
	if got, _ := e.st.GetPilot(context.Background(), p.ID); got.Head != sums[1] || got.LoggedHead != "" {
		t.Fatalf("the records must be kept, the head not logged: %+v", got)
	}
	os.WriteFile(keysFile, kept, 0o600)
	u = e.upload(p.ID, p.Token, lines(recs...))
	if u.status != 200 || u.statuses() != "duplicate duplicate" || u.proof == "" {
		t.Fatalf("the retry: %d %s (proof %q)", u.status, u.body, u.proof)
	}
	entry := map[string]any{"kind": "crawlcheck-log-entry", "v": 1, "type": "crawlcheck-pilot-batch", "prev_head": nil, "head": sums[1]}
	var v verdict
	json.Unmarshal(coreOp(t, "log_verify", obj{"entry": string(canonical(t, entry)), "proof": u.proof, "now": e.now.Format(time.RFC3339),
		"key_directory": json.RawMessage(e.ok("GET", "/api/v1/keys", "/api/v1/keys", nil))}), &v)
	if !v.Valid {
		t.Fatalf("the retry's proof does not prove the commitment to the head: %s", u.proof)
	}
	if got, _ := e.st.GetPilot(context.Background(), p.ID); got.LoggedHead != sums[1] {
		t.Fatalf("logged head %q, want %s", got.LoggedHead, sums[1])
	}
}
