package service

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/crawlcheck/verifier/internal/issuer/fetch"
	"github.com/crawlcheck/verifier/internal/issuer/store"
)

// The principals of the trust model (docs/issuer.md, "Trust model"). Who
// asks decides what the service will sign: the operator (the operator
// token) and a tenant (a tenant token the operator issued with
// crawlcheck-issuer tenant-token) may have a list they hand over signed as
// submitted, and the lockfile says by whom; anybody else is anonymous and
// gets, at most and only when the operator allows it (AnonymousLocks), a
// lockfile of what the service read itself. A pilot token is not a
// principal here: anybody may make a pilot.

// principal is who a request comes from: "operator", "tenant:<id>" or
// "anonymous", spelt as a lockfile's provenance.by names it.
type principal string

const (
	principalOperator  principal = "operator"
	principalAnonymous principal = "anonymous"
)

// TenantTokenPrefix begins every tenant token: cctt.<tenant id>.<secret>,
// so the service finds the tenant's hash without trying each one.
const TenantTokenPrefix = "cctt."

// principalOf is who the request's bearer token opens. No Authorization
// header is anonymous; a token that opens nobody is 401 (answered here),
// never quietly anonymous, so a client whose token was revoked learns it
// instead of getting less than it asked for.
func (s *Service) principalOf(w http.ResponseWriter, r *http.Request) (principal, bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return principalAnonymous, true
	}
	token, ok := strings.CutPrefix(h, "Bearer ")
	if ok && token != "" {
		sum := []byte(tokenHash(token))
		if want := s.cfg.OperatorTokenSHA256; want != "" && subtle.ConstantTimeCompare(sum, []byte(want)) == 1 {
			return principalOperator, true
		}
		if rest, isTenant := strings.CutPrefix(token, TenantTokenPrefix); isTenant {
			id, _, _ := strings.Cut(rest, ".")
			if want, known := s.cfg.TenantTokens[id]; known && subtle.ConstantTimeCompare(sum, []byte(want)) == 1 {
				return principal("tenant:" + id), true
			}
		}
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="crawlcheck-issuer"`)
	s.problem(w, http.StatusUnauthorized, "unauthorized", "this token opens no operator or tenant of this issuer (Authorization: Bearer TOKEN)")
	return "", false
}

// credentialed says whether p holds a credential the operator gave: the
// operator or a tenant.
func (p principal) credentialed() bool { return p != principalAnonymous }

// fetcherFor is the fetcher that reads for who: the operator's, with its
// private ranges, for the operator alone.
func (s *Service) fetcherFor(who principal) *fetch.Fetcher {
	if who == principalOperator && s.cfg.OperatorFetch != nil {
		return s.cfg.OperatorFetch
	}
	return s.cfg.Fetch
}

// mayRead says whether who may read a document back: the operator any,
// a tenant those its own requests caused; the anonymous none, since it
// cannot be recognised again (docs/issuer.md, Trust model, F8).
func (p principal) mayRead(d store.Document) bool {
	return p == principalOperator || p.credentialed() && d.Principal == string(p)
}
