package preflight

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// maxMetadataURL bounds the resource metadata URL kept from a
// WWW-Authenticate: a longer one is the server's noise, not a URL to show.
const maxMetadataURL = 2048

// ResourceMetadataOf is the resource_metadata parameter of a 401's or a
// 403's WWW-Authenticate challenges (RFC 9728, section 5.1), read by the
// MCP SDK's own parser (oauthex): the URL of the server's protected
// resource metadata, "" when no challenge names one, when the field does
// not parse, or for a URL longer than 2048 bytes. It is the server's text:
// whoever shows it shows it escaped (the core does, in a record's detail).
func ResourceMetadataOf(h http.Header) string {
	challenges, err := oauthex.ParseWWWAuthenticate(h.Values("Www-Authenticate"))
	if err != nil {
		return ""
	}
	for _, c := range challenges {
		if u := c.Params["resource_metadata"]; u != "" && len(u) <= maxMetadataURL {
			return u
		}
	}
	return ""
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
