package sig

import "github.com/crawlcheck/verifier/core/internal/ed25519"

// SignedBy reports whether signature (a signature string) is pub's
// signature over a document of kind whose stored digest is digestHex.
//
// Verify answers one question, "may this document be trusted?", and stops at
// the first reason it may not. A receipt guard must answer the questions
// separately — does the signature verify, is the key the issuer's, is the
// key still allowed to vouch — so it resolves the key itself and asks only
// this.
func SignedBy(pub ed25519.PublicKey, kind, digestHex, signature string) bool {
	_, b, ok := parse(signature)
	return ok && len(pub) == ed25519.PublicKeySize && ed25519.Verify(pub, Message(kind, digestHex), b)
}
