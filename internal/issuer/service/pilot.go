package service

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/crawlcheck/verifier/internal/issuer/store"
)

// The pilot (docs/issuer.md, "The pilot"): a pilot id and a token shown
// once, then uploads of the records a pilot's hosts wrote, each judged by
// the core's pilot_batch against the chain the store holds for the pilot.
// The store keeps the token only as its SHA-256; an accepted upload moves
// the pilot's head under a compare-and-set and is committed to the log
// before it is answered, so an upload acknowledged is one the log holds.

const (
	// MaxPilotBody bounds one upload (a host sends smaller batches).
	MaxPilotBody = 8 << 20
	// MaxPilotLines bounds the records of one upload.
	MaxPilotLines = 5000
	// pilotRate and pilotBurst limit each pilot's uploads.
	pilotRate, pilotBurst = 10, 20
)

// createPilot answers POST /api/v1/pilot: {pilot_id, token}, 201. The
// token is never stored or logged, only its hash.
func (s *Service) createPilot(w http.ResponseWriter, r *http.Request) {
	if !s.limit(w, clientOf(r), s.cfg.RatePerSecond, s.cfg.RateBurst, "too many pilots made from this client") || !s.pilotCreationAllowed(w, r) {
		return
	}
	idb, tok := make([]byte, 16), make([]byte, 32)
	if _, err := rand.Read(idb); err != nil {
		s.fail(w, err)
		return
	}
	if _, err := rand.Read(tok); err != nil {
		s.fail(w, err)
		return
	}
	id, token := "pilot-"+hex.EncodeToString(idb), "cct_"+base64.RawURLEncoding.EncodeToString(tok)
	p := store.Pilot{ID: id, TokenSHA256: tokenHash(token), CreatedAt: s.cfg.Now().UTC()}
	answer := map[string]string{"pilot_id": id, "token": token}
	if r.URL.Query().Get("record_key") == "true" {
		// The pilot's record key (uploads.go): its seed is answered this
		// once and its public key alone is kept.
		seed, pub, err := recordKey()
		if err != nil {
			s.fail(w, err)
			return
		}
		p.RecordKey, answer["record_key"] = pub, seed
	}
	if err := s.timed("create_pilot", func() error { return s.cfg.Store.CreatePilot(r.Context(), p) }); err != nil {
		s.fail(w, &storeError{err})
		return
	}
	writeBytes(w, http.StatusCreated, "application/json", mustJSON(answer))
}

func tokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// pilotOf is the pilot the request's bearer token opens: an unknown pilot
// and a wrong token answer the same 401, so neither is told apart.
func (s *Service) pilotOf(w http.ResponseWriter, r *http.Request) (store.Pilot, bool) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	var p store.Pilot
	var err error
	if ok && token != "" {
		err = s.timed("get_pilot", func() (err error) { p, err = s.cfg.Store.GetPilot(r.Context(), r.PathValue("id")); return })
	}
	switch {
	case err != nil && !errors.Is(err, store.ErrNotFound):
		s.fail(w, &storeError{err})
		return p, false
	case !ok || token == "" || err != nil || subtle.ConstantTimeCompare([]byte(tokenHash(token)), []byte(p.TokenSHA256)) != 1:
		w.Header().Set("WWW-Authenticate", `Bearer realm="crawlcheck-pilot"`)
		s.problem(w, http.StatusUnauthorized, "unauthorized", "no pilot with this id opens with this token (Authorization: Bearer TOKEN)")
		return p, false
	}
	return p, true
}

// batch is pilot_batch's answer.
type batch struct {
	Results  json.RawMessage `json:"results"`
	Accepted int             `json:"accepted"`
	Head     *string         `json:"head"`
	Digests  []*string       `json:"digests"`
	Entry    *string         `json:"entry"`
}

func judge(records, head, logged string, known []string) (batch, []string, error) {
	q := map[string]any{"records": records}
	if head != "" {
		q["head"] = head
	}
	if logged != "" {
		q["logged_head"] = logged
	}
	if known != nil {
		q["known"] = known
	}
	res, err := coreResult("pilot_batch", mustJSON(q))
	var b batch
	var statuses []struct{ Status string }
	if err == nil {
		if err = json.Unmarshal(res, &b); err == nil {
			err = json.Unmarshal(b.Results, &statuses)
		}
		if err != nil {
			err = &coreError{"internal", "pilot_batch: " + err.Error()}
		}
	}
	out := make([]string, len(statuses))
	for i, st := range statuses {
		out[i] = st.Status
	}
	return b, out, err
}

// pilotRecords answers POST /api/v1/pilot/{id}/records: the core's verdict
// on each line, the accepted ones kept, and the log's proof of the
// commitment to the new head in X-Crawlcheck-Log-Proof.
func (s *Service) pilotRecords(w http.ResponseWriter, r *http.Request) {
	p, ok := s.pilotOf(w, r)
	if !ok || !s.limit(w, "pilot "+p.ID, pilotRate, pilotBurst, "too many uploads for this pilot") {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, min(MaxPilotBody, s.cfg.MaxBody)))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		s.problem(w, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("an upload is at most %d bytes: send smaller batches", mbe.Limit))
		return
	case err != nil:
		s.problem(w, http.StatusBadRequest, "bad_request", "reading the request body: "+err.Error())
		return
	case len(body) == 0:
		s.problem(w, http.StatusBadRequest, "bad_request", "the upload holds no record (JSON lines, one record a line)")
		return
	case !utf8.Valid(body):
		// A record the core wrote is UTF-8; the request to the core is JSON,
		// and an encoder would repair the bytes the core must judge.
		s.problem(w, http.StatusBadRequest, "bad_request", "the upload is not UTF-8: no record the core wrote is")
		return
	}
	if !s.uploadSigned(w, r, p, body) {
		return
	}
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	if len(lines) > MaxPilotLines {
		s.problem(w, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("an upload is at most %d records: send smaller batches", MaxPilotLines))
		return
	}
	if !s.pilotUploadAllowed(w, p.ID, len(body)) {
		return
	}
	b, statuses, err := judge(string(body), p.Head, p.LoggedHead, nil)
	if err != nil {
		s.fail(w, err)
		return
	}
	var named []string
	for _, d := range b.Digests {
		if d != nil {
			named = append(named, *d)
		}
	}
	var held map[string]bool
	if err := s.timed("pilot_holds", func() (err error) { held, err = s.cfg.Store.PilotHolds(r.Context(), p.ID, named); return }); err != nil {
		s.fail(w, &storeError{err})
		return
	}
	if len(held) > 0 {
		known := make([]string, 0, len(held))
		for d := range held {
			known = append(known, d)
		}
		if b, statuses, err = judge(string(body), p.Head, p.LoggedHead, known); err != nil {
			s.fail(w, err)
			return
		}
	}
	now := s.cfg.Now().UTC()
	var kept []store.PilotRecord
	gap := false
	for i, st := range statuses {
		switch st {
		case "accepted":
			kept = append(kept, store.PilotRecord{SHA256: *b.Digests[i], ReceivedAt: now, Body: []byte(lines[i])})
		case "chain_gap":
			gap = true
		}
	}
	if gap && len(kept) == 0 {
		// A gap judged against a head another upload has moved since is no
		// gap at all: the compare-and-set below catches that only when
		// something is kept.
		var cur store.Pilot
		err := s.timed("get_pilot", func() (err error) { cur, err = s.cfg.Store.GetPilot(r.Context(), p.ID); return })
		if err != nil {
			s.fail(w, &storeError{err})
			return
		}
		if cur.Head != p.Head {
			w.Header().Set("Retry-After", "1")
			s.problem(w, http.StatusConflict, "conflict", "another upload for this pilot was accepted meanwhile: send the batch again")
			return
		}
	}
	head := p.Head
	if b.Head != nil {
		head = *b.Head
	}
	if len(kept) > 0 && !s.pilotQuota(w, p, kept) {
		return
	}
	if len(kept) > 0 {
		err := s.timed("accept_pilot_records", func() error { return s.cfg.Store.AcceptPilotRecords(r.Context(), p.ID, p.Head, head, kept) })
		if errors.Is(err, store.ErrConflict) {
			w.Header().Set("Retry-After", "1")
			s.problem(w, http.StatusConflict, "conflict", "another upload for this pilot was accepted meanwhile: send the batch again")
			return
		}
		if err != nil {
			s.fail(w, &storeError{err})
			return
		}
	}
	if b.Entry != nil {
		// The records are kept; a log that fails here leaves the head
		// uncommitted, and the next upload (the retry) commits it.
		proof, err := s.appendEntry(r.Context(), []byte(*b.Entry))
		if err != nil {
			s.fail(w, err)
			return
		}
		if err := s.timed("set_pilot_logged", func() error { return s.cfg.Store.SetPilotLogged(r.Context(), p.ID, head) }); err != nil {
			s.fail(w, &storeError{err})
			return
		}
		setProof(w, proof)
	}
	writeBytes(w, http.StatusOK, "application/json", mustJSON(map[string]any{
		"pilot_id": p.ID, "head": b.Head, "accepted": b.Accepted, "results": b.Results,
	}))
}
