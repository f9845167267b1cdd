package endpoint

import "testing"

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"https://mcp.example.com/mcp":          "https://mcp.example.com/mcp",
		"HTTPS://MCP.Example.COM:443/mcp#frag": "https://mcp.example.com/mcp",
		"  https://mcp.example.com/mcp\n":      "https://mcp.example.com/mcp",
		"http://x:80":                          "http://x/",
		"http://x:443/":                        "http://x:443/",
		"https://x:80/":                        "https://x:80/",
		"https://x:8443/a?b=1&c=2":             "https://x:8443/a?b=1&c=2",
		"https://x/MCP":                        "https://x/MCP",
		"https://x/a%2Fb":                      "https://x/a%2Fb",
		"https://[::1]:443/mcp":                "https://[::1]/mcp",
		"https://[::1]:8080/mcp":               "https://[::1]:8080/mcp",
		"https://user@x/":                      "https://user@x/",
		"stdio:  npx -y server ":               "stdio:npx -y server",
		" stdio:node server.js":                "stdio:node server.js",
		"stdio:":                               "stdio:",
		"not a url":                            "not a url",
		"/relative/path":                       "/relative/path",
		"":                                     "",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSame(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"https://mcp.example.com/mcp", "https://MCP.example.com:443/mcp#top", true},
		{"https://mcp.example.com", "https://mcp.example.com/", true},
		{"stdio:npx server", "stdio: npx server ", true},
		{"https://mcp.example.com/mcp", "http://mcp.example.com/mcp", false},
		{"https://mcp.example.com/mcp", "https://mcp.example.net/mcp", false},
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp/", false},
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp?x=1", false},
		{"https://mcp.example.com/mcp", "https://mcp.example.com:8443/mcp", false},
		{"https://mcp.example.com/mcp", "https://evil@mcp.example.com/mcp", false},
		{"stdio:npx server", "stdio:npx  server", false},
		{"stdio:npx server", "npx server", false},
	} {
		if got := Same(c.a, c.b); got != c.same {
			t.Errorf("Same(%q, %q) = %v", c.a, c.b, got)
		}
		if Same(c.b, c.a) != c.same {
			t.Errorf("Same is not symmetric for %q, %q", c.a, c.b)
		}
	}
}

// TestSameServer pins what counts as the same server (issue 32, item 4):
// no name is resolved, no path is rewritten.
func TestSameServer(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"HTTPS://Example.COM:443/mcp", "https://example.com/mcp", true},
		{"HTTP://LOCALHOST:80/mcp", "http://localhost/mcp", true},
		{"http://localhost:3000/mcp", "http://127.0.0.1:3000/mcp", false},
		{"http://localhost:3000/mcp", "http://[::1]:3000/mcp", false},
		{"https://example.com/mcp", "https://example.com/mcp/", false},
		{"https://example.com/a%2Fb", "https://example.com/a%2fb", false},
		{"https://example.com/a%2Fb", "https://example.com/a/b", false},
		{"https://example.com/MCP", "https://example.com/mcp", false},
		{"https://example.com./mcp", "https://example.com/mcp", false},
		{"https://xn--bcher-kva.example/mcp", "https://bücher.example/mcp", false},
	} {
		if got := Same(c.a, c.b); got != c.same {
			t.Errorf("Same(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"HTTPS://Example.COM:443/mcp#top":            "https://example.com/mcp",
		"https://a:pw@Example.COM/mcp?api_key=k&x=Y": "https://a:REDACTED@example.com/mcp?api_key=REDACTED&x=Y",
		"https://BÜCHER.example/mcp":                 "https://bÜcher.example/mcp",
		"stdio:srv --token abc":                      "stdio:srv --token REDACTED",
	} {
		if got := Canonical(in); got != want {
			t.Errorf("Canonical(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheckHost(t *testing.T) {
	for in, refused := range map[string]bool{
		"https://xn--bcher-kva.example/mcp": false,
		"https://bücher.example/mcp":        true,
		"HTTPS://user@Bücher.example:8443/": true,
		"https://b%C3%BCcher.example/mcp":   true,
		"https://example.com/b%C3%BCcher":   false,
		"https://[fe80::1%25eth0]:8080/mcp": false,
		"stdio:bücher":                      false,
		"not a url":                         false,
	} {
		if err := CheckHost(in); (err != nil) != refused {
			t.Errorf("CheckHost(%q) = %v, want refused %v", in, err, refused)
		}
	}
}
