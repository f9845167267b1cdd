package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pelletier/go-toml/v2"
	"gopkg.in/yaml.v3"
)

// TestInstallRemoteEntryRuns: a Claude Code config whose remote server
// sits behind a login, its token in a header that is one variable
// (${MCP_TOKEN}) and another header written out: install (the built
// binary, as a person runs it) approves it over HTTP with the headers
// expanded, wraps it with run --url, the variable as --header-env and the
// literal as --header; the entry as Claude Code then starts it (its
// environment passed on) is a gateway that reaches the server and hands
// its tool over; uninstall gives the file back byte for byte. The token
// is in neither the config nor the install's output.
func TestInstallRemoteEntryRuns(t *testing.T) {
	url := loginServer(t)
	dir := t.TempDir()
	bin := filepath.Join(t.TempDir(), "crawlcheck")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building crawlcheck: %v\n%s", err, out)
	}
	config := filepath.Join(dir, ".mcp.json")
	orig := `{
  "mcpServers": {
    "issues": {"type": "http", "url": "` + url + `", "headers": {"Authorization": "${MCP_TOKEN}", "X-Team": "crawl"}}
  }
}
`
	if err := os.WriteFile(config, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "MCP_TOKEN=Bearer "+secret, "XDG_CONFIG_HOME="+filepath.Join(dir, "xdg"))
	install := exec.Command(bin, "--now", "2026-12-07T12:00:00Z", "install", "--client", "claude-code", "--config", config, "--yes")
	install.Env = env
	out, err := install.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "issues: approved 1 tool(s)") {
		t.Fatalf("install: %v\n%s", err, out)
	}
	data, _ := os.ReadFile(config)
	if strings.Contains(string(data)+string(out), secret) {
		t.Error("the config or install's output holds the token")
	}
	var f struct {
		MCPServers map[string]struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("the installed config: %v\n%s", err, data)
	}
	e := f.MCPServers["issues"]
	if e.Type != "stdio" || e.Command != bin || !slices.Contains(e.Args, "--url") ||
		!slices.Contains(e.Args, "Authorization=MCP_TOKEN") || !slices.Contains(e.Args, "X-Team: crawl") {
		t.Fatalf("the wrapped entry: %+v", e)
	}

	cmd := exec.Command(e.Command, e.Args...)
	cmd.Env = env
	handsOverGetIssue(t, "claude-code", cmd)

	uninstall := exec.Command(bin, "uninstall", "--client", "claude-code", "--config", config)
	uninstall.Env = env
	if out, err := uninstall.CombinedOutput(); err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out)
	}
	if back, _ := os.ReadFile(config); string(back) != orig {
		t.Errorf("uninstall gave back:\n%s\nwant:\n%s", back, orig)
	}
}

// TestInstallRemoteEntriesOfCodexAndContinue: the same flow for the TOML
// and YAML clients. Codex's entry holds the bare token in the variable of
// bearer_token_env_var (which becomes --bearer-env: "Bearer " and the
// token), a literal http_headers and an env_http_headers; Continue's a
// literal Authorization in requestOptions.headers. install approves each
// over HTTP and wraps it in place; installing again changes nothing; the
// wrapped entry, started with only the environment Codex gives a server
// (its default variables and those env_vars names), is a gateway that
// reaches the server; ci --config reads the wrapped entry as the server
// and finds it unchanged against its lockfile; uninstall gives the bytes
// back. The token is in neither Codex's config nor any output.
func TestInstallRemoteEntriesOfCodexAndContinue(t *testing.T) {
	url := loginServer(t)
	bin := filepath.Join(t.TempDir(), "crawlcheck")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building crawlcheck: %v\n%s", err, out)
	}
	cases := []struct {
		client, file, orig string
		// argv reads the wrapped entry's command line, and the variables
		// the client passes the server it starts.
		argv      func(t *testing.T, data []byte) (args []string, vars []string)
		wantFlags []string
		secretOK  bool
	}{
		{"codex", "config.toml", `# Codex
[mcp_servers.issues]
url = "` + url + `" # the tracker
bearer_token_env_var = "MCP_TOKEN"
http_headers = { "X-Team" = "crawl" }
env_http_headers = { "X-Region" = "MCP_REGION" } # from the environment
tool_timeout_sec = 30
`, func(t *testing.T, data []byte) ([]string, []string) {
			var doc struct {
				MCPServers map[string]struct {
					Command string   `toml:"command"`
					Args    []string `toml:"args"`
					EnvVars []string `toml:"env_vars"`
					URL     string   `toml:"url"`
				} `toml:"mcp_servers"`
			}
			if err := toml.Unmarshal(data, &doc); err != nil {
				t.Fatalf("the installed config: %v\n%s", err, data)
			}
			e := doc.MCPServers["issues"]
			if e.URL != "" || e.Command != bin || !slices.Equal(e.EnvVars, []string{"MCP_REGION", "MCP_TOKEN"}) {
				t.Fatalf("the wrapped entry: %+v\n%s", e, data)
			}
			return append([]string{e.Command}, e.Args...), e.EnvVars
		}, []string{"--bearer-env MCP_TOKEN", "--header X-Team: crawl", "--header-env X-Region=MCP_REGION"}, false},
		{"continue", "config.yaml", `name: a
version: 1.0.0
schema: v1
mcpServers:
  - name: issues # the tracker
    type: streamable-http
    url: ` + url + `
    requestOptions:
      headers:
        Authorization: Bearer ` + secret + `
`, func(t *testing.T, data []byte) ([]string, []string) {
			var doc struct {
				MCPServers []struct {
					Type    string   `yaml:"type"`
					Command string   `yaml:"command"`
					Args    []string `yaml:"args"`
				} `yaml:"mcpServers"`
			}
			if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.MCPServers) != 1 {
				t.Fatalf("the installed config: %v\n%s", err, data)
			}
			e := doc.MCPServers[0]
			if e.Type != "stdio" || e.Command != bin {
				t.Fatalf("the wrapped entry: %+v\n%s", e, data)
			}
			return append([]string{e.Command}, e.Args...), nil
		}, []string{"--header Authorization: Bearer " + secret}, true},
	}
	for _, c := range cases {
		t.Run(c.client, func(t *testing.T) {
			dir := t.TempDir()
			config := filepath.Join(dir, c.file)
			if err := os.WriteFile(config, []byte(c.orig), 0o644); err != nil {
				t.Fatal(err)
			}
			home := filepath.Join(dir, "home")
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "MCP_TOKEN=" + secret, "MCP_REGION=eu"}
			crawlcheck := func(args ...string) (string, error) {
				cmd := exec.Command(bin, args...)
				cmd.Env = env
				out, err := cmd.CombinedOutput()
				if !c.secretOK && strings.Contains(string(out), secret) {
					t.Errorf("crawlcheck %s printed the token", args[0])
				}
				return string(out), err
			}
			out, err := crawlcheck("--now", "2026-12-07T12:00:00Z", "install", "--client", c.client, "--config", config, "--yes")
			if err != nil || !strings.Contains(out, "issues: approved 1 tool(s)") {
				t.Fatalf("install: %v\n%s", err, out)
			}
			data, _ := os.ReadFile(config)
			if !c.secretOK && strings.Contains(string(data), secret) {
				t.Error("the config holds the token")
			}
			argv, vars := c.argv(t, data)
			if !strings.Contains(string(data), "# the tracker") {
				t.Errorf("a comment is gone:\n%s", data)
			}
			joined := strings.Join(argv, " ")
			for _, w := range append([]string{"run --lock ", "--url " + url}, c.wantFlags...) {
				if !strings.Contains(joined, w) {
					t.Errorf("the wrapped command line %q lacks %q", joined, w)
				}
			}
			if out, err := crawlcheck("install", "--client", c.client, "--config", config, "--yes"); err != nil || !strings.Contains(out, "issues: already installed") {
				t.Errorf("install again: %v\n%s", err, out)
			}
			if again, _ := os.ReadFile(config); string(again) != string(data) {
				t.Error("installing twice changed the config")
			}

			// The entry as the client starts it: Codex gives a server
			// its default variables (PATH, HOME, …) and those env_vars
			// names, no others.
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
			for _, v := range vars {
				for _, kv := range env {
					if strings.HasPrefix(kv, v+"=") {
						cmd.Env = append(cmd.Env, kv)
					}
				}
			}
			handsOverGetIssue(t, c.client, cmd)

			out, err = crawlcheck("ci", "--config", config)
			if err != nil || !regexp.MustCompile(`(?m)^issues +connect +unchanged$`).MatchString(out) {
				t.Errorf("ci --config of the installed config: %v\n%s", err, out)
			}

			if out, err := crawlcheck("uninstall", "--client", c.client, "--config", config); err != nil {
				t.Fatalf("uninstall: %v\n%s", err, out)
			}
			if back, _ := os.ReadFile(config); string(back) != c.orig {
				t.Errorf("uninstall gave back:\n%s\nwant:\n%s", back, c.orig)
			}
		})
	}
}

// handsOverGetIssue starts the wrapped entry's command as the client
// does (a stand-in named after it) and fails unless it hands over
// get_issue alone, the tool of the server behind the login.
func handsOverGetIssue(t *testing.T, client string, cmd *exec.Cmd) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: client + "-standin", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("the wrapped entry as the client starts it: %v", err)
	}
	res, err := cs.ListTools(ctx, nil)
	cs.Close()
	if err != nil || len(res.Tools) != 1 || res.Tools[0].Name != "get_issue" {
		t.Fatalf("tools through the wrapped entry: %v %v", res, err)
	}
}
