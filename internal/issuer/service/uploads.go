package service

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"

	"github.com/crawlcheck/verifier/internal/issuer/store"
)

// A pilot's uploads bound to it (docs/issuer.md, Trust model; issue 37,
// F7). A pilot made with POST /api/v1/pilot?record_key=true gets a record
// key: an Ed25519 seed drawn here, answered once, of which the service
// keeps the public key alone. Its uploads are then taken only when signed
// with it (the core's sign_pilot_upload, over the pilot's id and the
// upload's exact bytes, in X-Crawlcheck-Pilot-Signature): records sent to
// another pilot, edited on the way, or posted by whoever learned the bearer
// token (it travels with every request; the seed never does) are refused
// on arrival, 401, before any line is judged or kept.

// PilotSignatureHeader carries an upload's signature.
const PilotSignatureHeader = "X-Crawlcheck-Pilot-Signature"

// recordKey draws a record key: its seed and its public key, base64.
func recordKey() (seed, pub string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	seed = base64.StdEncoding.EncodeToString(b)
	res, err := coreResult("public_key", mustJSON(map[string]string{"private_key": seed}))
	if err != nil {
		return "", "", err
	}
	var k struct {
		PublicKey string `json:"public_key"`
	}
	if err := json.Unmarshal(res, &k); err != nil || k.PublicKey == "" {
		return "", "", &coreError{"internal", "public_key: " + string(res)}
	}
	return seed, k.PublicKey, nil
}

// uploadSigned says whether an upload may be judged: always for a pilot
// without a record key; for one with, only when the core finds it signed
// by that key over that pilot and those bytes (else 401, answered here).
func (s *Service) uploadSigned(w http.ResponseWriter, r *http.Request, p store.Pilot, body []byte) bool {
	if p.RecordKey == "" {
		return true
	}
	q := map[string]string{"public_key": p.RecordKey, "pilot_id": p.ID, "records": string(body)}
	if sg := r.Header.Get(PilotSignatureHeader); sg != "" {
		q["signature"] = sg
	}
	res, err := coreResult("verify_pilot_upload", mustJSON(q))
	if err != nil {
		s.fail(w, err)
		return false
	}
	var v struct {
		Valid  bool    `json:"valid"`
		Reason *string `json:"reason"`
	}
	if err := json.Unmarshal(res, &v); err != nil {
		s.fail(w, &coreError{"internal", "verify_pilot_upload: " + err.Error()})
		return false
	}
	if !v.Valid {
		reason := "unsigned"
		if v.Reason != nil {
			reason = *v.Reason
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="crawlcheck-pilot"`)
		s.problem(w, http.StatusUnauthorized, "unauthorized", "this pilot takes only uploads signed with its record key ("+PilotSignatureHeader+", the core's sign_pilot_upload): "+reason)
		return false
	}
	return true
}
