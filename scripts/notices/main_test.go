package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoticesCurrent: notices/ is what the command writes from today's
// go.mod, package-lock.json and pyproject.toml. When it fails, run
// `go run ./scripts/notices` and read the diff.
func TestNoticesCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	want, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	if bad := stale(filepath.Join(root, "notices"), want); len(bad) > 0 {
		t.Fatalf("notices/ is not current: %s; run `go run ./scripts/notices`", strings.Join(bad, ", "))
	}
}

// TestNoticesCoverArtifacts: each artifact's notices name the modules
// compiled into it: the issuer's carries SQLite's, the CLI's the MCP SDK's,
// and the wasm core's neither.
func TestNoticesCoverArtifacts(t *testing.T) {
	root := filepath.Join("..", "..")
	want, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for file, mods := range map[string][]string{
		"crawlcheck-issuer.txt": {"modernc.org/sqlite", "github.com/jackc/pgx/v5", "Go standard library"},
		"crawlcheck.txt":        {"github.com/modelcontextprotocol/go-sdk", "gopkg.in/yaml.v3"},
		"crawlcheck.wasm.txt":   {"filippo.io/edwards25519"},
	} {
		for _, m := range mods {
			if !strings.Contains(want[file], "\n  "+m) {
				t.Errorf("%s does not list %s", file, m)
			}
		}
	}
	if strings.Contains(want["crawlcheck.wasm.txt"], "modernc.org/sqlite") {
		t.Error("crawlcheck.wasm.txt lists SQLite, which the wasm core does not link")
	}
}

// TestClassify: the licences the project may ship are named, and one it
// may not is refused with its name.
func TestClassify(t *testing.T) {
	gpl := "GNU GENERAL PUBLIC LICENSE Version 3"
	if ids := classify(gpl); len(ids) != 0 {
		t.Fatalf("classify(GPL) = %v, want none", ids)
	}
	apache, err := os.ReadFile(filepath.Join("..", "..", "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if ids := classify(string(apache)); len(ids) != 1 || ids[0] != "Apache-2.0" {
		t.Fatalf("classify(LICENSE) = %v, want [Apache-2.0]", ids)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "LICENSE"), []byte(gpl), 0o644)
	var b strings.Builder
	if err := section(&b, "example.com/gpl v1.0.0", dir); err == nil || !strings.Contains(err.Error(), "cannot name the licence") {
		t.Fatalf("section(GPL module) = %v, want a refusal", err)
	}
}
