// Package fetch reads a user-given MCP endpoint for the issuer (GET
// /api/v1/mcp/lock?url=, {lock, url} checks and decisions) as safely as a
// service that dials where strangers point it must:
//
//   - The dialer's Control checks the address actually dialled, after DNS
//     (code.dny.dev/ssrf): loopback, private, link-local, cloud metadata,
//     NAT64, documentation and every other special-purpose range are
//     refused unless the operator allowlisted the prefix. Because the check
//     is at connect time, DNS rebinding and redirects are covered too: no
//     name is trusted, only the address a connection goes to.
//   - https only, and http only when the operator allows it.
//   - A redirect is followed only to the same origin (scheme, host, port),
//     at most five times.
//   - No cookie jar, no proxy from the environment, no credentials: the
//     request carries nothing of the service's own.
//   - Every answer bounded (MaxAnswer), every page counted (PageCap), and
//     the whole reading under one deadline (the caller's context).
package fetch

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"code.dny.dev/ssrf"

	"github.com/crawlcheck/verifier/core"
)

// Policy is what the operator allows.
type Policy struct {
	AllowHTTP    bool           // plain http endpoints (--allow-http)
	AllowPrivate []netip.Prefix // prefixes dialled despite the deny list (--allow-private)
	MaxAnswer    int64          // bytes of one HTTP answer; default 16 MiB
	PageCap      int            // tools/list pages read; default 100
	// PagesBytes bounds a reading's tools/list pages together; default the
	// core's pages_bytes (core.MaxPagesBytes, 64 MiB), past which no check
	// could carry them (the fault pages_over_cap).
	PagesBytes int64
}

// ErrRefused is an endpoint the policy does not let the service read.
var ErrRefused = errors.New("fetch: refused")

// Fetcher reads MCP endpoints under a policy.
type Fetcher struct {
	policy Policy
	hc     *http.Client
}

// New makes a fetcher.
func New(p Policy) *Fetcher {
	if p.MaxAnswer == 0 {
		p.MaxAnswer = 16 << 20
	}
	if p.PageCap == 0 {
		p.PageCap = 100
	}
	if p.PagesBytes == 0 {
		p.PagesBytes = core.MaxPagesBytes
	}
	var v4, v6 []netip.Prefix
	for _, pr := range p.AllowPrivate {
		if pr.Addr().Is4() {
			v4 = append(v4, pr)
		} else {
			v6 = append(v6, pr)
		}
	}
	g := ssrf.New(ssrf.WithAnyPort(), ssrf.WithAllowedV4Prefixes(v4...), ssrf.WithAllowedV6Prefixes(v6...))
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: g.Safe}
	tr := &http.Transport{
		Proxy:                  nil, // never the environment's proxy: it would see, and could redirect, what we read
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  20 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		DisableCompression:     true, // bounds are on the bytes sent, not on what they inflate to
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        30 * time.Second,
	}
	f := &Fetcher{policy: p}
	f.hc = &http.Client{Transport: tr, CheckRedirect: f.redirect}
	return f
}

// Check says whether a URL may be read at all (scheme and form); the
// address is checked when it is dialled.
func (f *Fetcher) Check(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrRefused, err)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && f.policy.AllowHTTP:
	case u.Scheme == "http":
		return fmt.Errorf("%w: %s is plain http (the operator allows https only)", ErrRefused, u.Redacted())
	default:
		return fmt.Errorf("%w: scheme %q (https only)", ErrRefused, u.Scheme)
	}
	if u.Host == "" || u.User != nil || u.Fragment != "" {
		return fmt.Errorf("%w: an endpoint is scheme://host[:port]/path with no credentials or fragment", ErrRefused)
	}
	return nil
}

func (f *Fetcher) redirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return fmt.Errorf("%w: more than 5 redirects", ErrRefused)
	}
	if req.URL.User != nil {
		// net/http would send the userinfo as Basic auth, and the endpoint
		// that answered (credentials included) would be signed into
		// server.url (issue 37, F16).
		return fmt.Errorf("%w: a redirect to a URL with credentials", ErrRefused)
	}
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return fmt.Errorf("%w: a redirect to another origin (%s)", ErrRefused, req.URL.Scheme+"://"+req.URL.Host)
	}
	return nil
}

// Refused says whether a reading failed because the policy refused the
// endpoint (scheme, address or redirect) rather than because it did not answer.
func Refused(err error) bool {
	return errors.Is(err, ErrRefused) || errors.Is(err, ssrf.ErrProhibitedIP) || errors.Is(err, ssrf.ErrProhibitedNetwork) ||
		errors.Is(err, ssrf.ErrProhibitedPort) || errors.Is(err, ssrf.ErrInvalidHostPort)
}

// refusal is the error a Reading is Refused with: the policy's own
// refusals as they are (they name only the URL the client gave, or the
// origin a redirect named), and a refused address by its class alone. The
// SSRF guard's error names the address a name resolved to, and telling a
// stranger which private address a name has, or that one answers, is the
// oracle F12 found: the client learns that the address is in a range this
// issuer does not read, never which.
func refusal(err error) error {
	switch {
	case errors.Is(err, ssrf.ErrProhibitedPort):
		return fmt.Errorf("%w: the endpoint's port is one this issuer does not read", ErrRefused)
	case errors.Is(err, ssrf.ErrProhibitedIP), errors.Is(err, ssrf.ErrProhibitedNetwork), errors.Is(err, ssrf.ErrInvalidHostPort):
		return fmt.Errorf("%w: the endpoint's address is in a range this issuer does not read (loopback, private, link-local or another special-purpose range)", ErrRefused)
	}
	return err
}
