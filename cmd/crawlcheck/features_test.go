package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// everythingServer is the command line of server-everything as the
// repository pins it (bindings/js/package.json; make test's js-deps
// installs it with npm ci): a server nobody here wrote, with prompts,
// resources and resource templates.
func everythingServer(t *testing.T) string {
	t.Helper()
	script, _ := filepath.Abs(filepath.Join("..", "..", "bindings", "js", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(script); serr != nil || err != nil {
		if os.Getenv("CRAWLCHECK_NEED_SERVERS") != "" {
			t.Fatalf("server-everything is not installed (make js-deps): %v %v", serr, err)
		}
		t.Skip("server-everything is not installed (make js-deps)")
	}
	return node + " " + script + " stdio"
}

// TestEverythingFeatures: crawlcheck lock pins server-everything's
// prompts, resources and resource templates, and check compares them: the
// same server passes with nothing blind, and against a lockfile that
// approved another description of one prompt (the server rewrote it after
// approval) that prompt alone is withheld (prompt_changed) and check fails.
func TestEverythingFeatures(t *testing.T) {
	server := everythingServer(t)
	dir := t.TempDir()
	lockPath := filepath.Join(dir, "lock.json")
	if code, _, errs := runCLI("--now", "2026-11-30T12:00:00Z", "lock", "--server", server, "-o", lockPath); code != 0 {
		t.Fatalf("lock: exit %d: %s", code, errs)
	}
	raw, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	var lock map[string]any
	if err := json.Unmarshal(raw, &lock); err != nil {
		t.Fatal(err)
	}
	feats, _ := lock["features"].(map[string]any)
	prompts, _ := feats["prompts"].(map[string]any)
	resources, _ := feats["resources"].(map[string]any)
	templates, _ := feats["resource_templates"].(map[string]any)
	if len(prompts) == 0 || len(resources) == 0 || len(templates) == 0 || prompts["simple-prompt"] == nil {
		t.Fatalf("the lockfile pins prompts %d, resources %d, templates %d: %s", len(prompts), len(resources), len(templates), raw)
	}

	record := func(path string) (int, map[string]any) {
		code, out, errs := runCLI("--now", "2026-11-30T12:10:00Z", "check", "--lock", path, "--server", server, "--json")
		var rec map[string]any
		if err := json.Unmarshal([]byte(out), &rec); err != nil {
			t.Fatalf("check: exit %d, no record: %v\n%s\n%s", code, err, out, errs)
		}
		return code, rec
	}
	code, rec := record(lockPath)
	baseline := rec["baseline"].(map[string]any)
	if code != 0 || rec["effect"] != "proceed" || strings.Contains(toJSON(t, baseline["blind_parts"]), "prompts") {
		t.Fatalf("the same server: exit %d, effect %v, blind %v", code, rec["effect"], baseline["blind_parts"])
	}

	// The approval saw another description of simple-prompt.
	prompts["simple-prompt"].(map[string]any)["description"] = strings.Repeat("0", 64)
	delete(lock, "sha256")
	edited := filepath.Join(dir, "edited.json")
	if err := os.WriteFile(edited, []byte(toJSON(t, lock)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, rec = record(edited)
	obs := toJSON(t, rec["observations"])
	items := rec["features"].(map[string]any)["prompts"].(map[string]any)
	if code != 1 || rec["effect"] != "pause_tool" || !strings.Contains(obs, `"item":"simple-prompt"`) || !strings.Contains(obs, `"observation":"prompt_changed"`) ||
		items["simple-prompt"] != "pause_tool" || items["args-prompt"] != "proceed" {
		t.Fatalf("a changed prompt description: exit %d, effect %v, prompts %v, observations %s", code, rec["effect"], items, obs)
	}
	for _, e := range rec["tools"].(map[string]any) {
		if e != "proceed" {
			t.Fatalf("a changed prompt withheld a tool: %v", rec["tools"])
		}
	}
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
