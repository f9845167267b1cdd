package preflight_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/crawlcheck/verifier/internal/preflight"
)

// signedLock has iss read s and sign the lockfile pinning what it read,
// and writes it with the tlog-proof its answer carried (ProofPath).
func signedLock(t *testing.T, iss *testIssuer, s *server, path string) string {
	t.Helper()
	resp, err := http.Get(iss.url + "/api/v1/mcp/lock?url=" + url.QueryEscape(s.url))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	proof, err := base64.StdEncoding.DecodeString(resp.Header.Get("X-Crawlcheck-Log-Proof"))
	if resp.StatusCode != http.StatusOK || err != nil || len(proof) == 0 {
		t.Fatalf("GET lock: %d %s (proof: %v)", resp.StatusCode, body, err)
	}
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(preflight.ProofPath(path), proof, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// recordLog is a record's log member.
type recordLog struct {
	Included   bool  `json:"included"`
	Consistent *bool `json:"consistent"`
	Checkpoint *struct {
		Size uint64 `json:"size"`
	} `json:"checkpoint"`
	Reason string `json:"reason"`
	Keep   string `json:"keep"`
}

func logOf(t *testing.T, rec preflight.Record) recordLog {
	t.Helper()
	var r struct{ Log *recordLog }
	if err := json.Unmarshal(rec.Raw, &r); err != nil || r.Log == nil {
		t.Fatalf("the record has no log member (%v): %s", err, rec.Raw)
	}
	return *r.Log
}

func readKept(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSessionKeepsCheckpoint: a session whose lockfile has a tlog-proof
// beside it verifies the proof at every check, keeps the newest checkpoint
// beside its record log, and checks the next lockfile's checkpoint against
// it with a consistency proof from the issuer, smaller or larger. A lockfile
// signed by another history of the same log (a second issuer with the same
// keys: a fork) is log_inconsistent and denied, and the kept checkpoint
// stays the one of the history seen first; so is a smaller tree when the
// issuer is down, with the reason consistency_unavailable.
func TestSessionKeepsCheckpoint(t *testing.T) {
	s := start(t, "http", `{"tools":`+threeTools+`}`)
	iss := startIssuer(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "records.jsonl")
	keptPath := preflight.CheckpointPath(logPath)
	first := signedLock(t, iss, s, filepath.Join(dir, "first.lock.json"))

	check := func(lockPath string, iss *testIssuer) (preflight.Record, recordLog) {
		t.Helper()
		cfg := serviceConfig(t, lockPath, iss)
		cfg.LogPath = logPath
		sess, recs := open(t, s, cfg)
		defer sess.Close()
		rec := recs.next(t)
		return rec, logOf(t, rec)
	}

	rec, l := check(first, iss)
	if rec.Effect != preflight.EffectProceed || !l.Included || l.Consistent != nil || l.Keep == "" {
		t.Fatalf("first check: effect %s, log %+v; want proceed, included, nothing kept before", rec.Effect, l)
	}
	if got := readKept(t, keptPath); got != l.Keep {
		t.Fatalf("kept %q, the record says %q", got, l.Keep)
	}
	firstSize := l.Checkpoint.Size

	// The issuer signs more (this lockfile, and the receipts of the checks):
	// the next proof's checkpoint is of a larger tree, consistent with the
	// kept one by the issuer's proof, and becomes the one kept.
	second := signedLock(t, iss, s, filepath.Join(dir, "second.lock.json"))
	rec, l = check(second, iss)
	if rec.Effect != preflight.EffectProceed || !l.Included || l.Consistent == nil || !*l.Consistent || l.Checkpoint.Size <= firstSize {
		t.Fatalf("larger tree: effect %s, log %+v; want proceed, included and consistent beyond size %d", rec.Effect, l, firstSize)
	}
	newest := readKept(t, keptPath)
	if newest != l.Keep {
		t.Fatalf("after the larger tree, kept %q; the record says %q", newest, l.Keep)
	}

	// The first lockfile again: its checkpoint is of a smaller tree, a
	// prefix of the kept one; the larger stays kept.
	rec, l = check(first, iss)
	if rec.Effect != preflight.EffectProceed || l.Consistent == nil || !*l.Consistent || l.Keep != newest {
		t.Fatalf("smaller tree: effect %s, log %+v; want proceed, consistent, the larger kept", rec.Effect, l)
	}

	// A fork: another history under the same log and keys.
	other := startIssuer(t)
	forked := signedLock(t, other, s, filepath.Join(dir, "forked.lock.json"))
	rec, l = check(forked, other)
	if rec.Effect != preflight.EffectDeny || !slices.Contains(observations(rec), "log_inconsistent") || l.Keep != newest {
		t.Fatalf("fork: effect %s, observations %v, log %+v; want deny on log_inconsistent, the first history kept", rec.Effect, observations(rec), l)
	}
	if got := readKept(t, keptPath); got != newest {
		t.Fatalf("a fork changed the kept checkpoint to %q", got)
	}

	// The issuer down: the smaller tree cannot be shown a prefix of the kept
	// one. Denied all the same, but the record says why in the core's words,
	// consistency_unavailable, not a fork proved.
	rec, l = check(first, &testIssuer{url: "http://127.0.0.1:1"})
	if rec.Effect != preflight.EffectDeny || !slices.Contains(observations(rec), "log_inconsistent") || l.Reason != "consistency_unavailable" || l.Keep != newest {
		t.Fatalf("issuer down: effect %s, observations %v, log %+v; want deny on log_inconsistent, consistency_unavailable, the kept one kept", rec.Effect, observations(rec), l)
	}
}

// TestSessionLogProofInvalid: a proof that is not the lockfile's is
// log_proof_invalid, denied in enforce, and nothing is kept.
func TestSessionLogProofInvalid(t *testing.T) {
	s := start(t, "http", `{"tools":`+threeTools+`}`)
	iss := startIssuer(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "records.jsonl")
	first := signedLock(t, iss, s, filepath.Join(dir, "first.lock.json"))
	s.mutate(t, t2RugPull) // another list, another lockfile, another entry
	second := signedLock(t, iss, s, filepath.Join(dir, "second.lock.json"))
	copyProof(t, first, second)
	cfg := serviceConfig(t, second, iss)
	cfg.LogPath = logPath
	sess, recs := open(t, s, cfg)
	rec := recs.next(t)
	if l := logOf(t, rec); rec.Effect != preflight.EffectDeny || !slices.Contains(observations(rec), "log_proof_invalid") || l.Reason != "root_mismatch" {
		t.Fatalf("another lockfile's proof: effect %s, observations %v, log %+v; want deny on log_proof_invalid (root_mismatch)", rec.Effect, observations(rec), l)
	}
	if _, err := os.Stat(preflight.CheckpointPath(logPath)); !os.IsNotExist(err) {
		t.Fatalf("a checkpoint was kept from a proof that failed (%v)", err)
	}
	sess.Close()
}

// TestSessionLogPinnedKeysOnly: without the operator's copy of the key
// directory, the log is judged by the baseline's keys, the pins and the
// directory fetched at each check (docs/log.md): a valid proof verifies,
// another lockfile's proof is log_proof_invalid and denied, and with the
// issuer down (no directory, so no log origin) the record says
// service_unavailable and log_proof_invalid (no_log_origin), never silence.
func TestSessionLogPinnedKeysOnly(t *testing.T) {
	s := start(t, "http", `{"tools":`+threeTools+`}`)
	iss := startIssuer(t)
	dir := t.TempDir()
	first := signedLock(t, iss, s, filepath.Join(dir, "first.lock.json"))
	check := func(lockPath string, iss *testIssuer) (preflight.Record, recordLog) {
		t.Helper()
		cfg := preflight.Config{LockPath: lockPath, Issuer: &preflight.Issuer{URL: iss.url, PinnedKeys: []preflight.PinnedKey{activeKey}, Timeout: issuerTimeout}}
		sess, recs := open(t, s, cfg)
		defer sess.Close()
		rec := recs.next(t)
		return rec, logOf(t, rec)
	}
	if rec, l := check(first, iss); rec.Effect != preflight.EffectProceed || !l.Included || l.Keep == "" {
		t.Fatalf("pins only, a valid proof: effect %s, observations %v, log %+v; want proceed, included", rec.Effect, observations(rec), l)
	}

	rec, l := check(first, &testIssuer{url: "http://127.0.0.1:1"})
	if obs := observations(rec); rec.Effect != preflight.EffectDeny || !slices.Contains(obs, "service_unavailable") || !slices.Contains(obs, "log_proof_invalid") || l.Reason != "no_log_origin" {
		t.Fatalf("pins only, the issuer down: effect %s, observations %v, log %+v; want deny on log_proof_invalid (no_log_origin) beside service_unavailable", rec.Effect, obs, l)
	}

	s.mutate(t, t2RugPull) // another list, another lockfile, another entry
	second := signedLock(t, iss, s, filepath.Join(dir, "second.lock.json"))
	copyProof(t, first, second)
	if rec, l := check(second, iss); rec.Effect != preflight.EffectDeny || !slices.Contains(observations(rec), "log_proof_invalid") || l.Reason != "root_mismatch" {
		t.Fatalf("pins only, another lockfile's proof: effect %s, observations %v, log %+v; want deny on log_proof_invalid (root_mismatch)", rec.Effect, observations(rec), l)
	}

}

// copyProof puts the log proof kept beside the lockfile from beside the
// lockfile to as well: a proof of another lockfile's entry.
func copyProof(t *testing.T, from, to string) {
	t.Helper()
	proof, err := os.ReadFile(preflight.ProofPath(from))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(preflight.ProofPath(to), proof, 0o644); err != nil {
		t.Fatal(err)
	}
}
