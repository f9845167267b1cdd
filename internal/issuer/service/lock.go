package service

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/store"
)

// lockKind is the kind of a lockfile document in the store.
const lockKind = "crawlcheck-mcp-lock"

// lockByURL answers GET /api/v1/mcp/lock?url=: the service runs the
// handshake and tools/list on the endpoint (calling no tool) and answers
// the lockfile pinning what it read, signed by its key: a `verified`
// baseline for any host that follows its key directory.
//
// The lockfile states its provenance in its signed part: observed, by the
// principal that asked. Anonymous clients get one only when the operator
// allows it (Config.AnonymousLocks); else 401 before anything is read.
func (s *Service) lockByURL(w http.ResponseWriter, r *http.Request) {
	who, ok := s.principalOf(w, r)
	if !ok {
		return
	}
	if !who.credentialed() && !s.cfg.AnonymousLocks {
		w.Header().Set("WWW-Authenticate", `Bearer realm="crawlcheck-issuer"`)
		s.problem(w, http.StatusUnauthorized, "unauthorized", "this issuer signs lockfiles for its operator and tenants only (Authorization: Bearer TOKEN); its operator may allow anonymous ones of servers it reads (serve --anonymous-locks)")
		return
	}
	url := r.URL.Query().Get("url")
	if url == "" {
		s.problem(w, http.StatusBadRequest, "bad_request", "the url query parameter names the endpoint to read")
		return
	}
	rd, ok := s.read(w, r, url)
	if !ok {
		return
	}
	switch {
	case rd.Failure != "":
		status := http.StatusBadGateway
		if rd.Failure == "check_timeout" {
			status = http.StatusGatewayTimeout
		}
		s.problem(w, status, rd.Failure, "the server could not be read: "+rd.FailureDetail)
		return
	case rd.PageCapReached:
		s.problem(w, http.StatusBadGateway, "tool_list_truncated", "the server's tool list is longer than the service's page cap: no lockfile pins part of a list")
		return
	case s.tooManyTools(w, nil, rd.Pages):
		return
	}
	s.issueLock(w, r, who, rd.Endpoint, map[string]any{"observed": observed(rd),
		"provenance": map[string]string{"source": "observed", "by": string(who)}})
}

// lockByTools answers POST /api/v1/mcp/lock {tools | pages, server?}: the
// lockfile pinning the tools sent, signed as submitted by the operator or
// the tenant whose token the request carries (F9: a signature on tools
// anybody handed over would attest nothing). Anonymous is 401 before the
// body is read. The approval time is the service's clock, and the
// provenance the service's statement: a request naming either, or handing
// over observed facts as if read, is refused.
func (s *Service) lockByTools(w http.ResponseWriter, r *http.Request) {
	who, ok := s.principalOf(w, r)
	if !ok {
		return
	}
	if !who.credentialed() {
		w.Header().Set("WWW-Authenticate", `Bearer realm="crawlcheck-issuer"`)
		s.problem(w, http.StatusUnauthorized, "unauthorized", "a list handed over is signed only for the operator or a tenant (Authorization: Bearer TOKEN); GET /api/v1/mcp/lock?url= signs what this service reads itself")
		return
	}
	// Signing tools sent is limited per client like a live reading (its
	// own budget): a lockfile is stored and logged forever, and a refused
	// one still costs its body's reading.
	if !s.limit(w, "lock "+clientOf(r), s.cfg.RatePerSecond, s.cfg.RateBurst, "too many lockfiles signed for this client") ||
		!s.tenantLimit(w, "lock ", who, "too many lockfiles signed for this tenant") {
		return
	}
	s.lockBody(w, r)
	q, ok := s.readRequest(w, r)
	if !ok || s.tooManyTools(w, q["tools"], requestPages(q["pages"])) {
		return
	}
	for _, m := range []struct{ name, why string }{
		{"approved_at", "approved_at is the service's clock, not the request's"},
		{"provenance", "provenance is the service's statement of where the tools came from, not the request's"},
		{"observed", "the facts of a reading are the service's own (GET /api/v1/mcp/lock?url=); hand over tools or pages"},
	} {
		if _, has := q[m.name]; has {
			s.problem(w, http.StatusBadRequest, "bad_request", m.why)
			return
		}
	}
	var srv struct {
		URL string `json:"url"`
	}
	json.Unmarshal(q["server"], &srv)
	req := map[string]any{"provenance": map[string]string{"source": "submitted", "by": string(who)}}
	for k, v := range q {
		req[k] = v
	}
	s.issueLock(w, r, who, srv.URL, req)
}

// issueLock makes (make_lock), signs (sign_lock) and records a lockfile.
func (s *Service) issueLock(w http.ResponseWriter, r *http.Request, who principal, subject string, req map[string]any) {
	now := s.cfg.Now().UTC()
	req["approved_at"] = now.Format(time.RFC3339Nano)
	res, err := coreResult("make_lock", mustJSON(req))
	if err != nil {
		s.fail(w, err)
		return
	}
	var made struct {
		Lock string `json:"lock"`
	}
	if err := json.Unmarshal(res, &made); err != nil {
		s.fail(w, &coreError{"internal", "make_lock: " + err.Error()})
		return
	}
	s.signLock(w, r, who, subject, made.Lock, now)
}

// signLock signs a lockfile and records it as caused by who, the principal
// that may read it back besides the operator.
func (s *Service) signLock(w http.ResponseWriter, r *http.Request, who principal, subject string, lock any, now time.Time) {
	if ie := storable("server.url", subject); ie != nil {
		s.fail(w, ie)
		return
	}
	key, err := s.cfg.Keys.Signer(now)
	if err != nil {
		s.fail(w, err)
		return
	}
	res, err := s.signResult("sign_lock", mustJSON(map[string]any{"lock": lock, "private_key": key.Seed, "key_id": key.KID}))
	if err != nil {
		s.fail(w, err)
		return
	}
	var signed struct {
		Lock   string `json:"lock"`
		SHA256 string `json:"sha256"`
	}
	if err := json.Unmarshal(res, &signed); err != nil {
		s.fail(w, &coreError{"internal", "sign_lock: " + err.Error()})
		return
	}
	entry, err := s.logEntry([]byte(signed.Lock))
	if err != nil {
		s.fail(w, err)
		return
	}
	doc := store.Document{SHA256: signed.SHA256, Kind: lockKind, KeyID: key.KID, Subject: subject, IssuedAt: now, Body: []byte(signed.Lock), Principal: string(who)}
	proof, err := s.issue(r.Context(), store.Issuance{Document: doc, LogEntry: entry})
	if err != nil {
		s.fail(w, err)
		return
	}
	s.metrics.Inc("crawlcheck_issuer_signed_total", lockKind)
	w.Header().Set("X-Crawlcheck-Lock-Sha256", signed.SHA256)
	setProof(w, proof)
	writeBytes(w, http.StatusOK, "application/json", []byte(signed.Lock))
}

// resign answers POST /api/v1/mcp/lock/resign {lock}: a lockfile this
// service signed with a key in its active or overlap window, signed again
// with the key that signs now. The lockfile is judged by the live
// directory (what GET /api/v1/keys serves), so a retired key vouches for
// nothing here either (F10: a retired key may have been retired because it
// leaked, and whatever it signs would otherwise come back signed by the
// current key); roll lockfiles forward during the overlap a rotation
// leaves. A lockfile it did not sign, one edited since, or one of a retired
// key is refused (422 not_issued_here, naming the reason): resigning is
// rolling our own signatures forward, never vouching for someone else's
// file. The content, its provenance included, is signed as it is.
func (s *Service) resign(w http.ResponseWriter, r *http.Request) {
	who, ok := s.principalOf(w, r)
	if !ok {
		return
	}
	q, ok := s.readRequest(w, r)
	if !ok {
		return
	}
	now := s.cfg.Now().UTC()
	live, err := s.cfg.Keys.Directory(now)
	if err != nil {
		s.fail(w, err)
		return
	}
	res, err := coreResult("verify_lock", mustJSON(map[string]any{"lock": q["lock"], "now": now.Format(time.RFC3339Nano),
		"key_directory": live, "require_signed": true}))
	if err != nil {
		s.fail(w, err)
		return
	}
	var v struct {
		Format string  `json:"format"`
		Trust  string  `json:"trust"`
		Reason *string `json:"reason"`
		URL    *string `json:"url"`
	}
	json.Unmarshal(res, &v)
	if v.Trust != "verified" {
		reason := v.Trust
		if v.Reason != nil {
			reason = *v.Reason
		}
		s.problem(w, http.StatusUnprocessableEntity, "not_issued_here", "this service did not sign this lockfile as it is ("+reason+")")
		return
	}
	subject := ""
	if v.URL != nil {
		subject = *v.URL
	}
	s.signLock(w, r, who, subject, q["lock"], now)
}
