// Package endpoint compares the server a lockfile approved with the server
// that answered.
//
// An endpoint is an http(s) URL or "stdio:<command line>". Two endpoints are
// the same server when their normal forms are equal: for a URL the scheme and
// host lowercased, a default port dropped, an empty path made "/", the
// fragment dropped, and everything else (user info, path, query) kept byte
// for byte; for stdio the command line with surrounding white space trimmed.
// Anything more lenient (following redirects, resolving hosts, unescaping
// paths) would let another server pass as the approved one.
//
// The normal form is computed here rather than with net/url, which would
// re-escape paths (and cost the wasm module a quarter of a megabyte).
package endpoint

import "strings"

// Normalize returns the normal form of an endpoint, or the trimmed input when
// it is neither a URL with a host nor a stdio endpoint.
func Normalize(s string) string {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "stdio:"); ok {
		return "stdio:" + strings.TrimSpace(rest)
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || !isScheme(scheme) {
		return s
	}
	scheme = strings.ToLower(scheme)
	rest, _, _ = strings.Cut(rest, "#")
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	userinfo := ""
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		userinfo, authority = authority[:i+1], authority[i+1:]
	}
	host, port := splitHostPort(authority)
	if host == "" {
		return s
	}
	if port == "80" && scheme == "http" || port == "443" && scheme == "https" {
		port = ""
	}
	if port != "" {
		host += ":" + port
	}
	if !strings.HasPrefix(tail, "/") {
		tail = "/" + tail
	}
	return scheme + "://" + userinfo + strings.ToLower(host) + tail
}

// splitHostPort splits "host:port" or "[v6]:port"; the brackets stay on the host.
func splitHostPort(a string) (host, port string) {
	if strings.HasPrefix(a, "[") {
		i := strings.IndexByte(a, ']')
		if i < 0 {
			return a, ""
		}
		host, rest := a[:i+1], a[i+1:]
		if p, ok := strings.CutPrefix(rest, ":"); ok {
			return host, p
		}
		return host, ""
	}
	if i := strings.LastIndexByte(a, ':'); i >= 0 {
		return a[:i], a[i+1:]
	}
	return a, ""
}

// isScheme reports whether s is an RFC 3986 scheme: a letter, then letters,
// digits, '+', '-' or '.'.
func isScheme(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		switch {
		case c >= 'a' && c <= 'z':
		case i > 0 && (s[i] >= '0' && s[i] <= '9' || s[i] == '+' || s[i] == '-' || s[i] == '.'):
		default:
			return false
		}
	}
	return true
}

// Same reports whether two endpoints name the same server.
func Same(a, b string) bool { return Normalize(a) == Normalize(b) }
