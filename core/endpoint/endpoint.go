// Package endpoint compares the server a lockfile approved with the server
// that answered.
//
// An endpoint is an http(s) URL or "stdio:<command line>". Two endpoints are
// the same server when their normal forms are equal: for a URL the scheme and
// host lowercased, a default port dropped, an empty path made "/", the
// fragment dropped (query and path kept exactly); for stdio the command line
// with surrounding white space trimmed. Anything more lenient (following
// redirects, resolving hosts) would let another server pass as the approved
// one.
package endpoint

import (
	"net/url"
	"strings"
)

// Normalize returns the normal form of an endpoint, or the trimmed input when
// it is neither a URL with a host nor a stdio endpoint.
func Normalize(s string) string {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "stdio:"); ok {
		return "stdio:" + strings.TrimSpace(rest)
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return s
	}
	u.Scheme = strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "80" && u.Scheme == "http" || port == "443" && u.Scheme == "https" {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	u.Host = host
	if u.Path == "" && u.RawPath == "" {
		u.Path = "/"
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// Same reports whether two endpoints name the same server.
func Same(a, b string) bool { return Normalize(a) == Normalize(b) }
