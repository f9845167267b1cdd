// Package sig signs and verifies the core's documents (lockfiles, receipts)
// with Ed25519 (core/internal/ed25519).
//
// A signed document carries "sha256", the hex SHA-256 of its canonical form
// without "sha256" and "signature", and "signature", a string
//
//	ed25519:<key id>:<base64url signature, no padding>
//
// The signature is over the message "crawlcheck.sig.v1:<kind>:<sha256 hex>",
// so that a signature made for one kind of document (a lockfile) can never be
// presented as another (a receipt). Key ids that start with "op_" are
// operator keys, named by the first 16 hex digits of the SHA-256 of the raw
// public key; any other key id names a key of the issuer's key directory
// (docs/keys.md).
package sig

import (
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/digest"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/ed25519"
)

// Domain is the domain-separation prefix of every signed message.
const Domain = "crawlcheck.sig.v1:"

// OperatorPrefix starts every operator key id.
const OperatorPrefix = "op_"

// Trust results of a verification.
const (
	Verified       = "verified"        // signed by an active issuer key
	OperatorSigned = "operator_signed" // signed by one of the operator's keys
	Unsigned       = "unsigned"
	Untrusted      = "untrusted"
)

// Reasons for Untrusted.
const (
	ReasonBadSignature       = "bad_signature"
	ReasonEdited             = "edited_after_signing"
	ReasonForeignKey         = "foreign_key"
	ReasonWrongOperatorKey   = "wrong_operator_key"
	ReasonRetiredKey         = "retired_key"
	ReasonOutsideValidity    = "key_outside_validity"
	ReasonMalformedSignature = "malformed_signature"
	ReasonDigestMismatch     = "sha256_mismatch"  // unsigned, but its sha256 does not match its content
	ReasonUnsignedRefused    = "unsigned_refused" // unsigned where a signature is required
	// ReasonNotObserved: the policy requires an observed baseline
	// (require_observed_baseline) and the lockfile's signed provenance is
	// not "observed" (submitted, none stated, or stated but not signed).
	ReasonNotObserved = "not_observed"
)

// Message is the byte string a signature covers.
func Message(kind, digestHex string) []byte {
	return []byte(Domain + kind + ":" + digestHex)
}

// Digest is the document digest: SHA-256 of the canonical form of doc
// without its "sha256" and "signature" members.
func Digest(doc canon.Value) string {
	return canon.SHA256Hex(doc.Without("sha256", "signature"))
}

// PrivateKey decodes a base64 32-byte Ed25519 seed and derives its key.
// Nothing of it is kept: a seed handed to an SDK's instance (sign_lock in a
// page, a Python process) must not outlive the call (docs/abi.md, State).
func PrivateKey(seedB64 string) (ed25519.PrivateKey, error) {
	seed, err := decodeExact(base64.StdEncoding, seedB64)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, cerr.New(cerr.KeyInvalid, "a private key must be the base64 of a 32-byte Ed25519 seed")
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// PublicKey decodes a base64 32-byte Ed25519 public key.
func PublicKey(b64 string) (ed25519.PublicKey, error) {
	raw, err := decodeExact(base64.StdEncoding, b64)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, cerr.New(cerr.KeyInvalid, "a public key must be the base64 of 32 bytes, got %q", clip(b64))
	}
	return ed25519.PublicKey(raw), nil
}

// decodeExact decodes s only if it is the one spelling enc gives its bytes.
// Go's decoders ignore the unused bits of the last character and skip line
// breaks, so without this a signature or key would have many spellings, and
// a lockfile whose signature was edited would still verify.
func decodeExact(enc *base64.Encoding, s string) ([]byte, error) {
	b, err := enc.Strict().DecodeString(s)
	if err != nil {
		return nil, err
	}
	if enc.EncodeToString(b) != s {
		return nil, errNotCanonical
	}
	return b, nil
}

var errNotCanonical = errors.New("not the canonical base64 spelling")

// EncodePublic is the base64 form of a public key.
func EncodePublic(pub ed25519.PublicKey) string { return base64.StdEncoding.EncodeToString(pub) }

// OperatorKeyID names an operator key.
func OperatorKeyID(pub ed25519.PublicKey) string {
	sum := digest.Sum256(pub)
	return OperatorPrefix + digest.Encode(sum[:8])
}

// Sign returns the signature string for a document of kind whose digest is digestHex.
func Sign(priv ed25519.PrivateKey, keyID, kind, digestHex string) string {
	s := ed25519.Sign(priv, Message(kind, digestHex))
	return "ed25519:" + keyID + ":" + base64.RawURLEncoding.EncodeToString(s)
}

// parse splits a signature string into key id and signature bytes.
func parse(s string) (keyID string, sigBytes []byte, ok bool) {
	rest, ok := strings.CutPrefix(s, "ed25519:")
	if !ok {
		return "", nil, false
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 {
		return "", nil, false
	}
	b, err := decodeExact(base64.RawURLEncoding, rest[i+1:])
	if err != nil || len(b) != ed25519.SignatureSize {
		return "", nil, false
	}
	return rest[:i], b, true
}

// KeyIDOf returns the key id a signature string names ("" if unreadable).
func KeyIDOf(s string) string { id, _, _ := parse(s); return id }

// Result is the answer of Verify.
type Result struct {
	Trust  string
	Reason string
	KeyID  string
}

// Keys is what a verification trusts: the issuer's directory and the
// operator's own public keys.
type Keys struct {
	Directory *Directory
	Operator  []ed25519.PublicKey
}

// Verify checks a document's signature. stored is its "sha256" member (""
// when absent), content the digest recomputed from its members, signature its
// "signature" member ("" when absent). now bounds the key's validity window.
func Verify(kind, stored, content, signature string, keys Keys, now time.Time) Result {
	if signature == "" {
		if stored != "" && stored != content {
			return Result{Trust: Untrusted, Reason: ReasonDigestMismatch}
		}
		return Result{Trust: Unsigned}
	}
	keyID, sigBytes, ok := parse(signature)
	if !ok || stored == "" {
		return Result{Trust: Untrusted, Reason: ReasonMalformedSignature, KeyID: keyID}
	}
	r := Result{KeyID: keyID, Trust: Untrusted}
	var pub ed25519.PublicKey
	trust := Verified
	if strings.HasPrefix(keyID, OperatorPrefix) {
		for _, k := range keys.Operator {
			if OperatorKeyID(k) == keyID {
				pub = k
			}
		}
		if pub == nil {
			r.Reason = ReasonForeignKey
			if len(keys.Operator) > 0 {
				r.Reason = ReasonWrongOperatorKey
			}
			return r
		}
		trust = OperatorSigned
	} else {
		k, found := keys.Directory.Lookup(keyID)
		if !found {
			r.Reason = ReasonForeignKey
			return r
		}
		if reason := k.Usable(now); reason != "" {
			r.Reason = reason
			return r
		}
		pub = k.Public
	}
	if !ed25519.Verify(pub, Message(kind, stored), sigBytes) {
		r.Reason = ReasonBadSignature
		return r
	}
	if stored != content {
		r.Reason = ReasonEdited
		return r
	}
	r.Trust = trust
	return r
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
