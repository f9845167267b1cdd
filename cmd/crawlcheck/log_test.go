package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/hosttest/mcpserver/scenario"
	"github.com/crawlcheck/verifier/internal/issuer/fetch"
	"github.com/crawlcheck/verifier/internal/issuer/keys"
	"github.com/crawlcheck/verifier/internal/issuer/service"
	"github.com/crawlcheck/verifier/internal/issuer/store"
)

// issuerForLog runs crawlcheck-issuer's service in-process (its real
// store, keys and log) and answers its URL.
func issuerForLog(t *testing.T) string {
	srv := httptest.NewServer(issuerHandler(t))
	t.Cleanup(srv.Close)
	return srv.URL
}

// issuerHandler is crawlcheck-issuer's service in-process.
func issuerHandler(t *testing.T) http.Handler {
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
	op := sha256.Sum256([]byte(operatorToken))
	svc, err := service.New(context.Background(), service.Config{Keys: live, Store: st, Fetch: fetch.New(fetch.Policy{}), Logger: log.New(io.Discard, "", 0),
		OperatorTokenSHA256: hex.EncodeToString(op[:])})
	if err != nil {
		t.Fatal(err)
	}
	return svc.Handler()
}

// operatorToken publishes corrections on issuerHandler's service.
const operatorToken = "cco_test-operator"

// signLock has the issuer sign a lockfile of tools and writes it and its
// tlog-proof (FILE.tlog-proof) into dir.
func signLock(t *testing.T, issuer, dir, name, tools string) string {
	// Tools handed over are signed only for the operator or a tenant
	// (docs/issuer.md, Trust model): the operator submits them here.
	req, _ := http.NewRequest("POST", issuer+"/api/v1/mcp/lock", strings.NewReader(`{"tools":`+tools+`,"server":{"url":"https://mcp.example.com/mcp"}}`))
	req.Header.Set("Authorization", "Bearer "+operatorToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	proof, err := base64.StdEncoding.DecodeString(resp.Header.Get(service.LogProofHeader))
	if resp.StatusCode != 200 || err != nil || len(proof) == 0 {
		t.Fatalf("POST lock: %d %s (proof: %v)", resp.StatusCode, body, err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".tlog-proof", proof, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestLogVerify: crawlcheck log verify proves a lockfile the issuer signed
// is in its log and that the log it serves later extends the proof's
// checkpoint; a proof edited or of another file is refused (exit 1), and a
// missing proof or issuer is an error (exit 2).
func TestLogVerify(t *testing.T) {
	issuer := issuerForLog(t)
	dir := t.TempDir()
	first := signLock(t, issuer, dir, "first.lock.json", `[{"name":"a","description":"A."}]`)
	signLock(t, issuer, dir, "second.lock.json", `[{"name":"b","description":"B."}]`)

	code, out, errs := runCLI("log", "verify", "--issuer", issuer, first)
	if code != 0 || !strings.Contains(out, "included at index 0 of issuer.test/log, size 1") ||
		!strings.Contains(out, "the log the issuer serves now (size 2) is consistent with it") {
		t.Fatalf("log verify: %d\n%s%s", code, out, errs)
	}

	proof, _ := os.ReadFile(first + ".tlog-proof")
	edited := filepath.Join(dir, "edited.tlog-proof")
	os.WriteFile(edited, bytes.Replace(proof, []byte("\n1\n"), []byte("\n2\n"), 1), 0o644)
	if code, out, _ := runCLI("log", "verify", "--issuer", issuer, "--proof", edited, first); code != 1 || !strings.Contains(out, "NOT IN THE LOG: log_proof_invalid (bad_signature)") {
		t.Fatalf("an edited proof: %d %s", code, out)
	}
	second := filepath.Join(dir, "second.lock.json")
	if code, out, _ := runCLI("log", "verify", "--issuer", issuer, "--proof", first+".tlog-proof", second); code != 1 || !strings.Contains(out, "log_proof_invalid (root_mismatch)") {
		t.Fatalf("another file's proof: %d %s", code, out)
	}
	if code, _, errs := runCLI("log", "verify", "--issuer", issuer, filepath.Join(dir, "none.json")); code != 2 || errs == "" {
		t.Fatalf("a missing file: %d %s", code, errs)
	}
	if code, _, _ := runCLI("log", "verify", first); code != 2 {
		t.Fatalf("no --issuer: %d", code)
	}
}

// TestLogVerifyConsistencyAnswerWithoutProof: the issuer's consistency
// answer is read by the core (consistency_answer): one whose proof is not
// an array of base64 strings is no proof, and the log it serves, of
// another size than the proof's, is not shown to extend it
// (consistency_unavailable, exit 1), rather than the CLI's own reading
// failing on it or taking it.
func TestLogVerifyConsistencyAnswerWithoutProof(t *testing.T) {
	h := issuerHandler(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/log/consistency" {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var a map[string]any
		json.Unmarshal(rec.Body.Bytes(), &a)
		a["consistency"] = []int{1, 2, 3}
		json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	first := signLock(t, srv.URL, dir, "first.lock.json", `[{"name":"a","description":"A."}]`)
	signLock(t, srv.URL, dir, "second.lock.json", `[{"name":"b","description":"B."}]`)
	code, out, errs := runCLI("log", "verify", "--issuer", srv.URL, first)
	if code != 1 || !strings.Contains(out, "THE LOG DOES NOT EXTEND THE PROOF'S CHECKPOINT: log_inconsistent (consistency_unavailable)") {
		t.Fatalf("log verify: %d\n%s%s", code, out, errs)
	}
}

// TestLogMonitor polls the issuer's log: the first poll keeps its
// checkpoint, the next shows the log grew consistently and lists the new
// entries about one server, and a kept checkpoint of another history (a
// forked log) is log_inconsistent (exit 1) and stays kept; one whose size
// does not read is an error (exit 2).
func TestLogMonitor(t *testing.T) {
	issuer := issuerForLog(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "checkpoint")
	signLock(t, issuer, dir, "a.lock.json", `[{"name":"a","description":"A."}]`)
	code, out, errs := runCLI("log", "monitor", "--issuer", issuer, "--state", state)
	if code != 0 || !strings.Contains(out, "log issuer.test/log: 1 entries, consistent with the 0 kept") {
		t.Fatalf("first poll: %d %s%s", code, out, errs)
	}
	signLock(t, issuer, dir, "b.lock.json", `[{"name":"b","description":"B."}]`)
	signLock(t, issuer, dir, "c.lock.json", `[{"name":"c","description":"C."}]`)
	code, out, errs = runCLI("log", "monitor", "--issuer", issuer, "--state", state, "--server", "https://mcp.example.com/mcp")
	if code != 0 || !strings.Contains(out, "3 entries, consistent with the 1 kept") || strings.Count(out, " crawlcheck-mcp-lock ") != 2 || strings.Contains(out, "\n  0 ") {
		t.Fatalf("second poll: %d %s%s", code, out, errs)
	}
	kept, _ := os.ReadFile(state)
	if !strings.HasPrefix(string(kept), "issuer.test/log\n3\n") {
		t.Fatalf("kept: %q", kept)
	}
	// Another issuer with the same name and key would be a fork; here a
	// kept checkpoint with its root changed stands for one.
	forked := bytes.Replace(kept, []byte("\n3\n"), []byte("\n2\n"), 1)
	os.WriteFile(state, forked, 0o644)
	if code, out, _ := runCLI("log", "monitor", "--issuer", issuer, "--state", state); code != 1 || !strings.Contains(out, "log_inconsistent (not_consistent)") {
		t.Fatalf("a forked kept checkpoint: %d %s", code, out)
	}
	if now, _ := os.ReadFile(state); !bytes.Equal(now, forked) {
		t.Fatal("an inconsistent poll replaced the kept checkpoint")
	}
	// A kept checkpoint whose size line the session engine does not read
	// (a leading zero: no note the core kept) is an error, nothing polled
	// from a guessed size, and it stays as it was.
	unread := bytes.Replace(kept, []byte("\n3\n"), []byte("\n03\n"), 1)
	os.WriteFile(state, unread, 0o644)
	if code, _, errs := runCLI("log", "monitor", "--issuer", issuer, "--state", state); code != 2 || !strings.Contains(errs, "the kept checkpoint does not read (move it aside)") || !strings.Contains(errs, "no tree size") {
		t.Fatalf("an unreadable kept checkpoint: %d %s", code, errs)
	}
	if now, _ := os.ReadFile(state); !bytes.Equal(now, unread) {
		t.Fatal("a poll that did not start replaced the kept checkpoint")
	}
}

// checkPage runs check of lock against tools (a tools/list page written
// into dir) at https://mcp.example.com/mcp, with more flags: its exit
// status and all it printed.
func checkPage(t *testing.T, dir, lock, tools string, more ...string) (int, string) {
	t.Helper()
	page := filepath.Join(dir, "page.json")
	os.WriteFile(page, []byte(`{"tools":`+tools+`}`), 0o644)
	code, out, errs := runCLI(append([]string{"check", "--lock", lock, "--tools", page, "--url", "https://mcp.example.com/mcp"}, more...)...)
	return code, out + errs
}

// TestCheckKeepsCheckpoint: check verifies the tlog-proof beside the
// lockfile and keeps the newest checkpoint beside --log; a lockfile whose
// proof is of a larger tree is reconciled by the consistency proof --issuer
// answers, and without an issuer to ask a checkpoint of another size is
// log_inconsistent (exit 1), the kept one left as it was.
func TestCheckKeepsCheckpoint(t *testing.T) {
	issuer := issuerForLog(t)
	dir := t.TempDir()
	resp, err := http.Get(issuer + "/api/v1/keys")
	if err != nil {
		t.Fatal(err)
	}
	keysJSON, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	keysPath := filepath.Join(dir, "keys.json")
	os.WriteFile(keysPath, keysJSON, 0o644)
	logPath := filepath.Join(dir, "records.jsonl")
	keptPath := logPath + ".log-checkpoint"
	check := func(lock, tools string, more ...string) (int, string) {
		t.Helper()
		return checkPage(t, dir, lock, tools, append([]string{"--issuer-keys", keysPath, "--log", logPath}, more...)...)
	}
	const toolsA, toolsB = `[{"name":"a","description":"A."}]`, `[{"name":"b","description":"B."}]`
	a := signLock(t, issuer, dir, "a.lock.json", toolsA)
	if code, out := check(a, toolsA); code != 0 {
		t.Fatalf("first check: %d %s", code, out)
	}
	if kept, _ := os.ReadFile(keptPath); !strings.HasPrefix(string(kept), "issuer.test/log\n1\n") {
		t.Fatalf("kept after the first check: %q", kept)
	}
	b := signLock(t, issuer, dir, "b.lock.json", toolsB)
	if code, out := check(b, toolsB, "--issuer", issuer); code != 0 {
		t.Fatalf("a larger tree, with the issuer to ask: %d %s", code, out)
	}
	kept, _ := os.ReadFile(keptPath)
	if !strings.HasPrefix(string(kept), "issuer.test/log\n2\n") && !strings.HasPrefix(string(kept), "issuer.test/log\n3\n") {
		t.Fatalf("kept after the larger tree: %q", kept)
	}
	if code, out := check(a, toolsA); code != 1 || !strings.Contains(out, "log_inconsistent") || !strings.Contains(out, "consistency_unavailable") || !strings.Contains(out, "no issuer is configured to ask for the consistency proof") {
		t.Fatalf("a smaller tree and no issuer to ask: %d %s", code, out)
	}
	if code, out := check(a, toolsA, "--issuer", "http://127.0.0.1:1", "--issuer-timeout", "2s"); code != 1 || !strings.Contains(out, "log_inconsistent") || !strings.Contains(out, "consistency_unavailable") || !strings.Contains(out, "the issuer gave no consistency proof from") {
		t.Fatalf("a smaller tree and the issuer down: %d %s", code, out)
	}
	if now, _ := os.ReadFile(keptPath); !bytes.Equal(now, kept) {
		t.Fatal("a check that failed replaced the kept checkpoint")
	}
}

// TestCheckLogPinnedKeysOnly: with --issuer-pin and no --issuer-keys the
// tlog-proof is judged by the pins and the directory fetched at the check
// (docs/log.md): verified; another lockfile's proof denied; the issuer down,
// log_proof_invalid beside service_unavailable on the record.
func TestCheckLogPinnedKeysOnly(t *testing.T) {
	issuer := issuerForLog(t)
	dir := t.TempDir()
	resp, err := http.Get(issuer + "/api/v1/keys")
	if err != nil {
		t.Fatal(err)
	}
	var directory struct {
		Keys []struct {
			KID       string `json:"kid"`
			PublicKey string `json:"public_key"`
			Status    string `json:"status"`
		} `json:"keys"`
	}
	err = json.NewDecoder(resp.Body).Decode(&directory)
	resp.Body.Close()
	var pins []string
	for _, k := range directory.Keys {
		if k.Status == "active" {
			pins = append(pins, "--issuer-pin", k.KID+":"+k.PublicKey)
		}
	}
	if err != nil || len(pins) == 0 {
		t.Fatalf("the issuer's directory: %v, %d active keys", err, len(pins)/2)
	}
	check := func(lock, tools, url string) (int, string) {
		t.Helper()
		return checkPage(t, dir, lock, tools, append([]string{"--json", "--issuer", url, "--issuer-timeout", "2s"}, pins...)...)
	}
	const toolsA, toolsB = `[{"name":"a","description":"A."}]`, `[{"name":"b","description":"B."}]`
	a := signLock(t, issuer, dir, "a.lock.json", toolsA)
	if code, out := check(a, toolsA, issuer); code != 0 || !strings.Contains(out, `"included":true`) {
		t.Fatalf("pins only, a valid proof: %d %s", code, out)
	}
	if code, out := check(a, toolsA, "http://127.0.0.1:1"); code != 1 || !strings.Contains(out, "log_proof_invalid") || !strings.Contains(out, "service_unavailable") || !strings.Contains(out, "no_log_origin") {
		t.Fatalf("pins only, the issuer down: %d %s", code, out)
	}
	b := signLock(t, issuer, dir, "b.lock.json", toolsB)
	proof, _ := os.ReadFile(a + ".tlog-proof")
	os.WriteFile(b+".tlog-proof", proof, 0o644)
	if code, out := check(b, toolsB, issuer); code != 1 || !strings.Contains(out, "log_proof_invalid") || !strings.Contains(out, "root_mismatch") {
		t.Fatalf("pins only, another lockfile's proof: %d %s", code, out)
	}
}

// pilotEnrolment is an issuer's answer to POST /api/v1/pilot.
type pilotEnrolment struct {
	ID        string `json:"pilot_id"`
	Token     string `json:"token"`
	RecordKey string `json:"record_key"`
	status    int
}

// enrollPilot makes a pilot with a POST to url (an issuer's
// /api/v1/pilot, with any query). What the answer holds is for the test to
// judge: a member missing reads as "".
func enrollPilot(t *testing.T, url string) pilotEnrolment {
	t.Helper()
	resp, err := http.Post(url, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	var p pilotEnrolment
	json.NewDecoder(resp.Body).Decode(&p)
	resp.Body.Close()
	p.status = resp.StatusCode
	return p
}

// writeToken writes the pilot's token to dir/pilot.token, the file --pilot's
// third field names, and answers its path.
func (p pilotEnrolment) writeToken(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "pilot.token")
	if err := os.WriteFile(path, []byte(p.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCorrections: crawlcheck corrections lists the corrections the issuer
// published for a record log's records, escaped, with the rule table that
// applies now; a log none names says so.
func TestCorrections(t *testing.T) {
	issuer := issuerForLog(t)
	dir := t.TempDir()
	tools := writeTools(t, dir, `[{"name":"a","description":"A."}]`)
	lock := filepath.Join(dir, "a.lock.json")
	if code, out, errs := runCLI("lock", "--tools", tools, "--url", "https://mcp.example.com/mcp", "-o", lock); code != 0 {
		t.Fatalf("lock: %d %s%s", code, out, errs)
	}
	logPath := filepath.Join(dir, "checks.jsonl")
	for i := 0; i < 2; i++ {
		if code, out, errs := runCLI("check", "--lock", lock, "--tools", tools, "--log", logPath); code != 0 {
			t.Fatalf("check: %d %s%s", code, out, errs)
		}
	}
	if code, out, errs := runCLI("corrections", "--issuer", issuer, logPath); code != 0 || !strings.Contains(out, "no correction applies to its 2 digests") {
		t.Fatalf("corrections before any: %d %s%s", code, out, errs)
	}
	records, _ := os.ReadFile(logPath)
	p := enrollPilot(t, issuer+"/api/v1/pilot")
	req, _ := http.NewRequest("POST", issuer+"/api/v1/pilot/"+p.ID+"/records", bytes.NewReader(records))
	req.Header.Set("Authorization", "Bearer "+p.Token)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("upload: %v %v", resp, err)
	}
	second := strings.Split(strings.TrimSpace(string(records)), "\n")[1]
	var rec struct {
		SHA string `json:"record_sha256"`
	}
	json.Unmarshal([]byte(second), &rec)
	var rules struct {
		RulesSHA256 string `json:"rules_sha256"`
	}
	resp, _ := http.Get(issuer + "/api/v1/preflight/rules")
	json.NewDecoder(resp.Body).Decode(&rules)
	resp.Body.Close()
	body, _ := json.Marshal(map[string]string{"target": rec.SHA, "reason": "Rule x was too broad\x1b[2J\u202e.", "reporter": "ops@example.com", "rules_sha256": rules.RulesSHA256})
	req, _ = http.NewRequest("POST", issuer+"/api/v1/corrections", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+operatorToken)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST correction: %v %v", resp, err)
	}
	code, out, errs := runCLI("corrections", "--issuer", issuer, logPath)
	if code != 0 || !strings.Contains(out, "line 2 (record "+rec.SHA+"): correction 1 of its record") ||
		!strings.Contains(out, "the rule table that applies now: "+rules.RulesSHA256) || strings.ContainsAny(out, "\x1b\u202e") || strings.Contains(out, "NOT VERIFIED") {
		t.Fatalf("corrections: %d\n%s%s", code, out, errs)
	}
	if code, out, _ := runCLI("corrections", "--issuer", issuer, "--json", logPath); code != 0 || !strings.Contains(out, `"trust":"verified"`) {
		t.Fatalf("corrections --json: %d %s", code, out)
	}
	if code, _, _ := runCLI("corrections", logPath); code != 2 {
		t.Fatalf("corrections without --issuer: exit %d, want 2", code)
	}
}

func writeTools(t *testing.T, dir, tools string) string {
	path := filepath.Join(dir, "tools.json")
	if err := os.WriteFile(path, []byte(tools), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckPilot: check --pilot uploads the log's records beside the check
// and after the verdict; with the issuer down the check's exit and output are unchanged,
// the records wait in the log, and the next run, with the issuer back,
// sends them all.
func TestCheckPilot(t *testing.T) {
	var down atomic.Bool
	h := issuerHandler(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	p := enrollPilot(t, srv.URL+"/api/v1/pilot")
	tokenFile := p.writeToken(t, dir)
	tools := writeTools(t, dir, `[{"name":"a","description":"A."}]`)
	lock := filepath.Join(dir, "a.lock.json")
	if code, out, errs := runCLI("lock", "--tools", tools, "--url", "https://mcp.example.com/mcp", "-o", lock); code != 0 {
		t.Fatalf("lock: %d %s%s", code, out, errs)
	}
	logPath := filepath.Join(dir, "checks.jsonl")
	pilot := srv.URL + "," + p.ID + "," + tokenFile
	down.Store(true)
	for i := 0; i < 2; i++ {
		code, out, errs := runCLI("check", "--lock", lock, "--tools", tools, "--log", logPath, "--pilot", pilot)
		if code != 0 || !strings.Contains(out, "proceed") || !strings.Contains(errs, "pilot: 0 records acknowledged; the rest wait in") {
			t.Fatalf("check with the issuer down: %d\n%s%s", code, out, errs)
		}
	}
	if _, err := os.Stat(logPath + ".pilot-ack"); err == nil {
		t.Fatal("an ack file with the issuer down")
	}
	down.Store(false)
	if code, out, errs := runCLI("check", "--lock", lock, "--tools", tools, "--log", logPath, "--pilot", pilot); code != 0 || errs != "" {
		t.Fatalf("check with the issuer back: %d\n%s%s", code, out, errs)
	}
	data, _ := os.ReadFile(logPath)
	ack, _ := os.ReadFile(logPath + ".pilot-ack")
	if !strings.HasPrefix(string(ack), fmt.Sprint(len(data), " ")) {
		t.Fatalf("ack %q, want all %d bytes", ack, len(data))
	}
	for _, bad := range [][]string{{"--pilot", pilot}, {"--log", logPath, "--pilot", srv.URL + "," + p.ID}, {"--log", logPath, "--pilot", "ftp://x," + p.ID + "," + tokenFile}} {
		if code, _, _ := runCLI(append([]string{"check", "--lock", lock, "--tools", tools}, bad...)...); code != 2 {
			t.Errorf("check %v: exit %d, want 2", bad, code)
		}
	}
}

// TestCheckPilotRecordKey (issue 37, F7): a pilot made with a record key
// takes only uploads signed with it; --pilot's fourth field is the file
// holding the key, and with it the check's records reach the real issuer.
// Without it every upload is refused (the records wait in the log); a
// file holding no key is exit 2, not an upload that fails each time.
func TestCheckPilotRecordKey(t *testing.T) {
	srv := httptest.NewServer(issuerHandler(t))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	p := enrollPilot(t, srv.URL+"/api/v1/pilot?record_key=true")
	if p.RecordKey == "" {
		t.Fatalf("POST /api/v1/pilot?record_key=true answered no record key: %d", p.status)
	}
	tokenFile := p.writeToken(t, dir)
	keyFile, badKey := filepath.Join(dir, "pilot.key"), filepath.Join(dir, "not.key")
	os.WriteFile(keyFile, []byte(p.RecordKey+"\n"), 0o600)
	os.WriteFile(badKey, []byte(p.Token+"\n"), 0o600)
	tools := writeTools(t, dir, `[{"name":"a","description":"A."}]`)
	lock := filepath.Join(dir, "a.lock.json")
	if code, out, errs := runCLI("lock", "--tools", tools, "--url", "https://mcp.example.com/mcp", "-o", lock); code != 0 {
		t.Fatalf("lock: %d %s%s", code, out, errs)
	}
	logPath := filepath.Join(dir, "checks.jsonl")
	check := func(pilot string) (int, string, string) {
		return runCLI("check", "--lock", lock, "--tools", tools, "--log", logPath, "--pilot", pilot)
	}
	unsigned := srv.URL + "," + p.ID + "," + tokenFile
	if code, out, errs := check(unsigned); code != 0 || !strings.Contains(out, "proceed") || !strings.Contains(errs, "pilot: 0 records acknowledged; the rest wait in") {
		t.Fatalf("check without the record key: %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(logPath + ".pilot-ack"); err == nil {
		t.Fatal("an unsigned upload to a pilot with a record key was acknowledged")
	}
	if code, out, errs := check(unsigned + "," + keyFile); code != 0 || errs != "" {
		t.Fatalf("check with the record key: %d\n%s%s", code, out, errs)
	}
	data, _ := os.ReadFile(logPath)
	ack, _ := os.ReadFile(logPath + ".pilot-ack")
	if !strings.HasPrefix(string(ack), fmt.Sprint(len(data), " ")) {
		t.Fatalf("ack %q, want all %d bytes (both checks' records)", ack, len(data))
	}
	for _, bad := range []string{unsigned + "," + badKey, unsigned + "," + filepath.Join(dir, "missing.key"), unsigned + "," + keyFile + ",more", unsigned + ","} {
		code, _, errs := check(bad)
		if code != 2 {
			t.Errorf("--pilot %s: exit %d, want 2", bad, code)
		}
		if strings.Contains(errs, p.Token) {
			t.Errorf("--pilot %s: stderr shows the file's secret: %s", bad, errs)
		}
	}
}

// TestCheckPilotBeside: the records an earlier run left waiting are sent
// while the check reads the server, not after it: the server's tools/list
// answers only once the issuer has taken them (or after 10 s, which the
// test calls a failure). An issuer that never answers holds the exit at
// most --pilot-timeout past the verdict and changes nothing of it.
func TestCheckPilotBeside(t *testing.T) {
	var down, hang atomic.Bool
	got := make(chan struct{}, 1)
	h := issuerHandler(t)
	iss := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case down.Load():
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		case hang.Load():
			io.Copy(io.Discard, r.Body) // only then does the server notice the client going away
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		h.ServeHTTP(w, r)
		if strings.HasSuffix(r.URL.Path, "/records") {
			select {
			case got <- struct{}{}:
			default:
			}
		}
	}))
	t.Cleanup(iss.Close)
	file, err := scenario.Parse([]byte(`{"tools":[{"name":"a","description":"A.","inputSchema":{"type":"object"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var wait atomic.Bool
	var during atomic.Bool
	mcpHandler := scenario.New(file, log.New(io.Discard, "", 0)).Handler()
	mcp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if wait.Load() && bytes.Contains(body, []byte(`"tools/list"`)) {
			select {
			case <-got:
				during.Store(true)
			case <-time.After(10 * time.Second):
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(mcp.Close)
	dir := t.TempDir()
	p := enrollPilot(t, iss.URL+"/api/v1/pilot")
	tokenFile := p.writeToken(t, dir)
	lock := filepath.Join(dir, "a.lock.json")
	if code, out, errs := runCLI("lock", "--url", mcp.URL+"/mcp", "-o", lock); code != 0 {
		t.Fatalf("lock: %d %s%s", code, out, errs)
	}
	logPath := filepath.Join(dir, "checks.jsonl")
	check := func(more ...string) (int, string, string) {
		return runCLI(append([]string{"check", "--lock", lock, "--url", mcp.URL + "/mcp", "--log", logPath, "--pilot", iss.URL + "," + p.ID + "," + tokenFile}, more...)...)
	}
	down.Store(true)
	if code, out, errs := check(); code != 0 || !strings.Contains(errs, "pilot: 0 records acknowledged") {
		t.Fatalf("check with the issuer down: %d\n%s%s", code, out, errs)
	}
	down.Store(false)
	wait.Store(true)
	if code, out, errs := check(); code != 0 || errs != "" {
		t.Fatalf("check with the issuer back: %d\n%s%s", code, out, errs)
	}
	if !during.Load() {
		t.Fatal("the waiting record was not sent while the check read the server")
	}
	wait.Store(false)
	data, _ := os.ReadFile(logPath)
	if ack, _ := os.ReadFile(logPath + ".pilot-ack"); !strings.HasPrefix(string(ack), fmt.Sprint(len(data), " ")) {
		t.Fatalf("ack %q, want all %d bytes: the check's own record is sent after the verdict", ack, len(data))
	}
	hang.Store(true)
	code, out, errs := check("--pilot-timeout", "200ms")
	if code != 0 || !strings.Contains(out, "proceed") || !strings.Contains(errs, "pilot: 0 records acknowledged; the rest wait in") {
		t.Fatalf("check with the issuer hanging: %d\n%s%s", code, out, errs)
	}
}
