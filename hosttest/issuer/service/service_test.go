package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/hosttest/issuer/service"
	"github.com/crawlcheck/verifier/hosttest/mcpserver/scenario"
)

type obj = map[string]any

var clock = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

const tools = `[{"name":"get_issue","description":"Get one issue by its number.","inputSchema":{"type":"object"}},
	{"name":"list_issues","description":"List the open issues.","inputSchema":{"type":"object"}}]`

// env is an issuer and a scenario MCP server, both in process.
type env struct {
	t      *testing.T
	issuer *service.Issuer
	api    string // the issuer's base URL
	mcp    string // the MCP endpoint
	lock   json.RawMessage
}

func newEnv(t *testing.T, scenarioDoc string) *env {
	t.Helper()
	keys, dir, err := service.LoadTestKeys("../../../testdata/keys")
	if err != nil {
		t.Fatal(err)
	}
	iss, err := service.New(service.Config{Keys: keys, Directory: dir, Now: func() time.Time { return clock },
		ReadLimit: 2 * time.Second, Logger: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(iss.Close)
	api := httptest.NewServer(iss.Handler())
	t.Cleanup(api.Close)
	file, err := scenario.Parse([]byte(scenarioDoc))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", scenario.New(file, log.New(io.Discard, "", 0)).Handler())
	mux.Handle("/old/mcp", http.RedirectHandler("/mcp", http.StatusPermanentRedirect))
	mcp := httptest.NewServer(mux)
	t.Cleanup(mcp.Close)
	e := &env{t: t, issuer: iss, api: api.URL, mcp: mcp.URL + "/mcp"}
	var made struct{ Lock string }
	json.Unmarshal(e.core("make_lock", obj{"tools": json.RawMessage(tools), "approved_at": "2026-10-07T10:45:00Z",
		"server": obj{"url": e.mcp}}), &made)
	e.lock = json.RawMessage(made.Lock)
	return e
}

func (e *env) core(op string, req any) json.RawMessage {
	e.t.Helper()
	b, _ := json.Marshal(req)
	var out struct {
		OK     bool
		Result json.RawMessage
	}
	resp := core.Call(op, b)
	if json.Unmarshal(resp, &out); !out.OK {
		e.t.Fatalf("%s: %s", op, resp)
	}
	return out.Result
}

// post sends a JSON body and returns the status and body.
func (e *env) post(path string, body any) (int, []byte) {
	e.t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(e.api+path, "application/json", bytes.NewReader(b))
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func (e *env) get(path string) []byte {
	e.t.Helper()
	resp, err := http.Get(e.api + path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, out)
	}
	return out
}

func (e *env) receipt(path string, body any) json.RawMessage {
	e.t.Helper()
	status, out := e.post(path, body)
	if status != http.StatusOK {
		e.t.Fatalf("POST %s: %d %s", path, status, out)
	}
	return out
}

type answer struct {
	PolicyResult string             `json:"policy_result"`
	Level        string             `json:"evidence_level"`
	Reasons      map[string]*string `json:"reasons"`
	SeenNonces   []any              `json:"seen_nonces"`
	Receipt      struct {
		Subject, Decision string
	} `json:"receipt"`
}

// failing lists the answers that fail, with their reasons.
func (a answer) failing() map[string]string {
	out := map[string]string{}
	for q, r := range a.Reasons {
		if r != nil {
			out[q] = *r
		}
	}
	return out
}

// guard judges a receipt as a host connected to the scenario server would,
// with the issuer's own key directory.
func (e *env) guard(receipt json.RawMessage, operation string, seen []any) answer {
	e.t.Helper()
	var a answer
	json.Unmarshal(e.core("guard", obj{"receipt": receipt, "expected_subject": e.mcp, "expected_operation": operation,
		"now": clock.Add(time.Minute).Format(time.RFC3339), "key_directory": json.RawMessage(e.get("/api/v1/keys")),
		"lock": e.lock, "seen_nonces": seen, "observed_tools_sha256": e.toolsSHA()}), &a)
	return a
}

func (e *env) toolsSHA() string {
	var h struct {
		ToolsSHA256 string `json:"tools_sha256"`
	}
	json.Unmarshal(e.core("hash_tools", obj{"tools": json.RawMessage(tools)}), &h)
	return h.ToolsSHA256
}

func (e *env) knobs(k service.Knobs) {
	e.t.Helper()
	if status, out := e.post("/admin/knobs", k); status != http.StatusOK {
		e.t.Fatalf("knobs: %d %s", status, out)
	}
}

func sameFailures(got, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// TestHonestIssuer: the issuer reads the server itself (plain JSON and
// event-stream answers, one page or several), and its receipt passes every
// check at evidence level C; the same holds for tools a host sends, for a
// decision receipt, and for the replay of both.
func TestHonestIssuer(t *testing.T) {
	for _, doc := range []string{
		`{"tools":` + tools + `}`,
		`{"tools":` + tools + `,"http_sse":true,"page_size":1}`,
	} {
		e := newEnv(t, doc)
		r := e.receipt("/api/v1/mcp/lock/check", obj{"lock": e.lock, "url": e.mcp})
		if a := e.guard(r, "mcp.lock.check", nil); a.PolicyResult != "proceed" || a.Level != "C" || len(a.SeenNonces) != 1 {
			t.Errorf("%s: url check: %+v", doc, a)
		}
		r = e.receipt("/api/v1/mcp/lock/check", obj{"lock": e.lock, "tools": json.RawMessage(tools)})
		if a := e.guard(r, "mcp.lock.check", nil); a.PolicyResult != "proceed" || a.Receipt.Subject != e.mcp {
			t.Errorf("%s: tools check: %+v", doc, a)
		}
		d := e.receipt("/api/v1/preflight/decide", obj{"lock": e.lock, "url": e.mcp})
		if a := e.guard(d, "preflight.decide", nil); a.PolicyResult != "proceed" || a.Level != "C" {
			t.Errorf("%s: decision: %+v", doc, a)
		}
		for _, rc := range []json.RawMessage{r, d} {
			var rep struct{ Reproducible bool }
			json.Unmarshal(e.receipt("/api/v1/preflight/replay", obj{"receipt": rc, "lock": e.lock}), &rep)
			if !rep.Reproducible {
				t.Errorf("%s: replay of %s is not reproducible", doc, rc)
			}
		}
	}
}

// TestRulesNameTheReceipts: the rule tables served hash to the
// engine.rules_sha256 every receipt names.
func TestRulesNameTheReceipts(t *testing.T) {
	e := newEnv(t, `{"tools":`+tools+`}`)
	var rules struct {
		RulesSHA256 string `json:"rules_sha256"`
	}
	json.Unmarshal(e.get("/api/v1/preflight/rules"), &rules)
	var r struct {
		Engine struct {
			RulesSHA256 string `json:"rules_sha256"`
		}
	}
	json.Unmarshal(e.receipt("/api/v1/mcp/lock/check", obj{"lock": e.lock, "url": e.mcp}), &r)
	if rules.RulesSHA256 == "" || rules.RulesSHA256 != r.Engine.RulesSHA256 {
		t.Errorf("rules_sha256 %q, receipt names %q", rules.RulesSHA256, r.Engine.RulesSHA256)
	}
}

// TestKnobs: each knob gives the receipt the guard must refuse, and the
// guard says exactly why.
func TestKnobs(t *testing.T) {
	for _, c := range []struct {
		knobs  service.Knobs
		fails  map[string]string
		result string
	}{
		{service.Knobs{Late: true}, map[string]string{"freshness_valid": "expired"}, "pause"},
		{service.Knobs{Key: "retired"}, map[string]string{"key_policy_valid": "retired_key"}, "deny"},
		{service.Knobs{Key: "unknown"}, map[string]string{"integrity_valid": "key_unknown", "issuer_trusted": "key_unknown", "key_policy_valid": "key_unknown"}, "deny"},
		{service.Knobs{Subject: "https://mcp.example.net/mcp"}, map[string]string{"subject_matches": "other_subject"}, "deny"},
	} {
		e := newEnv(t, `{"tools":`+tools+`}`)
		e.knobs(c.knobs)
		a := e.guard(e.receipt("/api/v1/mcp/lock/check", obj{"lock": e.lock, "url": e.mcp}), "mcp.lock.check", nil)
		if !sameFailures(a.failing(), c.fails) || a.PolicyResult != c.result {
			t.Errorf("%+v: failing %v result %s, want %v %s", c.knobs, a.failing(), a.PolicyResult, c.fails, c.result)
		}
	}
}

// TestReusedNonce: with the knob, the second receipt replays the first's
// nonce, which the host's replay state (the first answer's seen_nonces)
// catches; without it, nonces differ.
func TestReusedNonce(t *testing.T) {
	for _, reuse := range []bool{false, true} {
		e := newEnv(t, `{"tools":`+tools+`}`)
		e.knobs(service.Knobs{ReuseNonce: reuse})
		first := e.guard(e.receipt("/api/v1/mcp/lock/check", obj{"lock": e.lock, "url": e.mcp}), "mcp.lock.check", nil)
		second := e.guard(e.receipt("/api/v1/mcp/lock/check", obj{"lock": e.lock, "url": e.mcp}), "mcp.lock.check", first.SeenNonces)
		want := map[string]string{}
		if reuse {
			want["replay_safe"] = "nonce_seen"
		}
		if first.PolicyResult != "proceed" || !sameFailures(second.failing(), want) {
			t.Errorf("reuse %v: first %s, second failing %v", reuse, first.PolicyResult, second.failing())
		}
	}
}

// TestRedirect: an issuer that follows a redirect names the endpoint that
// answered, and a host that asked about the old one refuses the receipt.
func TestRedirect(t *testing.T) {
	e := newEnv(t, `{"tools":`+tools+`}`)
	old := strings.Replace(e.mcp, "/mcp", "/old/mcp", 1)
	r := e.receipt("/api/v1/mcp/lock/check", obj{"lock": e.lock, "url": old})
	var a answer
	json.Unmarshal(e.core("guard", obj{"receipt": r, "expected_subject": old, "expected_operation": "mcp.lock.check",
		"now": clock.Format(time.RFC3339), "key_directory": json.RawMessage(e.get("/api/v1/keys")), "lock": e.lock}), &a)
	if a.Receipt.Subject != e.mcp || !sameFailures(a.failing(), map[string]string{"subject_matches": "other_subject"}) {
		t.Errorf("subject %s, failing %v", a.Receipt.Subject, a.failing())
	}
}

// TestServerUnreachable: an issuer that cannot read the server signs an
// unreachable, blocking answer, which is an incomplete assessment.
func TestServerUnreachable(t *testing.T) {
	e := newEnv(t, `{"tools":`+tools+`,"hang_handshake":true}`)
	a := e.guard(e.receipt("/api/v1/mcp/lock/check", obj{"lock": e.lock, "url": e.mcp}), "mcp.lock.check", nil)
	if a.Receipt.Decision != "block" || !sameFailures(a.failing(), map[string]string{"assessment_complete": "incomplete"}) || a.PolicyResult != "deny" {
		t.Errorf("decision %s failing %v result %s", a.Receipt.Decision, a.failing(), a.PolicyResult)
	}
}

// TestDown: 503, no answer until the client gives up, or 200 with a body
// that is not JSON.
func TestDown(t *testing.T) {
	e := newEnv(t, `{"tools":`+tools+`}`)
	e.knobs(service.Knobs{Down: "503"})
	// As a broken issuer or a proxy in front answers: not the service's
	// problem document, which the real service gives every error.
	if status, out := e.post("/api/v1/mcp/lock/check", obj{"lock": e.lock, "url": e.mcp}); status != http.StatusServiceUnavailable || json.Valid(out) {
		t.Errorf("down 503: status %d %s", status, out)
	}
	e.knobs(service.Knobs{Down: "hang"})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.api+"/api/v1/keys", nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("down hang: answered %d", resp.StatusCode)
	}
	e.knobs(service.Knobs{Down: "garbage"})
	if out := e.get("/api/v1/keys"); json.Valid(out) {
		t.Errorf("down garbage: answered JSON %s", out)
	}
	e.knobs(service.Knobs{})
	e.get("/api/v1/keys")
}

// TestRefusals: what the core refuses is a 400 with its error; knobs are
// checked.
func TestRefusals(t *testing.T) {
	e := newEnv(t, `{"tools":`+tools+`}`)
	for _, c := range []struct {
		path string
		body any
		code string
	}{
		{"/api/v1/mcp/lock/check", obj{"lock": e.lock}, "bad_request"},
		{"/api/v1/mcp/lock/check", obj{"lock": obj{"kind": "x"}, "tools": json.RawMessage(tools), "subject": e.mcp}, "lock_unsupported"},
		{"/api/v1/preflight/replay", obj{"receipt": "<html>"}, "json_syntax"},
		{"/api/v1/mcp/lock/check", "not an object", "bad_request"},
	} {
		status, out := e.post(c.path, c.body)
		var body struct{ Code string }
		json.Unmarshal(out, &body)
		if status != http.StatusBadRequest || body.Code != c.code {
			t.Errorf("POST %s %v: %d %s, want 400 %s", c.path, c.body, status, out, c.code)
		}
	}
	if status, _ := e.post("/admin/knobs", obj{"key": "stolen"}); status != http.StatusBadRequest {
		t.Errorf("a bad knob: status %d", status)
	}
	if status, _ := e.post("/admin/knobs", obj{"lat": true}); status != http.StatusBadRequest {
		t.Errorf("a misspelt knob: status %d", status)
	}
}
