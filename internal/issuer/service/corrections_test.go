package service_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/service"
)

// operatorToken is the operator's credential in these tests; the service
// is given its SHA-256 only.
const operatorToken = "cco_test-operator-token"

func operatorConfig() service.Config {
	h := sha256.Sum256([]byte(operatorToken))
	return service.Config{OperatorTokenSHA256: hex.EncodeToString(h[:])}
}

func TestCorrectionsSQLite(t *testing.T) {
	testCorrections(t, newEnv(t, allowLoopback(), operatorConfig()))
}

// TestCorrectionsOperatorOnly: a correction without the operator token, or
// with another, is refused 401 before anything is read or signed, and an
// issuer started without an operator token takes none.
func TestCorrectionsOperatorOnly(t *testing.T) {
	body, _ := json.Marshal(obj{"target": strings.Repeat("ab", 32), "reason": "r", "reporter": "x"})
	for _, c := range []struct {
		name, auth string
		cfg        service.Config
	}{
		{"no token", "", operatorConfig()},
		{"another token", "Bearer cco_someone-else", operatorConfig()},
		{"not bearer", "Basic " + operatorToken, operatorConfig()},
		{"no operator", "Bearer " + operatorToken, service.Config{}},
	} {
		e := newEnv(t, allowLoopback(), c.cfg)
		req, _ := http.NewRequest("POST", e.api+"/api/v1/corrections", bytes.NewReader(body))
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		e.spec.validate(t, "POST", "/api/v1/corrections", resp, out)
		var pr struct{ Code, Type string }
		json.Unmarshal(out, &pr)
		if resp.StatusCode != http.StatusUnauthorized || pr.Code != "unauthorized" || pr.Type != "urn:crawlcheck:problem:unauthorized" ||
			!strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") || resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %d %s %v, want 401 unauthorized", c.name, resp.StatusCode, out, resp.Header)
		}
	}
}

func TestCorrectionsPostgres(t *testing.T) {
	st := pgStore(t, "corrections")
	cfg := operatorConfig()
	cfg.Store = st
	testCorrections(t, newEnv(t, allowLoopback(), cfg))
}

// correct posts a correction and answers the status, the body and the
// tlog-proof its answer carried.
func (e *env) correct(body any) (int, []byte, string) {
	e.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", e.api+"/api/v1/corrections", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+operatorToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	e.spec.validate(e.t, "POST", "/api/v1/corrections", resp, out)
	proof, _ := base64.StdEncoding.DecodeString(resp.Header.Get(service.LogProofHeader))
	return resp.StatusCode, out, string(proof)
}

// testCorrections: a record a pilot uploaded and a receipt the service
// signed are corrected by signed, versioned corrections, each in the log
// with a proof the core verifies, the second superseding the first and
// naming the rule table that applies now; the originals are unchanged; GET
// lists them by target and version, and corrections_apply pairs them with
// the record log's records, their signatures verified.
func testCorrections(t *testing.T, e *env) {
	ctx := context.Background()
	var p struct {
		ID    string `json:"pilot_id"`
		Token string `json:"token"`
	}
	if status, out := e.do("POST", "/api/v1/pilot", "/api/v1/pilot", nil); status != http.StatusCreated {
		t.Fatalf("POST /api/v1/pilot: %d %s", status, out)
	} else {
		json.Unmarshal(out, &p)
	}
	recs, sums := records(t, 2)
	if u := e.upload(p.ID, p.Token, lines(recs...)); u.answer.Accepted != 2 {
		t.Fatalf("upload: %d %s", u.status, u.body)
	}
	receipt := e.ok("POST", "/api/v1/mcp/lock/check", "/api/v1/mcp/lock/check", obj{"lock": string(e.ok("POST", "/api/v1/mcp/lock", "/api/v1/mcp/lock",
		obj{"tools": json.RawMessage(tools), "server": obj{"url": "https://mcp.example.com/mcp"}})), "tools": json.RawMessage(tools)})
	var rc struct{ SHA256 string }
	json.Unmarshal(receipt, &rc)
	var rules struct {
		RulesSHA256 string `json:"rules_sha256"`
	}
	json.Unmarshal(e.ok("GET", "/api/v1/preflight/rules", "/api/v1/preflight/rules", nil), &rules)
	dir := json.RawMessage(e.ok("GET", "/api/v1/keys", "/api/v1/keys", nil))

	type correction struct {
		SHA256, Target, Supersedes, Reason string
		Version                            int
		RulesSHA256                        *string `json:"rules_sha256"`
		PolicyVersion                      *string `json:"policy_version"`
	}
	post := func(body obj) correction {
		t.Helper()
		status, out, proof := e.correct(body)
		if status != http.StatusCreated {
			t.Fatalf("POST corrections %v: %d %s", body, status, out)
		}
		var v verdict
		json.Unmarshal(coreOp(t, "log_verify", obj{"document": string(out), "proof": proof, "now": e.now.Format(time.RFC3339), "key_directory": dir}), &v)
		if !v.Valid {
			t.Fatalf("the correction's proof does not verify: %s", out)
		}
		var c correction
		json.Unmarshal(out, &c)
		return c
	}
	first := post(obj{"target": sums[1], "reason": "The check read a mirror, not the server.", "reporter": "ops@example.com"})
	second := post(obj{"target": sums[1], "reason": "Rule reference.every_other_item was too broad\u202e.", "reporter": "ops@example.com",
		"rules_sha256": rules.RulesSHA256, "policy_version": "crawlcheck-default-2"})
	onReceipt := post(obj{"target": rc.SHA256, "reason": "Signed with a clock an hour fast.", "reporter": "issuer"})
	if first.Version != 1 || second.Version != 2 || second.Supersedes != first.SHA256 || *second.RulesSHA256 != rules.RulesSHA256 || onReceipt.Version != 1 {
		t.Fatalf("versions: %+v, %+v, %+v", first, second, onReceipt)
	}
	if doc, err := e.st.GetDocument(ctx, rc.SHA256); err != nil || !bytes.Equal(doc.Body, receipt) {
		t.Fatalf("the corrected receipt changed: %v", err)
	}

	for _, c := range []struct {
		body   obj
		status int
		code   string
	}{
		{obj{"target": strings.Repeat("ab", 32), "reason": "r", "reporter": "x"}, 404, "not_found"},
		{obj{"reason": "r", "reporter": "x"}, 400, "bad_request"},
		{obj{"target": sums[0], "reporter": "x"}, 400, "bad_request"},
		{obj{"target": sums[0], "reason": "r", "reporter": "x", "version": 7}, 400, "bad_request"},
		{obj{"target": sums[0], "reason": "r", "reporter": "x", "rules_sha256": strings.Repeat("cd", 32)}, 422, "unknown_rules"},
		{obj{"target": sums[0], "reason": strings.Repeat("x", 4097), "reporter": "x"}, 400, "bad_request"},
	} {
		status, out, _ := e.correct(c.body)
		var pr struct{ Code string }
		json.Unmarshal(out, &pr)
		if status != c.status || pr.Code != c.code {
			t.Errorf("POST corrections %.80v: %d %s, want %d %s", c.body, status, out, c.status, c.code)
		}
	}

	var list struct{ Corrections []json.RawMessage }
	json.Unmarshal(e.ok("GET", "/api/v1/corrections", "/api/v1/corrections?target="+sums[1]+"&target="+rc.SHA256+"&target="+sums[1], nil), &list)
	if len(list.Corrections) != 3 {
		t.Fatalf("GET corrections: %d, want 3", len(list.Corrections))
	}
	e.problem("GET", "/api/v1/corrections", "/api/v1/corrections", nil, 400, "bad_request")
	if none := e.ok("GET", "/api/v1/corrections", "/api/v1/corrections?target="+sums[0], nil); string(none) != `{"corrections":[]}` {
		t.Errorf("GET corrections of an uncorrected record: %s", none)
	}

	var applied struct {
		Targets []string
		Applies []struct {
			Line       int
			Target     string
			Correction struct {
				Version int
				Trust   string
			}
		}
	}
	json.Unmarshal(coreOp(t, "corrections_apply", obj{"records": string(lines(recs...)), "corrections": list.Corrections, "key_directory": dir, "now": e.now.Format(time.RFC3339)}), &applied)
	if len(applied.Targets) != 2 || len(applied.Applies) != 2 || applied.Applies[0].Line != 2 || applied.Applies[1].Correction.Version != 2 || applied.Applies[0].Correction.Trust != "verified" {
		t.Fatalf("corrections_apply: %+v", applied)
	}
}
