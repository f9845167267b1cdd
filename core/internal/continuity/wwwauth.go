package continuity

import "strings"

// MaxResourceMetadataURL bounds the resource metadata URL kept from a
// WWW-Authenticate: a longer one is the server's noise, not a URL to show.
const MaxResourceMetadataURL = 2048

// ResourceMetadataOf is the resource_metadata parameter (RFC 9728, section
// 5.1) of a 401's or a 403's WWW-Authenticate lines: the URL a fault
// unauthorized or forbidden carries, "" when no challenge names one, when a
// line does not parse, or for a URL longer than MaxResourceMetadataURL
// bytes. It reads the lines as go-sdk's oauthex.ParseWWWAuthenticate does
// (the parser the Go host used before this rule moved here, so records
// keep the same URL for the same server): challenges split at a comma not
// followed by a `key=`, parameters `key=token` or `key="quoted"` with
// backslash escapes and keys in any case, a malformed challenge on any line
// failing the whole header, the first challenge naming the parameter
// winning. One rule for every host, instead of a parser in each
// (testdata/www-authenticate.json). The URL is the server's text: whoever
// shows it shows it through escape_text.
func ResourceMetadataOf(lines []string) string {
	found := ""
	for _, line := range lines {
		challenges, ok := splitChallenges(line)
		if !ok {
			return ""
		}
		for _, c := range challenges {
			if strings.TrimSpace(c) == "" {
				continue
			}
			params, ok := challengeParams(c)
			if !ok {
				return ""
			}
			if u := params["resource_metadata"]; found == "" && u != "" && len(u) <= MaxResourceMetadataURL {
				found = u
			}
		}
	}
	return found
}

// splitChallenges cuts one header line into its challenges: at a comma
// outside quotes that is not followed by a parameter (`key=`, no space in
// the key). A line beginning with a quote is malformed: a challenge begins
// with its scheme.
func splitChallenges(h string) ([]string, bool) {
	var out []string
	inQuotes, start := false, 0
	for i := 0; i < len(h); i++ {
		switch h[i] {
		case '"':
			if i == 0 {
				return nil, false
			}
			if h[i-1] != '\\' {
				inQuotes = !inQuotes
			}
		case ',':
			if inQuotes {
				continue
			}
			look := strings.TrimSpace(h[i+1:])
			if eq := strings.IndexByte(look, '='); eq > 0 && !strings.ContainsAny(look[:eq], " \t\n\r\v\f") {
				continue // a parameter of the same challenge
			}
			out = append(out, h[start:i])
			start = i + 1
		}
	}
	return append(out, h[start:]), true
}

// challengeParams reads one challenge's parameters, keys lower-cased (a
// later one of the same key replacing an earlier): the scheme ends at the
// first space; then `key=value` pairs separated by commas, a value a token
// or a quoted string. An empty value, an unterminated quote, a key missing
// or text between a value and the next comma is malformed.
func challengeParams(s string) (map[string]string, bool) {
	s = strings.TrimSpace(s)
	params := map[string]string{}
	sp := strings.IndexByte(s, ' ')
	if sp < 0 {
		return params, true // a scheme alone
	}
	rest := s[sp+1:]
	for rest != "" {
		keyEnd := strings.IndexByte(rest, '=')
		if keyEnd <= 0 {
			return nil, false
		}
		key := strings.TrimSpace(rest[:keyEnd])
		rest = strings.TrimSpace(rest[keyEnd+1:])
		var value string
		if strings.HasPrefix(rest, `"`) {
			rest = rest[1:]
			var b strings.Builder
			i := 0
			for ; i < len(rest); i++ {
				if rest[i] == '\\' && i+1 < len(rest) {
					i++
					b.WriteByte(rest[i])
				} else if rest[i] == '"' {
					break
				} else {
					b.WriteByte(rest[i])
				}
			}
			if i == len(rest) {
				return nil, false // unterminated
			}
			value = b.String()
			rest = strings.TrimSpace(rest[i+1:])
		} else if comma := strings.IndexByte(rest, ','); comma < 0 {
			value, rest = rest, ""
		} else {
			value, rest = strings.TrimSpace(rest[:comma]), strings.TrimSpace(rest[comma:])
		}
		if value == "" {
			return nil, false
		}
		params[strings.ToLower(key)] = value
		if strings.HasPrefix(rest, ",") {
			rest = strings.TrimSpace(rest[1:])
		} else if rest != "" {
			return nil, false
		}
	}
	return params, true
}
