package service_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/fetch"
	"github.com/crawlcheck/verifier/internal/issuer/service"
	"github.com/crawlcheck/verifier/internal/issuer/store"
)

// provenanceOf is a signed lockfile's provenance and trust as the core
// reads them, judged by the service's live directory.
func (e *env) provenanceOf(lock []byte) (map[string]string, string) {
	e.t.Helper()
	var v struct {
		Trust      string
		Provenance map[string]string
	}
	json.Unmarshal(coreOp(e.t, "verify_lock", obj{"lock": string(lock), "now": e.now.Format(time.RFC3339),
		"key_directory": json.RawMessage(e.ok("GET", "/api/v1/keys", "/api/v1/keys", nil))}), &v)
	return v.Provenance, v.Trust
}

// TestLockProvenance (F9): a signed lockfile says, inside its signature,
// whether the service read the server itself (observed) or was handed the
// tools (submitted), and by whom; tools handed over are signed only for the
// operator or a tenant the operator issued a token, and anonymous clients
// have no lockfile at all unless the operator allows them observed ones.
func TestLockProvenance(t *testing.T) {
	e := newEnv(t, allowLoopback(), operatorConfig())
	tenant := e.auth
	byURL := "/api/v1/mcp/lock?url=" + url.QueryEscape(e.mcp)
	submit := obj{"tools": json.RawMessage(tools), "server": obj{"url": e.mcp}}

	lock := e.ok("POST", "/api/v1/mcp/lock", "/api/v1/mcp/lock", submit)
	if p, trust := e.provenanceOf(lock); trust != "verified" || p["source"] != "submitted" || p["by"] != "tenant:"+testTenant {
		t.Errorf("tools a tenant handed over: %s %v, want verified, submitted by tenant:%s", trust, p, testTenant)
	}
	lock = e.ok("GET", "/api/v1/mcp/lock", byURL, nil)
	if p, _ := e.provenanceOf(lock); p["source"] != "observed" || p["by"] != "tenant:"+testTenant {
		t.Errorf("a server read for a tenant: %v, want observed by tenant:%s", p, testTenant)
	}
	e.auth = "Bearer " + operatorToken
	lock = e.ok("POST", "/api/v1/mcp/lock", "/api/v1/mcp/lock", submit)
	if p, _ := e.provenanceOf(lock); p["source"] != "submitted" || p["by"] != "operator" {
		t.Errorf("tools the operator handed over: %v, want submitted by operator", p)
	}

	// The provenance is the service's statement, never the request's.
	e.auth = tenant
	e.problem("POST", "/api/v1/mcp/lock", "/api/v1/mcp/lock", obj{"tools": json.RawMessage(tools),
		"provenance": obj{"source": "observed", "by": "operator"}}, 400, "bad_request")
	e.problem("POST", "/api/v1/mcp/lock", "/api/v1/mcp/lock", obj{"observed": obj{"endpoint": e.mcp,
		"pages": []string{`{"tools":` + tools + `}`}}}, 400, "bad_request")

	// Anonymous: no lockfile by default, never of tools handed over; a
	// token that opens nobody is refused, not taken as anonymous.
	e.auth = ""
	e.problem("POST", "/api/v1/mcp/lock", "/api/v1/mcp/lock", submit, 401, "unauthorized")
	e.problem("GET", "/api/v1/mcp/lock", byURL, nil, 401, "unauthorized")
	for _, bad := range []string{"Bearer " + service.TenantTokenPrefix + testTenant + ".wrong", "Bearer " + service.TenantTokenPrefix + "nobody.x", "Bearer cco_guess", "Basic YTpi"} {
		e.auth = bad
		e.problem("GET", "/api/v1/mcp/lock", byURL, nil, 401, "unauthorized")
		e.problem("POST", "/api/v1/mcp/lock", "/api/v1/mcp/lock", submit, 401, "unauthorized")
	}
}

// TestAnonymousLocks: with the operator's leave (AnonymousLocks), an
// anonymous client has lockfiles of servers the service reads, stating
// observed by anonymous, and still no lockfile of tools it hands over.
func TestAnonymousLocks(t *testing.T) {
	e := newEnv(t, allowLoopback(), service.Config{AnonymousLocks: true})
	e.auth = ""
	lock := e.ok("GET", "/api/v1/mcp/lock", "/api/v1/mcp/lock?url="+url.QueryEscape(e.mcp), nil)
	if p, trust := e.provenanceOf(lock); trust != "verified" || p["source"] != "observed" || p["by"] != "anonymous" {
		t.Errorf("an anonymous lockfile: %s %v, want verified, observed by anonymous", trust, p)
	}
	e.problem("POST", "/api/v1/mcp/lock", "/api/v1/mcp/lock", obj{"tools": json.RawMessage(tools)}, http.StatusUnauthorized, "unauthorized")
}

// TestAllowPrivateIsTheOperators (F12): the operator's private ranges are
// read for the operator's token alone; a tenant's or an anonymous reading
// of the same loopback server is refused, with the class of the refusal
// and not the address, and a server that cannot be read is named by its
// fault, not by the error that names where it was dialled.
func TestAllowPrivateIsTheOperators(t *testing.T) {
	cfg := operatorConfig()
	cfg.AnonymousLocks = true
	cfg.OperatorFetch = fetch.New(allowLoopback())
	e := newEnv(t, fetch.Policy{AllowHTTP: true}, cfg)
	byURL := "/api/v1/mcp/lock?url=" + url.QueryEscape(e.mcp)
	tenant := e.auth
	for _, who := range []string{tenant, ""} {
		e.auth = who
		d := e.problem("GET", "/api/v1/mcp/lock", byURL, nil, 403, "endpoint_refused")
		if strings.Contains(d, "127.0.0.1") || !strings.Contains(d, "range this issuer does not read") {
			t.Errorf("refused for %q with %q: want the class, no address", who, d)
		}
		e.problem("POST", "/api/v1/mcp/lock/check", "/api/v1/mcp/lock/check", obj{"lock": obj{}, "url": e.mcp}, 403, "endpoint_refused")
	}
	e.auth = "Bearer " + operatorToken
	lock := e.ok("GET", "/api/v1/mcp/lock", byURL, nil)
	if p, _ := e.provenanceOf(lock); p["source"] != "observed" || p["by"] != "operator" {
		t.Errorf("the operator's reading: %v", p)
	}
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL + "/mcp"
	down.Close()
	if d := e.problem("GET", "/api/v1/mcp/lock", "/api/v1/mcp/lock?url="+url.QueryEscape(downURL), nil, 502, "server_unavailable"); strings.Contains(d, "127.0.0.1") {
		t.Errorf("a server that cannot be read: %q names the address dialled", d)
	}
}

// TestDocumentsReadBack (F8): a document is read back by the principal
// that caused it and by the operator; another tenant and the anonymous
// are answered 404 as for a digest never issued, although the log lists
// every digest.
func TestDocumentsReadBack(t *testing.T) {
	for _, st := range stores(t) {
		t.Run(st.name, func(t *testing.T) {
			cfg := operatorConfig()
			cfg.Store = st.store
			cfg.AnonymousLocks = true
			const otherToken = service.TenantTokenPrefix + "globex.b3RoZXItc2VjcmV0"
			cfg.TenantTokens = tenantHashes(testTenantToken, otherToken)
			e := newEnv(t, allowLoopback(), cfg)
			e.auth = "Bearer " + testTenantToken
			mine := e.ok("POST", "/api/v1/mcp/lock", "/api/v1/mcp/lock", obj{"tools": json.RawMessage(tools), "server": obj{"url": e.mcp}})
			var rc struct{ SHA256 string }
			receipt := e.ok("POST", "/api/v1/mcp/lock/check", "/api/v1/mcp/lock/check", obj{"lock": string(mine), "tools": json.RawMessage(tools), "subject": e.mcp})
			json.Unmarshal(receipt, &rc)
			// A replay looks the lockfile up for those who may read it only.
			replay := func() bool {
				status, out := e.do("POST", "/api/v1/preflight/replay", "/api/v1/preflight/replay", obj{"receipt": json.RawMessage(receipt)})
				return status == 200 && bytes.Contains(out, []byte(`"reproducible":true`))
			}
			if !replay() {
				t.Errorf("the tenant's replay of its own receipt does not reproduce")
			}
			e.auth = ""
			if replay() {
				t.Errorf("an anonymous replay looked the tenant's lockfile up")
			}
			e.auth = "Bearer " + testTenantToken
			var l struct{ SHA256 string }
			json.Unmarshal(mine, &l)
			e.auth = ""
			anon := e.ok("GET", "/api/v1/mcp/lock", "/api/v1/mcp/lock?url="+url.QueryEscape(e.mcp), nil)
			var a struct{ SHA256 string }
			json.Unmarshal(anon, &a)
			for _, c := range []struct {
				who, digest string
				readable    bool
			}{
				{"Bearer " + testTenantToken, l.SHA256, true},
				{"Bearer " + testTenantToken, rc.SHA256, true},
				{"Bearer " + operatorToken, l.SHA256, true},
				{"Bearer " + operatorToken, rc.SHA256, true},
				{"Bearer " + operatorToken, a.SHA256, true},
				{"Bearer " + otherToken, l.SHA256, false},
				{"Bearer " + otherToken, rc.SHA256, false},
				{"", l.SHA256, false},
				{"", rc.SHA256, false},
				{"", a.SHA256, false}, // the anonymous cannot be told apart: only the operator reads its documents
				{"Bearer " + testTenantToken, a.SHA256, false},
			} {
				e.auth = c.who
				path := "/api/v1/documents/" + c.digest
				if c.readable {
					e.ok("GET", "/api/v1/documents/{sha256}", path, nil)
				} else {
					e.problem("GET", "/api/v1/documents/{sha256}", path, nil, 404, "not_found")
				}
			}
			e.auth = "Bearer cco_guess"
			e.problem("GET", "/api/v1/documents/{sha256}", "/api/v1/documents/"+l.SHA256, nil, 401, "unauthorized")
		})
	}
}

// namedStore is a store a test runs against: nil is newEnv's SQLite.
type namedStore struct {
	name  string
	store store.Store
}

// stores are SQLite and a throwaway PostgreSQL (pgtest): the principal a
// document is recorded with is a column of both (migration 11).
func stores(t *testing.T) []namedStore {
	st := pgStore(t, "trust")
	return []namedStore{{"sqlite", nil}, {"postgres", st}}
}

// signedUpload posts JSON lines with a bearer token and, when sig is not
// "", the upload's signature.
func (e *env) signedUpload(id, token, sig string, body []byte) (int, []byte) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.api+"/api/v1/pilot/"+id+"/records", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/jsonl")
	req.Header.Set("Authorization", "Bearer "+token)
	if sig != "" {
		req.Header.Set(service.PilotSignatureHeader, sig)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	e.spec.validate(e.t, "POST", "/api/v1/pilot/{id}/records", resp, out)
	return resp.StatusCode, out
}

// TestPilotRecordKey (F7): a pilot made with a record key takes only
// uploads signed with it for that pilot and those bytes: an unsigned
// upload, one signed for another pilot (the records replayed there), one
// edited after signing, or one signed with another pilot's key is refused
// on arrival and nothing of it is kept; a pilot made without one takes
// uploads as before. SQLite and PostgreSQL.
func TestPilotRecordKey(t *testing.T) {
	for _, st := range stores(t) {
		t.Run(st.name, func(t *testing.T) {
			e := newEnv(t, allowLoopback(), service.Config{Store: st.store})
			type pilot struct {
				ID        string `json:"pilot_id"`
				Token     string `json:"token"`
				RecordKey string `json:"record_key"`
			}
			newPilot := func(path string) pilot {
				var p pilot
				status, out := e.do("POST", "/api/v1/pilot", path, nil)
				if json.Unmarshal(out, &p); status != 201 {
					t.Fatalf("POST %s: %d %s", path, status, out)
				}
				return p
			}
			a, b, plain := newPilot("/api/v1/pilot?record_key=true"), newPilot("/api/v1/pilot?record_key=true"), newPilot("/api/v1/pilot")
			if a.RecordKey == "" || plain.RecordKey != "" {
				t.Fatalf("record keys: %q for ?record_key=true, %q without", a.RecordKey, plain.RecordKey)
			}
			recs, _ := records(t, 2)
			body := lines(recs...)
			sign := func(seed, id string, body []byte) string {
				var s struct{ Signature string }
				json.Unmarshal(coreOp(t, "sign_pilot_upload", obj{"private_key": seed, "pilot_id": id, "records": string(body)}), &s)
				return s.Signature
			}
			edited := []byte(strings.Replace(string(body), "enforce", "observe", 1))
			for _, c := range []struct {
				name, sig string
				body      []byte
			}{
				{"unsigned", "", body},
				{"signed for another pilot", sign(a.RecordKey, b.ID, body), body},
				{"signed with another pilot's key", sign(b.RecordKey, a.ID, body), body},
				{"edited after signing", sign(a.RecordKey, a.ID, body), edited},
				{"not a signature", "ed25519:x", body},
			} {
				if status, out := e.signedUpload(a.ID, a.Token, c.sig, c.body); status != http.StatusUnauthorized {
					t.Errorf("%s: %d %s, want 401", c.name, status, out)
				}
			}
			if status, out := e.signedUpload(a.ID, a.Token, sign(a.RecordKey, a.ID, body), body); status != 200 || !strings.Contains(string(out), `"accepted":2`) {
				t.Fatalf("signed with its key: %d %s", status, out)
			}
			if status, out := e.signedUpload(plain.ID, plain.Token, "", body); status != 200 || !strings.Contains(string(out), `"accepted":2`) {
				t.Fatalf("a pilot without a record key: %d %s", status, out)
			}
		})
	}
}
