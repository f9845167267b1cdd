package endpoint

import "strings"

// Secrets in an endpoint (issue 34, item 10). Servers are documented with
// credentials on their command line (Sentry's and Supabase's
// --access-token=…, docker run -e GITHUB_PERSONAL_ACCESS_TOKEN=…,
// mcp-remote's --header "Authorization: Bearer …") or in their URL
// (?api_key=…, user:password@). An endpoint is written into lockfiles,
// records and logs that are shared and committed, so what looks like a
// credential is never written in clear: its value is replaced by Hidden.
//
// Not a digest: a lockfile is public, and the digest of a short password
// is found offline by guessing; and the credential names an account, not
// the server, so a rotated token must not turn into
// server_identity_mismatch. The identity of a server is its program and
// its other arguments (or its URL without the credential). Identity is
// compared on the redacted forms, so a lockfile written before this rule,
// which pins the credential in clear, still matches the same server, and a
// record never repeats it (its approved_url is redacted too).
//
// What looks like a credential:
//   - a flag whose name has a credential word (CredentialName):
//     --access-token=V, --api-key V (the next argument, unless it is a
//     flag itself), -password=V;
//   - an assignment NAME=V (docker's -e, env) whose NAME has one;
//   - a header "Name: V" whose name has one (Authorization, X-Api-Key,
//     Cookie), and any argument starting "Bearer " or "Basic " (the
//     scheme is kept, the credential hidden);
//   - in a URL (the endpoint's, or an argument's: mcp-remote URL), the
//     password of its user info and the value of every query parameter
//     whose name has a credential word.

// Hidden is what a credential's value is written as.
const Hidden = "REDACTED"

// credentialWords are the words of a name that make it a credential's: a
// word of the name (split at anything not a letter or digit, and at a
// lower-to-upper case step) equal to one of these, or ending in one of the
// suffixes.
var (
	credentialWords    = []string{"token", "secret", "password", "passwd", "pwd", "passphrase", "auth", "authorization", "credential", "credentials", "bearer", "cookie", "pat", "key", "apikey", "sessionid"}
	credentialSuffixes = []string{"token", "secret", "password", "apikey", "accesskey", "secretkey", "privatekey", "auth"}
)

// CredentialName reports whether a flag, variable, header or parameter
// name looks like a credential's: ACCESS_TOKEN, api-key, apiKey,
// X-Api-Key, Authorization, DB_PASSWORD, client_secret. Leading dashes are
// ignored.
func CredentialName(name string) bool {
	name = strings.TrimLeft(name, "-")
	for _, w := range nameWords(name) {
		for _, c := range credentialWords {
			if w == c {
				return true
			}
		}
		for _, s := range credentialSuffixes {
			if len(w) > len(s) && strings.HasSuffix(w, s) {
				return true
			}
		}
	}
	return false
}

// nameWords splits a name into lower-case words: at every byte that is not
// an ASCII letter or digit, and where a lower-case letter is followed by an
// upper-case one (apiKey: api, key).
func nameWords(name string) []string {
	var words []string
	var w []byte
	flush := func() {
		if len(w) > 0 {
			words = append(words, strings.ToLower(string(w)))
			w = w[:0]
		}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		lower, upper, digit := c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9'
		switch {
		case !lower && !upper && !digit:
			flush()
			continue
		case upper && i > 0 && name[i-1] >= 'a' && name[i-1] <= 'z':
			flush()
		}
		w = append(w, c)
	}
	flush()
	return words
}

// RedactArgs returns a command line with the values of what looks like a
// credential replaced by Hidden, and whether anything was.
func RedactArgs(argv []string) ([]string, bool) {
	out := make([]string, len(argv))
	changed := false
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		out[i] = a
		r := redactArg(a)
		if r != a {
			out[i], changed = r, true
			continue
		}
		// --api-key VALUE: the next argument is the value, unless it is
		// a flag itself.
		// A --no-… flag is a switch, not a credential's name.
		if i > 0 && strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--no-") && !strings.Contains(a, "=") && CredentialName(a) &&
			i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
			out[i+1] = Hidden
			changed = true
			i++
		}
	}
	return out, changed
}

// redactArg redacts one argument on its own: --flag=V, NAME=V, "Name: V",
// "Bearer V".
func redactArg(a string) string {
	if IsHTTP(a) {
		// mcp-remote https://…?api_key=…
		return RedactURL(a)
	}
	for _, scheme := range []string{"Bearer ", "Basic ", "bearer ", "basic "} {
		if strings.HasPrefix(a, scheme) && len(a) > len(scheme) {
			return a[:len(scheme)] + Hidden
		}
	}
	if name, _, ok := strings.Cut(a, "="); ok && name != "" && !strings.ContainsAny(name, " :/") && CredentialName(name) {
		return name + "=" + Hidden
	}
	if name, value, ok := strings.Cut(a, ":"); ok && name != "" && !strings.ContainsAny(name, " =/") && strings.HasPrefix(value, " ") && CredentialName(name) {
		return name + ": " + redactScheme(strings.TrimLeft(value, " "))
	}
	return a
}

// redactScheme hides a header's value, keeping an authorization scheme.
func redactScheme(v string) string {
	if scheme, _, ok := strings.Cut(v, " "); ok && scheme != "" {
		return scheme + " " + Hidden
	}
	return Hidden
}

// RedactURL returns a URL with the password of its user info and the
// values of credential-named query parameters replaced by Hidden.
func RedactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		if user, _, hasPass := strings.Cut(authority[:i], ":"); hasPass {
			authority = user + ":" + Hidden + authority[i:]
		}
	}
	path, query, hasQuery := strings.Cut(tail, "?")
	if hasQuery {
		query, frag, hasFrag := strings.Cut(query, "#")
		params := strings.Split(query, "&")
		for i, p := range params {
			if name, _, ok := strings.Cut(p, "="); ok && CredentialName(name) {
				params[i] = name + "=" + Hidden
			}
		}
		tail = path + "?" + strings.Join(params, "&")
		if hasFrag {
			tail += "#" + frag
		}
	}
	return scheme + "://" + authority + tail
}

// Redact returns a written endpoint with every credential hidden: a stdio
// command line (read as a command line, redacted, written again) or a URL.
// Anything else is returned as it is.
func Redact(ep string) string {
	if strings.HasPrefix(ep, "stdio:") {
		_, argv, err := Split(ep)
		if err != nil {
			return ep
		}
		if red, changed := RedactArgs(argv); changed {
			return Stdio(red)
		}
		return ep
	}
	if IsHTTP(strings.TrimSpace(ep)) {
		return RedactURL(ep)
	}
	return ep
}
