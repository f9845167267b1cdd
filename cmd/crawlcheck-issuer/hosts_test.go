package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crawlcheck/verifier/bindings/go/preflight"
	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/listening"
)

// The hosts against crawlcheck-issuer itself (not the test issuer): the CLI
// and the Go preflight get a verified baseline from GET lock?url= of a real
// server, a signed lock check guard accepts, a replay that reproduces it,
// and with the service down the local fallback with service_unavailable on
// the record; then a whole key rotation, each host following the live
// directory itself (the pinned keys, and GET /api/v1/keys fetched at every
// check). The JS and Python hosts run the same walk in their suites
// (bindings/js/test/realissuer.test.js, bindings/python/tests/test_real_issuer.py).

var (
	buildOnce sync.Once
	bins      struct{ issuer, cli, mcpserver string }
	buildErr  error
)

func buildAll(t *testing.T) {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "crawlcheck-issuer-hosts-")
		if err != nil {
			buildErr = err
			return
		}
		bins.issuer, bins.cli, bins.mcpserver = filepath.Join(dir, "crawlcheck-issuer"), filepath.Join(dir, "crawlcheck"), filepath.Join(dir, "mcpserver")
		out, err := exec.Command("go", "build", "-o", dir, ".", "../crawlcheck", "../../hosttest/mcpserver").CombinedOutput()
		if err != nil {
			buildErr = err
			buildErr = &buildError{err, out}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + string(e.out) }

// stack is a crawlcheck-issuer (fresh keys, SQLite beside them) and a
// scenario MCP server over streamable HTTP.
type stack struct {
	t       *testing.T
	keys    string
	issuer  string
	mcp     string
	stopIss func()
	token   string // the operator token
}

const threeTools = `[{"name":"t1","description":"First tool.","inputSchema":{"type":"object"}},
	{"name":"t2","description":"Second tool.","inputSchema":{"type":"object"}},
	{"name":"t3","description":"Third tool.","inputSchema":{"type":"object"}}]`

func newStack(t *testing.T, serveArgs ...string) *stack {
	buildAll(t)
	s := &stack{t: t, keys: filepath.Join(t.TempDir(), "keys")}
	s.run(bins.issuer, "keys", "init", "--dir", s.keys, "--issuer", "issuer.test")
	// The operator's token: the lockfiles these tests have signed are of
	// the scenario server on loopback, which only the operator's requests
	// may have the service read (docs/issuer.md, Trust model).
	out, err := exec.Command(bins.issuer, "operator-token", "--dir", s.keys).Output() // the token alone, on stdout
	if err != nil {
		t.Fatalf("operator-token: %v", err)
	}
	s.token = strings.TrimSpace(string(out))
	scen := filepath.Join(t.TempDir(), "scenario.json")
	os.WriteFile(scen, []byte(`{"tools":`+threeTools+`}`), 0o644)
	cmd := exec.Command(bins.mcpserver, "--scenario", scen, "--listen", "127.0.0.1:0")
	cmd.Stderr = os.Stderr
	url, stop, err := listening.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	s.mcp = url
	cmd = exec.Command(bins.issuer, append([]string{"serve", "--dir", s.keys, "--listen", "127.0.0.1:0", "--allow-http", "--allow-private", "127.0.0.1/32"}, serveArgs...)...)
	cmd.Stderr = os.Stderr
	if s.issuer, s.stopIss, err = listening.Start(cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stopIss)
	return s
}

func (s *stack) run(bin string, args ...string) string {
	s.t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("%s %v: %v\n%s", filepath.Base(bin), args, err, out)
	}
	return string(out)
}

// get sends a GET as the operator.
func (s *stack) get(path string) []byte {
	s.t.Helper()
	req, _ := http.NewRequest("GET", s.issuer+path, nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		s.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return b
}

// post sends a POST as the operator (a decision of the loopback server
// reads it: the operator's --allow-private range).
func (s *stack) post(path string, body any) []byte {
	s.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", s.issuer+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		s.t.Fatalf("POST %s: %d %s", path, resp.StatusCode, out)
	}
	return out
}

// files writes the lockfile and the live key directory as the operator's
// copies, and answers their paths.
func (s *stack) files(lock []byte) (lockPath, dirPath string) {
	dir := s.t.TempDir()
	lockPath, dirPath = filepath.Join(dir, "crawlcheck.lock.json"), filepath.Join(dir, "issuer-directory.json")
	os.WriteFile(lockPath, lock, 0o644)
	os.WriteFile(dirPath, s.get("/api/v1/keys"), 0o644)
	return lockPath, dirPath
}

// record is what the tests read of a record.
type record struct {
	Effect       string `json:"effect"`
	Observations []struct {
		Observation string          `json:"observation"`
		Detail      json.RawMessage `json:"detail"`
	} `json:"observations"`
	Baseline struct {
		Trust       string  `json:"trust"`
		TrustReason *string `json:"trust_reason"`
	} `json:"baseline"`
	Issuer *struct {
		PolicyResult  string `json:"policy_result"`
		EvidenceLevel string `json:"evidence_level"`
		Receipt       *struct {
			SHA256 string `json:"sha256"`
		} `json:"receipt"`
	} `json:"issuer"`
}

func (r record) names() []string {
	var out []string
	for _, o := range r.Observations {
		out = append(out, o.Observation)
	}
	return out
}

func (r record) trust() string {
	if r.Baseline.TrustReason != nil {
		return r.Baseline.Trust + "/" + *r.Baseline.TrustReason
	}
	return r.Baseline.Trust
}

// keySource is how a host is told which issuer keys vouch: the operator's copy
// of the key directory (a file), or pinned keys with the issuer's live
// directory, which the host fetches at each check.
type keySource struct {
	dirPath string
	pins    []preflight.PinnedKey
}

// cliCheck runs crawlcheck check --issuer and answers its record.
func (s *stack) cliCheck(lockPath string, k keySource, issuer string) record {
	s.t.Helper()
	args := []string{"check", "--lock", lockPath, "--url", s.mcp, "--issuer", issuer,
		"--issuer-timeout", "3s", "--json", "--log", filepath.Join(s.t.TempDir(), "records.jsonl")}
	if k.dirPath != "" {
		args = append(args, "--issuer-keys", k.dirPath)
	}
	for _, p := range k.pins {
		args = append(args, "--issuer-pin", p.KID+":"+p.PublicKey)
	}
	out, err := exec.Command(bins.cli, args...).Output()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		s.t.Fatal(err)
	}
	var r record
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &r) == nil && r.Effect != "" {
			return r
		}
	}
	s.t.Fatalf("crawlcheck check printed no record:\n%s", out)
	return r
}

// goCheck opens a Go preflight session with the issuer and answers its
// first record.
func (s *stack) goCheck(lockPath string, k keySource, issuer string) record {
	s.t.Helper()
	var dir []byte
	if k.dirPath != "" {
		var err error
		if dir, err = os.ReadFile(k.dirPath); err != nil {
			s.t.Fatal(err)
		}
	}
	recs := make(chan preflight.Record, 4)
	cfg := preflight.Config{LockPath: lockPath, Settings: preflight.Settings{KeyDirectory: dir},
		Issuer:   &preflight.Issuer{URL: issuer, PinnedKeys: k.pins, Timeout: 3 * time.Second},
		LogPath:  filepath.Join(s.t.TempDir(), "records.jsonl"),
		OnRecord: func(r preflight.Record) { recs <- r }, Timeout: 15 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sess, err := preflight.Open(ctx, &mcp.Implementation{Name: "hosts-test", Version: "0"}, nil,
		&mcp.StreamableClientTransport{Endpoint: s.mcp, MaxRetries: -1}, nil, cfg)
	if err != nil {
		s.t.Fatalf("preflight.Open: %v", err)
	}
	defer sess.Close()
	var r record
	json.Unmarshal((<-recs).Raw, &r)
	return r
}

type host struct {
	name  string
	check func(s *stack, lockPath string, k keySource, issuer string) record
}

var hosts = []host{{"cli", (*stack).cliCheck}, {"go", (*stack).goCheck}}

// TestHostsAgainstTheIssuer: the service path of each host, end to end.
func TestHostsAgainstTheIssuer(t *testing.T) {
	for _, h := range hosts {
		t.Run(h.name, func(t *testing.T) {
			s := newStack(t)
			lock := s.get("/api/v1/mcp/lock?url=" + s.mcp)
			lockPath, dirPath := s.files(lock)
			r := h.check(s, lockPath, keySource{dirPath: dirPath}, s.issuer)
			if r.Effect != "proceed" || r.trust() != "verified" || r.Issuer == nil || r.Issuer.PolicyResult != "proceed" || r.Issuer.EvidenceLevel != "C" {
				t.Fatalf("against the issuer: effect %s, baseline %s, observations %v, issuer %+v", r.Effect, r.trust(), r.names(), r.Issuer)
			}
			// The receipt the host relied on, from the service's store, replays.
			receipt := s.get("/api/v1/documents/" + r.Issuer.Receipt.SHA256)
			var rep struct{ Reproducible bool }
			json.Unmarshal(s.post("/api/v1/preflight/replay", map[string]any{"receipt": json.RawMessage(receipt)}), &rep)
			if !rep.Reproducible {
				t.Errorf("the receipt %s does not replay", r.Issuer.Receipt.SHA256)
			}
			// A signed decision the guard accepts.
			decision := s.post("/api/v1/preflight/decide", map[string]any{"lock": string(lock), "url": s.mcp})
			var g struct {
				PolicyResult string `json:"policy_result"`
			}
			dir, _ := os.ReadFile(dirPath)
			if err := corecall.Into("guard", map[string]any{"receipt": json.RawMessage(decision), "expected_subject": s.mcp,
				"expected_operation": "preflight.decide", "now": time.Now().UTC().Format(time.RFC3339), "key_directory": corecall.Text(dir),
				"lock": corecall.Text(lock)}, &g); err != nil || g.PolicyResult != "proceed" {
				t.Errorf("guard on a decision: %s %v", g.PolicyResult, err)
			}
			// The service down: the local comparison, service_unavailable.
			s.stopIss()
			down := h.check(s, lockPath, keySource{dirPath: dirPath}, s.issuer)
			if !contains(down.names(), "service_unavailable") || !contains(down.names(), "unchanged") || down.Effect != "pause" {
				t.Errorf("service down: effect %s, observations %v", down.Effect, down.names())
			}
			// Following the live directory, which cannot be fetched now: the
			// pin alone judges the baseline, and the record says why.
			var dirDoc struct{ Keys []preflight.PinnedKey }
			json.Unmarshal(dir, &dirDoc)
			pinned := h.check(s, lockPath, keySource{pins: dirDoc.Keys}, s.issuer)
			if pinned.trust() != "verified" || !contains(pinned.names(), "service_unavailable") || pinned.Effect != "pause" {
				t.Errorf("service down, pinned keys: baseline %s, effect %s, observations %v", pinned.trust(), pinned.Effect, pinned.names())
			}
		})
	}
}

// TestRotationThroughTheHosts: each host following the live directory
// itself (the keys the operator pinned, and the directory the host fetches
// from the issuer at each check; no copy handed to it) sees verified,
// verified during the overlap, and, once the key is retired, the retired
// key for the lockfile as first signed and verified for the one resigned
// during the overlap; resigning it after retire is refused (F10: a retired
// key vouches for nothing, resign included). The operator pins the new key when it is made, as it
// would learn of it out of band (keys directory on the issuer's machine).
func TestRotationThroughTheHosts(t *testing.T) {
	for _, h := range hosts {
		t.Run(h.name, func(t *testing.T) {
			s := newStack(t)
			lock := s.get("/api/v1/mcp/lock?url=" + s.mcp)
			var pins []preflight.PinnedKey
			pinAll := func() {
				var dir struct{ Keys []preflight.PinnedKey }
				if err := json.Unmarshal([]byte(s.run(bins.issuer, "keys", "directory", "--dir", s.keys)), &dir); err != nil || len(dir.Keys) == 0 {
					t.Fatalf("keys directory: %v", err)
				}
				pins = dir.Keys
			}
			// step checks once, the host fetching the directory the issuer
			// serves now: the baseline's trust, and the observation that
			// judged it.
			step := func(name string, lock []byte, want, wantObs string) {
				t.Helper()
				lockPath := filepath.Join(t.TempDir(), "crawlcheck.lock.json")
				os.WriteFile(lockPath, lock, 0o644)
				r := h.check(s, lockPath, keySource{pins: pins}, s.issuer)
				if r.trust() != want || !contains(r.names(), wantObs) || (wantObs != "baseline_untrusted" && contains(r.names(), "baseline_untrusted")) || contains(r.names(), "service_unavailable") {
					t.Fatalf("%s: baseline %s, observations %v; want %s and %s (effect %s)", name, r.trust(), r.names(), want, wantObs, r.Effect)
				}
			}
			pinAll()
			first := pins[0].KID
			step("before", lock, "verified", "unchanged")
			s.run(bins.issuer, "keys", "rotate", "--dir", s.keys, "--overlap", "1h")
			pinAll()
			time.Sleep(1100 * time.Millisecond) // the new key's not_before is to the second
			step("overlap", lock, "verified", "unchanged")
			resigned := s.post("/api/v1/mcp/lock/resign", map[string]any{"lock": string(lock)})
			step("resigned during the overlap", resigned, "verified", "unchanged")
			s.run(bins.issuer, "keys", "retire", "--dir", s.keys, "--kid", first)
			step("retired", lock, "untrusted/retired_key", "key_retired")
			step("resigned, after retire", resigned, "verified", "unchanged")
			resp, err := http.Post(s.issuer+"/api/v1/mcp/lock/resign", "application/json", bytes.NewReader(mustMarshal(map[string]any{"lock": string(lock)})))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnprocessableEntity {
				t.Errorf("a lockfile of the retired key resigned after retire: %d, want 422", resp.StatusCode)
			}
		})
	}
}

// TestCorrectionsThroughRotation: a correction published before a rotation
// still applies after the key that signed it is retired, through the
// issuer's re-signing of it (issue 20): crawlcheck corrections, which judges
// each correction against the directory the issuer serves now, finds it
// verified before, during the overlap and after retire, the last time as
// the re-signing naming its first signing; a later version supersedes the
// first signing by its digest, which never changed.
func TestCorrectionsThroughRotation(t *testing.T) {
	s := newStack(t, "--resign-every", "100ms")
	lock := s.get("/api/v1/mcp/lock?url=" + s.mcp)
	lockPath, dirPath := s.files(lock)
	logPath := filepath.Join(t.TempDir(), "records.jsonl")
	out, err := exec.Command(bins.cli, "check", "--lock", lockPath, "--url", s.mcp, "--issuer", s.issuer, "--issuer-keys", dirPath,
		"--issuer-timeout", "3s", "--log", logPath).CombinedOutput()
	if err != nil {
		t.Fatalf("check: %v\n%s", err, out)
	}
	var rec record
	b, _ := os.ReadFile(logPath)
	json.Unmarshal(b, &rec)
	if rec.Issuer == nil || rec.Issuer.Receipt == nil {
		t.Fatalf("the record relied on no receipt: %s", b)
	}
	receipt := rec.Issuer.Receipt.SHA256
	correct := func(reason string) map[string]any {
		t.Helper()
		body, _ := json.Marshal(map[string]string{"target": receipt, "reason": reason, "reporter": "ops@example.com"})
		req, _ := http.NewRequest("POST", s.issuer+"/api/v1/corrections", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+s.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var c map[string]any
		if json.NewDecoder(resp.Body).Decode(&c); resp.StatusCode != http.StatusCreated {
			t.Fatalf("POST correction: %d %v", resp.StatusCode, c)
		}
		return c
	}
	type applied struct {
		Correction struct {
			Version     int     `json:"version"`
			SHA256      string  `json:"sha256"`
			KeyID       string  `json:"key_id"`
			Resigns     *string `json:"resigns"`
			Supersedes  *string `json:"supersedes"`
			Trust       string  `json:"trust"`
			TrustReason *string `json:"trust_reason"`
		} `json:"correction"`
	}
	corrections := func() []applied {
		t.Helper()
		out, err := exec.Command(bins.cli, "corrections", "--issuer", s.issuer, "--json", logPath).Output()
		if err != nil {
			t.Fatalf("corrections: %v\n%s", err, out)
		}
		var a struct{ Applies []applied }
		if err := json.Unmarshal(out, &a); err != nil {
			t.Fatalf("corrections --json: %v\n%s", err, out)
		}
		return a.Applies
	}
	// served waits until the issuer serves n signings of the receipt's
	// corrections (the re-signing pass runs every 100ms).
	served := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			var l struct{ Corrections []json.RawMessage }
			json.Unmarshal(s.get("/api/v1/corrections?target="+receipt), &l)
			if len(l.Corrections) == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the issuer serves %d signings of the corrections, want %d", len(l.Corrections), n)
			}
		}
	}
	var keys struct{ Keys []struct{ KID string } }
	json.Unmarshal([]byte(s.run(bins.issuer, "keys", "directory", "--dir", s.keys)), &keys)
	oldKey := keys.Keys[0].KID
	first := correct("The check read a mirror of the server.")
	firstSHA := first["sha256"].(string)
	if a := corrections(); len(a) != 1 || a[0].Correction.Trust != "verified" || a[0].Correction.SHA256 != firstSHA {
		t.Fatalf("before the rotation: %+v", a)
	}
	logged := logSize(s)
	s.run(bins.issuer, "keys", "rotate", "--dir", s.keys, "--overlap", "1h")
	time.Sleep(1100 * time.Millisecond) // the new key's not_before is to the second
	served(2)
	if n := logSize(s); n != logged+1 {
		t.Errorf("the log holds %d entries after the re-signing, want %d: a re-signing is an entry", n, logged+1)
	}
	a := corrections()
	if len(a) != 1 || a[0].Correction.Trust != "verified" || a[0].Correction.Resigns == nil || *a[0].Correction.Resigns != firstSHA || a[0].Correction.KeyID == oldKey {
		t.Fatalf("during the overlap: %+v", a)
	}
	s.run(bins.issuer, "keys", "retire", "--dir", s.keys, "--kid", oldKey)
	a = corrections()
	if len(a) != 1 || a[0].Correction.Trust != "verified" || a[0].Correction.Resigns == nil || *a[0].Correction.Resigns != firstSHA || a[0].Correction.Version != 1 {
		t.Fatalf("after retire: %+v (want the re-signing, verified)", a)
	}
	// The first signing is still served as published, and alone it no
	// longer verifies: it is the re-signing that applies.
	var l struct{ Corrections []map[string]any }
	json.Unmarshal(s.get("/api/v1/corrections?target="+receipt), &l)
	if l.Corrections[0]["sha256"] != firstSHA || l.Corrections[0]["key_id"] != oldKey {
		t.Fatalf("the first signing as served: %v", l.Corrections[0])
	}
	second := correct("It was the server after all.")
	if second["supersedes"] != firstSHA || second["version"] != float64(2) {
		t.Fatalf("version 2 supersedes %v (version %v), want the first signing %s", second["supersedes"], second["version"], firstSHA)
	}
	a = corrections()
	if len(a) != 2 || a[0].Correction.Trust != "verified" || a[1].Correction.Trust != "verified" || a[1].Correction.Version != 2 || *a[1].Correction.Supersedes != *a[0].Correction.Resigns {
		t.Fatalf("two versions after retire: %+v", a)
	}
	if n := logSize(s); n != logged+2 {
		t.Errorf("the log holds %d entries after the re-signing and version 2, want %d: each is an entry", n, logged+2)
	}
}

// logSize is the tree size of the log's checkpoint (its second line, C2SP
// tlog-checkpoint).
func logSize(s *stack) int {
	s.t.Helper()
	lines := strings.Split(string(s.get("/log/checkpoint")), "\n")
	var n int
	if len(lines) < 2 || func() error { _, err := fmt.Sscan(lines[1], &n); return err }() != nil {
		s.t.Fatalf("checkpoint: %q", lines)
	}
	return n
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
