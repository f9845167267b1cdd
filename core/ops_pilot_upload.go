package core

import (
	"time"

	"github.com/crawlcheck/verifier/core/digest"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/ed25519"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/sig"
)

// A pilot's uploads bound to the pilot (docs/issuer.md, Trust model; issue
// 37, F7): a pilot made with a record key (an Ed25519 seed the issuer draws
// at creation, hands over once and keeps only the public key of) takes only
// uploads signed with it. The signature covers the pilot's id and the
// upload's exact bytes, so records cannot be sent to another pilot with its
// signature, nor edited on the way, by whoever holds the bearer token
// alone (which travels with every request; the seed never does).

// pilotUploadKind is the signed kind of an upload: its domain separation
// from every other signature the core makes.
const pilotUploadKind = "crawlcheck-pilot-upload"

// pilotUploadDigest is what an upload's signature is over: the canonical
// JSON of {pilot_id, records_sha256}, the SHA-256 of the upload's bytes.
func pilotUploadDigest(pilotID, records string) string {
	sum := digest.Sum256([]byte(records))
	return canon.SHA256Hex(canon.Obj(
		canon.M("pilot_id", canon.Str(pilotID)),
		canon.M("records_sha256", canon.Str(digest.Encode(sum[:]))),
	))
}

func opSignPilotUpload(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	priv, kid := signingKey(rd)
	id := rd.Str("pilot_id", true)
	records := rd.Str("records", true)
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	return canon.Obj(canon.M("signature", canon.Str(sig.Sign(priv, kid, pilotUploadKind, pilotUploadDigest(id, records))))), nil
}

func opVerifyPilotUpload(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	pubText := rd.Str("public_key", true)
	id := rd.Str("pilot_id", true)
	records := rd.Str("records", true)
	signature := rd.Str("signature", false)
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	pub, err := sig.PublicKey(pubText)
	if !rd.In("public_key", err) {
		return canon.Value{}, rd.Err()
	}
	d := pilotUploadDigest(id, records)
	reason := "unsigned"
	if signature != "" {
		// A record key has no window: the pilot's key is valid as long as
		// the pilot is; the time is not an input.
		v := sig.Verify(pilotUploadKind, d, d, signature, sig.Keys{Operator: []ed25519.PublicKey{pub}}, time.Time{})
		reason = v.Reason
		if v.Trust == sig.OperatorSigned {
			reason = ""
		}
	}
	return canon.Obj(
		canon.M("valid", canon.BoolOf(reason == "")),
		canon.M("reason", canon.StrOrNull(reason, reason != "")),
	), nil
}
