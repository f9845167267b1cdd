package service

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/store"
)

// Corrections (docs/issuer.md, "Corrections"): the service never changes
// a record or receipt it holds. It signs a versioned correction naming one
// by digest (the core's sign_correction), records it and appends it to the
// log in one transaction, and lists a target's corrections by version.

// maxCorrectionTargets bounds the targets one GET names.
const maxCorrectionTargets = 100

// correctionTarget says whether the service holds a target: a document it
// signed or a record a pilot uploaded. Corrections of digests it never saw
// would let anyone write into its log.
func (s *Service) correctionTarget(r *http.Request, target string) (bool, error) {
	var held bool
	err := s.timed("get_document", func() error {
		_, err := s.cfg.Store.GetDocument(r.Context(), target)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		held = err == nil
		return err
	})
	if err != nil || held {
		return held, err
	}
	err = s.timed("holds_record", func() (err error) { held, err = s.cfg.Store.HoldsRecord(r.Context(), target); return })
	return held, err
}

// operator says whether the request carries the operator's token, and
// answers 401 when it does not. Before the body is read: nobody else's
// request costs a store read or a signature.
func (s *Service) operator(w http.ResponseWriter, r *http.Request) bool {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	want := s.cfg.OperatorTokenSHA256
	if ok && token != "" && want != "" && subtle.ConstantTimeCompare([]byte(tokenHash(token)), []byte(want)) == 1 {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="crawlcheck-operator"`)
	detail := "a correction needs the operator token (Authorization: Bearer TOKEN)"
	if want == "" {
		detail = "this issuer takes no corrections: it was started without an operator token (serve --operator-token-file)"
	}
	s.problem(w, http.StatusUnauthorized, "unauthorized", detail)
	return false
}

// postCorrection answers POST /api/v1/corrections {target, reason,
// reporter, rules_sha256?, policy_version?}: 201 and the signed correction,
// its tlog-proof in X-Crawlcheck-Log-Proof.
func (s *Service) postCorrection(w http.ResponseWriter, r *http.Request) {
	if !s.limit(w, clientOf(r), s.cfg.RatePerSecond, s.cfg.RateBurst, "too many corrections from this client") {
		return
	}
	if !s.operator(w, r) {
		return
	}
	q, ok := s.readRequest(w, r)
	if !ok {
		return
	}
	for name := range q {
		switch name {
		case "target", "reason", "reporter", "rules_sha256", "policy_version":
		default:
			s.problem(w, http.StatusBadRequest, "bad_request", "a correction has target, reason, reporter, rules_sha256 and policy_version, not "+name)
			return
		}
	}
	target := q.str("target")
	if target == "" {
		s.problem(w, http.StatusBadRequest, "bad_request", "target is required: the record_sha256 or receipt sha256 corrected")
		return
	}
	if held, err := s.correctionTarget(r, target); err != nil {
		s.fail(w, &storeError{err})
		return
	} else if !held {
		s.problem(w, http.StatusNotFound, "not_found", "this issuer holds no receipt, lockfile or pilot record with that digest")
		return
	}
	if rules := q.str("rules_sha256"); rules != "" {
		err := s.timed("get_rules", func() error { _, err := s.cfg.Store.GetRules(r.Context(), rules); return err })
		if errors.Is(err, store.ErrNotFound) {
			s.problem(w, http.StatusUnprocessableEntity, "unknown_rules", "rules_sha256 names no rule table this issuer served: a correction names the table that applies now")
			return
		} else if err != nil {
			s.fail(w, &storeError{err})
			return
		}
	}
	for try := 0; ; try++ {
		done, err := s.addCorrection(w, r, q, target)
		if done {
			return
		}
		if !errors.Is(err, store.ErrConflict) || try == 3 {
			s.fail(w, &storeError{err})
			return
		}
	}
}

// addCorrection signs the next version of target's corrections and records
// it; false with ErrConflict when another took that version first.
func (s *Service) addCorrection(w http.ResponseWriter, r *http.Request, q request, target string) (bool, error) {
	var prior []store.Correction
	if err := s.timed("corrections", func() (err error) { prior, err = s.cfg.Store.Corrections(r.Context(), target); return }); err != nil {
		return false, err
	}
	now := s.cfg.Now().UTC()
	key, err := s.cfg.Keys.Signer(now)
	if err != nil {
		s.fail(w, err)
		return true, nil
	}
	issuer, err := s.cfg.Keys.Issuer()
	if err != nil {
		s.fail(w, err)
		return true, nil
	}
	in := map[string]any{"private_key": key.Seed, "key_id": key.KID, "issuer": issuer, "issued_at": now.Format(time.RFC3339Nano),
		"version": len(prior) + 1}
	for name, v := range q {
		in[name] = v
	}
	if len(prior) > 0 {
		in["supersedes"] = prior[len(prior)-1].SHA256
	}
	res, err := s.signResult("sign_correction", mustJSON(in))
	if err != nil {
		s.fail(w, err)
		return true, nil
	}
	var out struct {
		Correction json.RawMessage
		SHA256     string
	}
	if err := json.Unmarshal(res, &out); err != nil {
		s.fail(w, &coreError{"internal", "sign_correction: " + err.Error()})
		return true, nil
	}
	entry, err := s.logEntry(out.Correction)
	if err != nil {
		s.fail(w, err)
		return true, nil
	}
	c := store.Correction{SHA256: out.SHA256, Target: target, Version: len(prior) + 1, IssuedAt: now, Body: out.Correction}
	var first uint64
	var cp string
	err = s.timed("add_correction", func() (err error) {
		if s.log == nil {
			_, _, err = s.cfg.Store.AddCorrection(r.Context(), c, nil, nil)
			return err
		}
		first, cp, err = s.cfg.Store.AddCorrection(r.Context(), c, entry, s.log.Sign)
		return err
	})
	if err != nil {
		return false, err
	}
	if s.log != nil {
		proof, err := s.log.ProofFor(r.Context(), first, cp)
		if err != nil {
			s.fail(w, &storeError{err})
			return true, nil
		}
		setProof(w, proof)
	}
	s.metrics.Inc("crawlcheck_issuer_signed_total", "crawlcheck-correction")
	writeBytes(w, http.StatusCreated, "application/json", out.Correction)
	return true, nil
}

// listCorrections answers GET /api/v1/corrections?target=SHA256 (repeated,
// at most 100): {"corrections": [...]}, by target as asked and version,
// each correction's first signing followed by its re-signings.
func (s *Service) listCorrections(w http.ResponseWriter, r *http.Request) {
	targets := r.URL.Query()["target"]
	if len(targets) == 0 || len(targets) > maxCorrectionTargets {
		s.problem(w, http.StatusBadRequest, "bad_request", "name 1 to 100 targets: ?target=SHA256&target=…")
		return
	}
	sort.Strings(targets)
	list := []json.RawMessage{}
	for i, t := range targets {
		if i > 0 && t == targets[i-1] {
			continue
		}
		var cs []store.Correction
		if err := s.timed("corrections", func() (err error) { cs, err = s.cfg.Store.Corrections(r.Context(), t); return }); err != nil {
			s.fail(w, &storeError{err})
			return
		}
		for _, c := range cs {
			list = append(list, c.Body)
			// Its re-signings after it: the first signing stays what was
			// published, and corrections_apply answers the one that
			// verifies (resign.go).
			var rs []store.Resigning
			if err := s.timed("resignings", func() (err error) { rs, err = s.cfg.Store.Resignings(r.Context(), c.SHA256); return }); err != nil {
				s.fail(w, &storeError{err})
				return
			}
			for _, x := range rs {
				list = append(list, x.Body)
			}
		}
	}
	writeBytes(w, http.StatusOK, "application/json", mustJSON(map[string]any{"corrections": list}))
}
