package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	client := mcp.NewClient(&mcp.Implementation{Name: "claude-code-standin", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("the wrapped entry as the client starts it: %v", err)
	}
	res, err := cs.ListTools(ctx, nil)
	cs.Close()
	if err != nil || len(res.Tools) != 1 || res.Tools[0].Name != "get_issue" {
		t.Fatalf("tools through the wrapped entry: %v %v", res, err)
	}

	uninstall := exec.Command(bin, "uninstall", "--client", "claude-code", "--config", config)
	uninstall.Env = env
	if out, err := uninstall.CombinedOutput(); err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out)
	}
	if back, _ := os.ReadFile(config); string(back) != orig {
		t.Errorf("uninstall gave back:\n%s\nwant:\n%s", back, orig)
	}
}
