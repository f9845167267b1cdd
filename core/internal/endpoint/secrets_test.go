package endpoint

import (
	"slices"
	"testing"
)

func TestCredentialName(t *testing.T) {
	for _, n := range []string{"--access-token", "--api-key", "apiKey", "X-Api-Key", "Authorization", "DB_PASSWORD", "client_secret",
		"GITHUB_PERSONAL_ACCESS_TOKEN", "--pat", "SENTRY_AUTH", "--authToken", "passphrase", "Cookie"} {
		if !CredentialName(n) {
			t.Errorf("%q is not taken for a credential's name", n)
		}
	}
	for _, n := range []string{"--port", "--host", "--keyboard", "--read-only", "--monkey-patch", "--tokens-per-minute", "--project-ref", "-y", ""} {
		if CredentialName(n) {
			t.Errorf("%q is taken for a credential's name", n)
		}
	}
}

func TestRedactArgs(t *testing.T) {
	cases := []struct{ in, want []string }{
		{[]string{"srv", "--token", "abc", "--port", "1"}, []string{"srv", "--token", Hidden, "--port", "1"}},
		{[]string{"srv", "--token", "--verbose"}, []string{"srv", "--token", "--verbose"}},
		{[]string{"srv", "--no-auth", "/data"}, []string{"srv", "--no-auth", "/data"}},
		{[]string{"--token", "abc"}, []string{"--token", "abc"}}, // the program itself names no flag
		{[]string{"docker", "run", "-e", "API_KEY=x", "-e", "REGION=eu"}, []string{"docker", "run", "-e", "API_KEY=" + Hidden, "-e", "REGION=eu"}},
		{[]string{"mcp-remote", "https://x.example/mcp", "--header", "Authorization:Bearer t"}, []string{"mcp-remote", "https://x.example/mcp", "--header", "Authorization:Bearer t"}},
		{[]string{"mcp-remote", "--header", "X-Api-Key: k"}, []string{"mcp-remote", "--header", "X-Api-Key: " + Hidden}},
		{[]string{"srv", "https://a.example/?token=1&x=2"}, []string{"srv", "https://a.example/?token=" + Hidden + "&x=2"}},
	}
	for _, c := range cases {
		got, changed := RedactArgs(c.in)
		if !slices.Equal(got, c.want) || changed != !slices.Equal(c.in, c.want) {
			t.Errorf("RedactArgs(%q) = %q, %v; want %q", c.in, got, changed, c.want)
		}
	}
}

func TestSameHidesCredentials(t *testing.T) {
	if !Same("stdio:srv --access-token=old", "stdio:srv --access-token=REDACTED") || !Same("stdio:srv --access-token=old", "stdio:srv --access-token=new") {
		t.Error("a credential's value decides an identity")
	}
	if Same("stdio:srv --access-token=a --port 1", "stdio:srv --access-token=a --port 2") {
		t.Error("another argument does not")
	}
	if !Same("https://u:p1@h.example/mcp?api_key=1", "https://u:p2@h.example/mcp?api_key=2") || Same("https://u:p@h.example/mcp", "https://v:p@h.example/mcp") {
		t.Error("a URL's credentials, and only they, are hidden")
	}
}
