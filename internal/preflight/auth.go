package preflight

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/crawlcheck/verifier/internal/coreops"
)

// ResourceMetadataOf is the resource_metadata parameter of a 401's or a
// 403's WWW-Authenticate lines (RFC 9728, section 5.1): the URL of the
// server's protected resource metadata, "" when none is kept. How the
// server's header is read is the core's rule (its resource_metadata op,
// the same for every host); this only hands it the lines. It is the
// server's text: whoever shows it shows it escaped (the core does, in a
// record's detail).
func ResourceMetadataOf(h http.Header) string {
	lines := h.Values("Www-Authenticate")
	if lines == nil {
		lines = []string{}
	}
	// The request is the host's own and always reads: on an error, "".
	out, _ := coreops.ResourceMetadata(coreops.ResourceMetadataRequest{WwwAuthenticate: lines})
	return out.ResourceMetadata
}

// HeaderTransport returns a RoundTripper that adds headers (credentials:
// an Authorization, an API key) to each request to the origin of endpoint
// (scheme, host and port), and to no other: a redirect or an SSE message
// endpoint elsewhere never receives them. Each request is cloned, never
// changed in place. next nil means http.DefaultTransport.
func HeaderTransport(next http.RoundTripper, endpoint string, headers http.Header) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	origin := ""
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
		origin = strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
	}
	return &headerTransport{next: next, origin: origin, headers: headers.Clone()}
}

type headerTransport struct {
	next    http.RoundTripper
	origin  string
	headers http.Header
}

func (h *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.origin == "" || strings.ToLower(r.URL.Scheme)+"://"+strings.ToLower(r.URL.Host) != h.origin {
		return h.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for name, values := range h.headers {
		r.Header[name] = slices.Clone(values)
	}
	return h.next.RoundTrip(r)
}
