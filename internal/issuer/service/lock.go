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
func (s *Service) lockByURL(w http.ResponseWriter, r *http.Request) {
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
	s.issueLock(w, r, rd.Endpoint, map[string]any{"observed": observed(rd)})
}

// lockByTools answers POST /api/v1/mcp/lock {tools | pages, server?}: the
// lockfile pinning the tools sent, signed. The approval time is the
// service's clock.
func (s *Service) lockByTools(w http.ResponseWriter, r *http.Request) {
	// Signing tools sent is limited per client like a live reading (its
	// own budget): a lockfile is stored and logged forever, and a refused
	// one still costs its body's reading.
	if !s.limit(w, "lock "+clientOf(r), s.cfg.RatePerSecond, s.cfg.RateBurst, "too many lockfiles signed for this client") {
		return
	}
	s.lockBody(w, r)
	q, ok := s.readRequest(w, r)
	if !ok || s.tooManyTools(w, q["tools"], requestPages(q["pages"])) {
		return
	}
	if _, has := q["approved_at"]; has {
		s.problem(w, http.StatusBadRequest, "bad_request", "approved_at is the service's clock, not the request's")
		return
	}
	var srv struct {
		URL string `json:"url"`
	}
	json.Unmarshal(q["server"], &srv)
	req := map[string]any{}
	for k, v := range q {
		req[k] = v
	}
	s.issueLock(w, r, srv.URL, req)
}

// issueLock makes (make_lock), signs (sign_lock) and records a lockfile.
func (s *Service) issueLock(w http.ResponseWriter, r *http.Request, subject string, req map[string]any) {
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
	s.signLock(w, r, subject, made.Lock, now)
}

func (s *Service) signLock(w http.ResponseWriter, r *http.Request, subject string, lock any, now time.Time) {
	if ie := storable("server.url", subject); ie != nil {
		s.fail(w, ie)
		return
	}
	key, err := s.cfg.Keys.Signer(now)
	if err != nil {
		s.fail(w, err)
		return
	}
	res, err := coreResult("sign_lock", mustJSON(map[string]any{"lock": lock, "private_key": key.Seed, "key_id": key.KID}))
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
	doc := store.Document{SHA256: signed.SHA256, Kind: lockKind, KeyID: key.KID, Subject: subject, IssuedAt: now, Body: []byte(signed.Lock)}
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
// service signed, with any of its keys (retired ones included), signed again
// with the key that signs now. A lockfile it did not sign, or one edited
// since, is refused (422 not_issued_here): resigning is rolling our own
// signatures forward, never vouching for someone else's file.
func (s *Service) resign(w http.ResponseWriter, r *http.Request) {
	q, ok := s.readRequest(w, r)
	if !ok {
		return
	}
	hist, err := s.cfg.Keys.History()
	if err != nil {
		s.fail(w, err)
		return
	}
	now := s.cfg.Now().UTC()
	res, err := coreResult("verify_lock", mustJSON(map[string]any{"lock": q["lock"], "now": now.Format(time.RFC3339Nano),
		"key_directory": hist, "require_signed": true}))
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
	s.signLock(w, r, subject, q["lock"], now)
}
