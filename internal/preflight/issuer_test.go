package preflight_test

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/listening"
	"github.com/crawlcheck/verifier/internal/preflight"
)

// The service path tests run the real test issuer (hosttest/issuer, its
// clock stopped at testNow) next to the real scenario server, and change
// its knobs while it runs.

// Test issuer keys (testdata/keys): the active and the retired one.
var (
	activeKey  = preflight.PinnedKey{KID: "test-issuer-2026", PublicKey: "R2+nOTqJ24B+Bub9jH6p+WWS7P39GRzcQVzBDMKGvUQ="}
	retiredKey = preflight.PinnedKey{KID: "test-issuer-2025", PublicKey: "LGF8kOr4DTbH6K8S38o8mnNtd5vPqWWEBOkxiUtWIeg="}
)

// issuerTimeout bounds each consultation: the issuer runs on this machine.
const issuerTimeout = 3 * time.Second

type testIssuer struct{ url string }

// startIssuer runs the test issuer until the test ends.
func startIssuer(t *testing.T) *testIssuer {
	t.Helper()
	cmd := exec.Command(issuerBin, "--listen", "127.0.0.1:0", "--keys", repoPath("testdata", "keys"),
		"--now", testNow.Format(time.RFC3339))
	cmd.Stderr = os.Stderr
	url, stop, err := listening.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return &testIssuer{url: url}
}

// knobs sets the issuer's knobs (a JSON object; "{}" is an honest issuer).
func (i *testIssuer) knobs(t *testing.T, body string) {
	t.Helper()
	resp, err := http.Post(i.url+"/admin/knobs", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("knobs %s: %s", body, resp.Status)
	}
}

// testDirectory is the operator's copy of the test issuer's key directory.
func testDirectory(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(repoPath("testdata", "keys", "test-directory.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// serviceConfig is a session config that asks iss, trusting the operator's
// copy of its key directory.
func serviceConfig(t *testing.T, lockPath string, iss *testIssuer) preflight.Config {
	return preflight.Config{LockPath: lockPath, Settings: preflight.Settings{KeyDirectory: testDirectory(t)},
		Issuer: &preflight.Issuer{URL: iss.url, Timeout: issuerTimeout}}
}

// observations lists a record's observation names, in order.
func observations(rec preflight.Record) []string {
	var out []string
	for _, f := range rec.Observations {
		out = append(out, f.Observation)
	}
	return out
}

// finding returns the record's finding of an observation, or fails.
func finding(t *testing.T, rec preflight.Record, name string) preflight.Finding {
	t.Helper()
	for _, f := range rec.Observations {
		if f.Observation == name {
			return f
		}
	}
	t.Fatalf("the record has no %s: %v", name, observations(rec))
	return preflight.Finding{}
}

// failedReasons are the reasons listed in an evidence finding's detail.
func failedReasons(t *testing.T, f preflight.Finding) []string {
	t.Helper()
	var d struct {
		Failed []struct{ Reason string } `json:"failed"`
	}
	if err := json.Unmarshal(f.Detail, &d); err != nil {
		t.Fatalf("detail %s: %v", f.Detail, err)
	}
	var out []string
	for _, x := range d.Failed {
		out = append(out, x.Reason)
	}
	return out
}

func TestServiceAgreeing(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		s := start(t, kind, `{"tools":`+threeTools+`}`)
		lockPath := lockOf(t, s, preflight.LockOptions{})
		iss := startIssuer(t)
		sess, recs := open(t, s, serviceConfig(t, lockPath, iss))
		rec, cons := recs.next(t), sess.Consultation()
		if rec.Effect != preflight.EffectProceed || !slices.Equal(observations(rec), []string{"unchanged"}) {
			t.Fatalf("issuer agreeing: effect %s, observations %v; want proceed, unchanged", rec.Effect, observations(rec))
		}
		if !cons.Asked || cons.Unavailable != "" || cons.PolicyResult != "proceed" || cons.EvidenceLevel != "C" || len(cons.Evidence) != 0 {
			t.Fatalf("consultation %+v; want asked, proceed at level C, no evidence", cons)
		}

		// The rug pull: the issuer sees the change too. Its signed lock
		// check is a reading, not a refusal: no evidence is added, the local
		// comparison names the tool, and only that tool is withheld.
		s.mutate(t, t2RugPull)
		pulled := recs.next(t)
		if pulled.Effect != preflight.EffectPauseTool || !slices.Equal(observations(pulled), []string{"description_changed"}) {
			t.Fatalf("rug pull: effect %s, observations %v; want pause_tool with description_changed alone", pulled.Effect, observations(pulled))
		}
		var onRecord struct {
			Issuer struct {
				PolicyResult string `json:"policy_result"`
				Receipt      *struct {
					SHA256 string `json:"sha256"`
				} `json:"receipt"`
			} `json:"issuer"`
		}
		if err := json.Unmarshal(pulled.Raw, &onRecord); err != nil || onRecord.Issuer.PolicyResult != "pause" || onRecord.Issuer.Receipt == nil {
			t.Errorf("the record's issuer on the rug pull: %+v (%v); want the receipt and pause", onRecord.Issuer, err)
		}
		if err := call(sess, "t1"); err != nil {
			t.Errorf("t1 is unchanged and stays usable: %v", err)
		}
		refusal(t, call(sess, "t2"))

		// Re-approval: the check after Confirm asks the issuer again, about
		// the new baseline.
		confirmed, err := sess.Confirm("t2")
		if err != nil {
			t.Fatalf("Confirm: %v", err)
		}
		if confirmed.Effect != preflight.EffectProceed || sess.Consultation().PolicyResult != "proceed" {
			t.Errorf("after Confirm: effect %s, issuer %+v", confirmed.Effect, sess.Consultation())
		}
		if err := call(sess, "t2"); err != nil {
			t.Errorf("calling t2 after Confirm: %v", err)
		}
	})
}

// TestServiceUnavailable: an issuer that cannot be asked is
// service_unavailable, with the local comparison as the fallback. The
// default policy pauses on it; an operator who accepts the local comparison
// alone says service_unavailable: proceed, and the local comparison decides.
func TestServiceUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()
	fallback := []byte(`{"kind":"crawlcheck-policy","v":1,"version":"t-fallback","effects":{"service_unavailable":"proceed"}}`)

	// The fault is the host's, the words the core's.
	for _, c := range []struct{ name, knobs, fault, want string }{
		{"refused", "", "connect_refused", `"the issuer could not be reached (the connection was refused or could not be made)"`},
		{"503", `{"down":"503"}`, "http_status 503", `"the issuer answered HTTP 503, not 200"`},
		{"hang", `{"down":"hang"}`, "timeout", `"no answer within 250 ms"`},
		{"garbage", `{"down":"garbage"}`, "response_malformed", `"the answer is not a JSON object"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := start(t, "http", `{"tools":`+threeTools+`}`)
			lockPath := lockOf(t, s, preflight.LockOptions{})
			cfg := serviceConfig(t, lockPath, &testIssuer{url: refused})
			if c.knobs != "" {
				iss := startIssuer(t)
				iss.knobs(t, c.knobs)
				cfg.Issuer.URL = iss.url
			}
			cfg.Issuer.Timeout = 250 * time.Millisecond

			// Unchanged, default policy: the local comparison found nothing,
			// and the session pauses on the unreachable issuer.
			sess, _ := open(t, s, cfg)
			rec, cons := sess.Record(), sess.Consultation()
			if rec.Effect != preflight.EffectPause || !slices.Equal(observations(rec), []string{"unchanged", "service_unavailable"}) {
				t.Fatalf("effect %s, observations %v; want pause with unchanged and service_unavailable", rec.Effect, observations(rec))
			}
			f := finding(t, rec, "service_unavailable")
			if cons.Unavailable != "lock_check: "+strings.Trim(c.want, `"`) || !bytes.Contains(f.Detail, []byte(`"fallback":"local_comparison"`)) ||
				!bytes.Contains(f.Detail, []byte(`"error":`+c.want)) {
				t.Errorf("unavailable %q, detail %s; want %s, %s and the fallback named", cons.Unavailable, f.Detail, c.fault, c.want)
			}

			// The operator's fallback policy: unchanged proceeds, the record
			// still says the issuer was not heard.
			sess.Close()
			cfg.Settings.Policy = fallback
			sess, _ = open(t, s, cfg)
			if rec := sess.Record(); rec.Effect != preflight.EffectProceed || finding(t, rec, "service_unavailable").Effect != preflight.EffectProceed {
				t.Fatalf("fallback policy, unchanged: effect %s, %v", rec.Effect, observations(rec))
			}

			// A rug pull with the issuer down: the local comparison still
			// withholds the changed tool; with the default policy the whole
			// session is paused as well.
			sess.Close()
			s.mutate(t, t2RugPull)
			sess, _ = open(t, s, cfg)
			rec = sess.Record()
			if rec.Effect != preflight.EffectPauseTool || rec.Tools["t2"] != preflight.EffectPauseTool || rec.Tools["t1"] != preflight.EffectProceed {
				t.Fatalf("fallback policy, rug pull: effect %s, tools %v; want t2 alone withheld", rec.Effect, rec.Tools)
			}
			refusal(t, call(sess, "t2"))
			if err := call(sess, "t1"); err != nil {
				t.Errorf("fallback policy: calling t1: %v", err)
			}
			sess.Close()
			cfg.Settings.Policy = nil
			sess, _ = open(t, s, cfg)
			if rec := sess.Record(); rec.Effect != preflight.EffectPause || rec.Tools["t2"] != preflight.EffectPause || rec.Tools["t1"] != preflight.EffectPause {
				t.Errorf("default policy, rug pull: effect %s, tools %v; want every tool paused", rec.Effect, rec.Tools)
			}
		})
	}
}

// TestServiceRedirect: an issuer that redirects (to another host, here a
// listener that counts what reaches it) is service_unavailable, and nothing
// is sent to where it points: neither the key directory request nor the
// lock check's POST with the lockfile and the pages.
func TestServiceRedirect(t *testing.T) {
	var reached atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		http.Error(w, "not an issuer", http.StatusTeapot)
	}))
	defer elsewhere.Close()
	s := start(t, "http", `{"tools":`+threeTools+`}`)
	lockPath := lockOf(t, s, preflight.LockOptions{})
	iss := startIssuer(t)
	iss.knobs(t, `{"redirect":"`+elsewhere.URL+`"}`)
	for name, cfg := range map[string]preflight.Config{
		"lock check":    serviceConfig(t, lockPath, iss),
		"key directory": {LockPath: lockPath, Issuer: &preflight.Issuer{URL: iss.url, PinnedKeys: []preflight.PinnedKey{activeKey}, Timeout: issuerTimeout}},
	} {
		sess, _ := open(t, s, cfg)
		cons := sess.Consultation()
		sess.Close()
		if !strings.HasSuffix(cons.Unavailable, ": the issuer answered HTTP 307, a redirect, which is not followed") {
			t.Errorf("%s: unavailable %q; want the redirect's status", name, cons.Unavailable)
		}
		if f := finding(t, sess.Record(), "service_unavailable"); !bytes.Contains(f.Detail, []byte(`"error":"the issuer answered HTTP 307, a redirect, which is not followed"`)) {
			t.Errorf("%s: detail %s", name, f.Detail)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("%d request(s) followed the redirect to another host", n)
	}
}

// TestServiceLate: an expired receipt is evidence_expired, whose refresh
// asks the issuer once more; late again, the session pauses.
func TestServiceLate(t *testing.T) {
	s := start(t, "http", `{"tools":`+threeTools+`}`)
	lockPath := lockOf(t, s, preflight.LockOptions{})
	iss := startIssuer(t)
	iss.knobs(t, `{"late":true}`)
	_, recs := open(t, s, serviceConfig(t, lockPath, iss))
	first, second := recs.next(t), recs.next(t)
	if first.Effect != preflight.EffectRefresh || second.Effect != preflight.EffectPause || second.PrevRecordSHA256 != first.RecordSHA256 {
		t.Fatalf("records %s then %s; want refresh, then pause chained to it", first.Effect, second.Effect)
	}
	a, b := finding(t, first, "evidence_expired"), finding(t, second, "evidence_expired")
	if !slices.Equal(failedReasons(t, a), []string{"expired"}) {
		t.Errorf("reasons %v, want expired", failedReasons(t, a))
	}
	var da, db struct {
		Receipt string `json:"receipt_sha256"`
	}
	json.Unmarshal(a.Detail, &da)
	json.Unmarshal(b.Detail, &db)
	if da.Receipt == "" || da.Receipt == db.Receipt {
		t.Errorf("receipts %q and %q: the refresh must ask the issuer again", da.Receipt, db.Receipt)
	}
}

// TestServiceIntegrity: the issuer's answer fails a question of the
// integrity class, and the session is denied.
func TestServiceIntegrity(t *testing.T) {
	for _, c := range []struct{ name, knobs, observation, reason string }{
		{"retired key", `{"key":"retired"}`, "key_retired", "retired_key"},
		{"unknown key", `{"key":"unknown"}`, "key_unknown", "key_unknown"},
		{"other subject", `{"subject":"http://elsewhere.invalid/mcp"}`, "server_identity_mismatch", "other_subject"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := start(t, "http", `{"tools":`+threeTools+`}`)
			lockPath := lockOf(t, s, preflight.LockOptions{})
			iss := startIssuer(t)
			iss.knobs(t, c.knobs)
			sess, _ := open(t, s, serviceConfig(t, lockPath, iss))
			rec := sess.Record()
			if rec.Effect != preflight.EffectDeny || !slices.Equal(observations(rec), []string{"unchanged", c.observation}) {
				t.Fatalf("effect %s, observations %v; want deny with %s", rec.Effect, observations(rec), c.observation)
			}
			if r := failedReasons(t, finding(t, rec, c.observation)); !slices.Contains(r, c.reason) {
				t.Errorf("reasons %v, want %s", r, c.reason)
			}
			if sess.Consultation().PolicyResult != "deny" {
				t.Errorf("guard's result %s, want deny", sess.Consultation().PolicyResult)
			}
		})
	}
}

// TestServiceReplay: a receipt whose nonce was seen is evidence_expired;
// the refresh gets the same nonce again, and the session pauses. The replay
// state is kept next to the log, so a later session sees the replay too.
func TestServiceReplay(t *testing.T) {
	s := start(t, "http", `{"tools":`+threeTools+`}`)
	lockPath := lockOf(t, s, preflight.LockOptions{})
	iss := startIssuer(t)
	iss.knobs(t, `{"reuse_nonce":true}`)
	cfg := serviceConfig(t, lockPath, iss)
	cfg.LogPath = filepath.Join(t.TempDir(), "records.jsonl")

	first, _ := open(t, s, cfg)
	if rec := first.Record(); rec.Effect != preflight.EffectProceed {
		t.Fatalf("the first receipt with the nonce: effect %s, %v", rec.Effect, observations(rec))
	}
	first.Close()
	if _, err := os.Stat(preflight.NonceStatePath(cfg.LogPath)); err != nil {
		t.Fatalf("no replay state next to the log: %v", err)
	}

	second, recs := open(t, s, cfg)
	a, b := recs.next(t), recs.next(t)
	if a.Effect != preflight.EffectRefresh || b.Effect != preflight.EffectPause || second.Record().RecordSHA256 != b.RecordSHA256 {
		t.Fatalf("replayed: records %s then %s; want refresh, then pause", a.Effect, b.Effect)
	}
	if r := failedReasons(t, finding(t, b, "evidence_expired")); !slices.Equal(r, []string{"nonce_seen"}) {
		t.Errorf("reasons %v, want nonce_seen", r)
	}

	// A session with its own log has no such state: the same receipt is new
	// to it. (What made the difference above is the state file.)
	cfg.LogPath = filepath.Join(t.TempDir(), "records.jsonl")
	if fresh, _ := open(t, s, cfg); fresh.Record().Effect != preflight.EffectProceed {
		t.Errorf("a fresh replay state: effect %s", fresh.Record().Effect)
	}
}

// TestServicePinnedKeys: without the operator's copy of the key directory,
// the issuer's own is fetched and used only for the keys pinned.
func TestServicePinnedKeys(t *testing.T) {
	s := start(t, "http", `{"tools":`+threeTools+`}`)
	lockPath := lockOf(t, s, preflight.LockOptions{})
	iss := startIssuer(t)
	for _, c := range []struct {
		name   string
		pins   []preflight.PinnedKey
		knobs  string
		effect string
		obs    string
	}{
		{"active key pinned", []preflight.PinnedKey{activeKey}, `{}`, preflight.EffectProceed, ""},
		// The issuer's directory lists its active key, but the deployment
		// pinned another: the issuer cannot vouch for itself.
		{"active key not pinned", []preflight.PinnedKey{retiredKey}, `{}`, preflight.EffectDeny, "key_unknown"},
		// A pinned key the issuer's directory retired is retired.
		{"retired key pinned", []preflight.PinnedKey{activeKey, retiredKey}, `{"key":"retired"}`, preflight.EffectDeny, "key_retired"},
	} {
		t.Run(c.name, func(t *testing.T) {
			iss.knobs(t, c.knobs)
			sess, _ := open(t, s, preflight.Config{LockPath: lockPath,
				Issuer: &preflight.Issuer{URL: iss.url, PinnedKeys: c.pins, Timeout: issuerTimeout}})
			rec := sess.Record()
			if rec.Effect != c.effect {
				t.Fatalf("effect %s, observations %v; want %s", rec.Effect, observations(rec), c.effect)
			}
			if c.obs != "" {
				finding(t, rec, c.obs)
			}
		})
	}
}

// TestServiceFetchedDirectoryRefused: a key directory fetched from the
// issuer that the core cannot read, or that is not JSON at all, is the
// issuer's fault, not the deployment's: service_unavailable at the step
// key_directory, with the core's words, and the local comparison stands,
// the pins alone judging the baseline. Whether guard reads it first (the
// lock check answered) or the continuity check does (the lock check failed
// after the fetch), the record is the same: the host judges neither.
func TestServiceFetchedDirectoryRefused(t *testing.T) {
	s := start(t, "http", `{"tools":`+threeTools+`}`)
	lockPath := lockOf(t, s, preflight.LockOptions{})
	directories := map[string]struct{ body, fault, want string }{
		"unreadable": {`{"kind":"crawlcheck-key-directory","v":1,"keys":"all of them"}`, "keys_invalid", "the key directory it served is not one the core can read"},
		"not JSON":   {`<html>busy</html>`, "response_malformed", "the answer is not a JSON object"},
	}
	for dname, dir := range directories {
		for name, lockCheck := range map[string]int{"guard reads it": http.StatusOK, "the check reads it": http.StatusServiceUnavailable} {
			t.Run(dname+", "+name, func(t *testing.T) {
				issuer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/api/v1/keys" {
						w.Write([]byte(dir.body))
						return
					}
					w.WriteHeader(lockCheck)
					w.Write([]byte(`{}`))
				}))
				t.Cleanup(issuer.Close)
				sess, _ := open(t, s, preflight.Config{LockPath: lockPath,
					Issuer: &preflight.Issuer{URL: issuer.URL, PinnedKeys: []preflight.PinnedKey{activeKey}, Timeout: issuerTimeout}})
				rec := sess.Record()
				f := finding(t, rec, "service_unavailable")
				var d map[string]string
				json.Unmarshal(f.Detail, &d)
				if rec.Effect != preflight.EffectPause || d["step"] != "key_directory" || d["error"] != dir.want || d["fallback"] != "local_comparison" {
					t.Errorf("effect %s, detail %s; want pause, the step key_directory and %q", rec.Effect, f.Detail, dir.want)
				}
				if got := sess.Consultation().Unavailable; got != "key_directory: "+dir.want {
					t.Errorf("Unavailable %q", got)
				}
			})
		}
	}
}

// TestIssuerConfig: a configuration with nothing to trust answers by, or a
// replay state that cannot be read, is refused before anything is asked.
func TestIssuerConfig(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	os.WriteFile(state, []byte("not json"), 0o600)
	for name, f := range map[string]func() error{
		"no keys": func() error {
			_, err := preflight.NewIssuerClient(preflight.Issuer{URL: "https://issuer.invalid"}, nil, "")
			return err
		},
		"not a URL": func() error {
			_, err := preflight.NewIssuerClient(preflight.Issuer{URL: "issuer.invalid"}, []byte(`{}`), "")
			return err
		},
		"empty pin": func() error {
			_, err := preflight.NewIssuerClient(preflight.Issuer{URL: "https://issuer.invalid", PinnedKeys: []preflight.PinnedKey{{KID: "k"}}}, nil, "")
			return err
		},
		"pin not base64": func() error {
			_, err := preflight.NewIssuerClient(preflight.Issuer{URL: "https://issuer.invalid", PinnedKeys: []preflight.PinnedKey{{KID: "k", PublicKey: "not-a-key"}}}, nil, "")
			return err
		},
		"pin respelt": func() error {
			pub := activeKey.PublicKey[:42] + "R="
			_, err := preflight.NewIssuerClient(preflight.Issuer{URL: "https://issuer.invalid", PinnedKeys: []preflight.PinnedKey{{KID: "k", PublicKey: pub}}}, nil, "")
			return err
		},
		"broken state": func() error {
			_, err := preflight.NewIssuerClient(preflight.Issuer{URL: "https://issuer.invalid"}, []byte(`{}`), state)
			return err
		},
	} {
		if f() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestPinsBesideTheOperatorsDirectory: a host hands its pinned keys as
// configured, and beside the operator's own copy of the key directory the
// core lets them judge no baseline (continuity_check's pinned_keys): the
// record is byte for byte the one without pins. A copy that lacks the key
// the lockfile is signed with leaves it untrusted, a pin of that key
// notwithstanding.
func TestPinsBesideTheOperatorsDirectory(t *testing.T) {
	s := start(t, "http", `{"tools":`+threeTools+`}`)
	lockPath := signedLock(t, startIssuer(t), s, filepath.Join(t.TempDir(), "crawlcheck.lock"))
	var dir map[string]any
	if err := json.Unmarshal(testDirectory(t), &dir); err != nil {
		t.Fatal(err)
	}
	var others []any
	for _, k := range dir["keys"].([]any) {
		if k.(map[string]any)["kid"] != activeKey.KID {
			others = append(others, k)
		}
	}
	dir["keys"] = others
	withoutActive, _ := json.Marshal(dir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()
	var raws [][]byte
	for _, pins := range [][]preflight.PinnedKey{nil, {activeKey}} {
		sess, _ := open(t, s, preflight.Config{LockPath: lockPath, Now: func() time.Time { return testNow },
			Settings: preflight.Settings{KeyDirectory: withoutActive},
			Issuer:   &preflight.Issuer{URL: refused, PinnedKeys: pins, Timeout: issuerTimeout}})
		rec := sess.Record()
		sess.Close()
		if !slices.Contains(observations(rec), "baseline_untrusted") {
			t.Errorf("pins %v: observations %v; want baseline_untrusted", pins, observations(rec))
		}
		raws = append(raws, rec.Raw)
	}
	if !bytes.Equal(raws[0], raws[1]) {
		t.Errorf("the record with pins differs from the one without:\n%s\n%s", raws[0], raws[1])
	}
}
