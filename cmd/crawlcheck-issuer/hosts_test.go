package main

import (
	"bytes"
	"context"
	"encoding/json"
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
}

const threeTools = `[{"name":"t1","description":"First tool.","inputSchema":{"type":"object"}},
	{"name":"t2","description":"Second tool.","inputSchema":{"type":"object"}},
	{"name":"t3","description":"Third tool.","inputSchema":{"type":"object"}}]`

func newStack(t *testing.T) *stack {
	buildAll(t)
	s := &stack{t: t, keys: filepath.Join(t.TempDir(), "keys")}
	s.run(bins.issuer, "keys", "init", "--dir", s.keys, "--issuer", "issuer.test")
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
	cmd = exec.Command(bins.issuer, "serve", "--dir", s.keys, "--listen", "127.0.0.1:0", "--allow-http", "--allow-private", "127.0.0.1/32")
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

func (s *stack) get(path string) []byte {
	s.t.Helper()
	resp, err := http.Get(s.issuer + path)
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

func (s *stack) post(path string, body any) []byte {
	s.t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(s.issuer+path, "application/json", bytes.NewReader(b))
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
// verified during the overlap, the retired key after retire, and verified
// again after resign. The operator pins the new key when it is made, as it
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
			s.run(bins.issuer, "keys", "retire", "--dir", s.keys, "--kid", first)
			step("retired", lock, "untrusted/retired_key", "key_retired")
			step("resigned", s.post("/api/v1/mcp/lock/resign", map[string]any{"lock": string(lock)}), "verified", "unchanged")
		})
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
