// Package endpoint compares the server a lockfile approved with the server
// that answered.
//
// An endpoint is an http(s) URL or "stdio:<command line>". Two endpoints are
// the same server when their canonical forms (Canonical) are equal: every
// credential hidden, then for a URL the scheme and host lowercased (ASCII
// only), a default port dropped, an empty path made "/", the fragment
// dropped, and everything else (user info, path, query) kept byte for byte;
// for stdio the command line with surrounding white space trimmed. A
// lockfile pins that form, so one a team shares says the same server
// however each person typed its URL (issue 32, item 4). Anything more
// lenient (following redirects, resolving hosts, so localhost against
// 127.0.0.1; unescaping paths; a trailing slash dropped) would let another
// server pass as the approved one. A host that is not ASCII is not
// canonical (CheckHost): its ASCII (punycode) form is the one written.
//
// The normal form is computed here rather than with net/url, which would
// re-escape paths (and cost the wasm module a quarter of a megabyte).
package endpoint

import (
	"errors"
	"strings"
)

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
	return scheme + "://" + userinfo + asciiLower(host) + tail
}

// Canonical is the form of an endpoint a lockfile pins, a record writes and
// identity compares: credentials hidden (Redact), then the normal form
// (Normalize). Both sides of a comparison are made canonical, so a
// lockfile written before it pinned this form (HTTPS://Example.COM:443/mcp)
// still names the same server.
func Canonical(s string) string { return Normalize(Redact(s)) }

// asciiLower lowercases ASCII letters only: a byte outside ASCII is kept
// as it is, so that the form never depends on a Unicode version's case
// tables.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// errHostNotASCII is CheckHost's refusal.
var errHostNotASCII = errors.New("has a host that is not ASCII: write its ASCII (punycode, xn--…) form, the one a lockfile pins")

// CheckHost refuses an http(s) URL whose host is not ASCII or is
// percent-encoded (outside an IPv6 literal's brackets). Such a host has a
// canonical form only through IDNA's mapping tables, which the core does
// not carry: they would weigh on the wasm module every binding loads, and
// tie a pinned form to the Unicode version of a dependency, so that an
// upgrade could turn a lockfile's server into another. The person locking
// writes the ASCII form once (a browser's address bar or idn2 shows it).
// Anything that is not an http(s) URL passes.
func CheckHost(s string) error {
	host, ok := httpHost(strings.TrimSpace(s))
	if !ok {
		return nil
	}
	for i := 0; i < len(host); i++ {
		if host[i] >= 0x80 || host[i] == '%' && !strings.HasPrefix(host, "[") {
			return errHostNotASCII
		}
	}
	return nil
}

// httpHost is the host of the URL s (the brackets of an IPv6 literal kept,
// no userinfo, no port) when its scheme is http or https in any case; ok is
// false for any other scheme, or none. (Only ASCII letters are folded: no
// other rune lowercases to one of "https", so a scheme reads the same as
// under strings.ToLower.)
func httpHost(s string) (host string, ok bool) {
	scheme, rest, ok := strings.Cut(s, "://")
	if scheme = asciiLower(scheme); !ok || scheme != "http" && scheme != "https" {
		return "", false
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority := rest[:end]
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = authority[i+1:]
	}
	host, _ = splitHostPort(authority)
	return host, true
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

// Same reports whether two endpoints name the same server: their canonical
// forms, with every credential hidden (Redact), so that a lockfile that
// pins a credential in clear, written before credentials were hidden,
// still names the server that answers with it hidden.
func Same(a, b string) bool { return Canonical(a) == Canonical(b) }

// IsHTTP reports whether s is an http or https URL with a host: the
// endpoint of a streamable HTTP server.
func IsHTTP(s string) bool {
	host, ok := httpHost(s)
	return ok && host != "" && strings.TrimSpace(s) == s
}

// Stdio is the endpoint of a stdio server: "stdio:" followed by the
// command line, args joined by single spaces, each quoted as Python's
// shlex.quote does (left bare if it is non-empty and made only of ASCII
// letters, digits and @%+=:,./-_; otherwise wrapped in single quotes, with
// each ' written as '"'"'). Args are taken as given (args[0] as typed, not
// resolved on PATH), so that the same configuration names the same server
// on every machine and in every language binding.
func Stdio(args []string) string {
	b := []byte("stdio:")
	for i, a := range args {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendQuoted(b, a)
	}
	return string(b)
}

func appendQuoted(b []byte, s string) []byte {
	if s != "" && shellSafe(s) {
		return append(b, s...)
	}
	b = append(b, '\'')
	b = append(b, strings.ReplaceAll(s, "'", `'"'"'`)...)
	return append(b, '\'')
}

// shellSafe reports whether every byte of s is one shlex.quote leaves bare.
func shellSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("_@%+=:,./-", c) >= 0:
		default:
			return false
		}
	}
	return true
}
