package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// registryServers are real servers from the npm registry and PyPI that a
// new user tried (issue 34), each listing its tools without credentials or
// network: each is locked live, its tool list written with crawlcheck
// tools, and both re-checked, live and offline from the file, with the
// same tools_sha256. @azure/mcp 2.0.5 with --mode all prints "No X display
// available…" on stdout before its answer: its records count the stray
// line. make test-registry installs them (at the versions
// hosttest/registry pins: package-lock.json for npm, requirements.txt for
// the venv) into $(BUILD)/registry-servers and runs this test there.
var registryServers = []struct {
	name, command string
	stray         bool // prints a line that is no JSON-RPC message
	// capture is the server's list in testdata/scan-real, taken at the
	// same version by another client: the lockfile must pin its tools too.
	capture string
}{
	{"@azure/mcp@2.0.5", "node_modules/.bin/azmcp server start --mode all", true, ""},
	{"@upstash/context7-mcp@4.1.1", "node_modules/.bin/context7-mcp", false, "context7.json"},
	{"@playwright/mcp@0.0.86", "node_modules/.bin/playwright-mcp", false, "playwright.json"},
	{"@modelcontextprotocol/server-github@2025.4.8", "node_modules/.bin/mcp-server-github", false, "github.json"},
	{"PyPI duckduckgo-mcp-server==0.7.0", "venv/bin/duckduckgo-mcp-server", false, "duckduckgo.json"},
}

func TestRegistryServers(t *testing.T) {
	dir := os.Getenv("CRAWLCHECK_REGISTRY_SERVERS")
	if dir == "" {
		t.Skip("make test-registry installs the registry servers and runs this test (CRAWLCHECK_REGISTRY_SERVERS)")
	}
	bin := filepath.Join(t.TempDir(), "crawlcheck")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building crawlcheck: %v\n%s", err, out)
	}
	run := func(t *testing.T, want int, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--timeout", "120s", "--now", "2026-12-07T12:00:00Z"}, args...)...)
		cmd.Dir = dir
		var stderr []byte
		out, err := cmd.Output()
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		if code := cmd.ProcessState.ExitCode(); code != want {
			t.Fatalf("crawlcheck %v: exit %d, want %d (%v)\n%s", args, code, want, err, stderr)
		}
		return out
	}
	for _, s := range registryServers {
		t.Run(s.name, func(t *testing.T) {
			tmp := t.TempDir()
			lock, tools := filepath.Join(tmp, "lock.json"), filepath.Join(tmp, "tools.json")
			run(t, 0, "lock", "--server", s.command, "-o", lock)
			run(t, 0, "tools", "--server", s.command, "-o", tools)
			var pinned struct {
				ToolsSHA256 string `json:"tools_sha256"`
				Count       int    `json:"count"`
			}
			raw, err := os.ReadFile(lock)
			if err != nil || json.Unmarshal(raw, &pinned) != nil || pinned.Count == 0 {
				t.Fatalf("the lockfile: %v, %+v", err, pinned)
			}
			type record struct {
				Effect   string `json:"effect"`
				Observed struct {
					ToolsSHA256 string `json:"tools_sha256"`
					StrayLines  int    `json:"stray_lines"`
				} `json:"observed"`
			}
			sources := [][]string{{"--server", s.command}, {"--tools", tools}}
			if s.capture != "" {
				// The capture's tools member is the list as the server sent it.
				var captured struct {
					Tools json.RawMessage `json:"tools"`
				}
				raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "scan-real", s.capture))
				if err != nil || json.Unmarshal(raw, &captured) != nil || len(captured.Tools) == 0 {
					t.Fatalf("the capture %s: %v", s.capture, err)
				}
				file := filepath.Join(tmp, "captured.json")
				if err := os.WriteFile(file, append(append([]byte(`{"tools":`), captured.Tools...), '}'), 0o644); err != nil {
					t.Fatal(err)
				}
				sources = append(sources, []string{"--tools", file})
			}
			for _, source := range sources {
				var rec record
				out := run(t, 0, append([]string{"check", "--lock", lock, "--json"}, source...)...)
				if err := json.Unmarshal(out, &rec); err != nil {
					t.Fatalf("check %v: %v\n%s", source, err, out)
				}
				if rec.Effect != "proceed" || rec.Observed.ToolsSHA256 != pinned.ToolsSHA256 {
					t.Fatalf("check %v: effect %s, tools_sha256 %s; want proceed, %s", source, rec.Effect, rec.Observed.ToolsSHA256, pinned.ToolsSHA256)
				}
				if live := source[0] == "--server"; live && s.stray != (rec.Observed.StrayLines > 0) {
					t.Fatalf("check %v: %d stray lines, want them: %v", source, rec.Observed.StrayLines, s.stray)
				}
			}
		})
	}
}
