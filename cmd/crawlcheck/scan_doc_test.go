package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScanDocExample: the poisoned example of docs/scan.md gives exactly the
// output the document shows, every finding of it, and exit 1.
func TestScanDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "scan.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := func(marker string) string {
		_, rest, ok := strings.Cut(string(doc), marker)
		if !ok {
			t.Fatalf("docs/scan.md lacks %q", marker)
		}
		_, rest, _ = strings.Cut(rest, "```")
		_, rest, _ = strings.Cut(rest, "\n")
		body, _, _ := strings.Cut(rest, "```")
		return body
	}
	input := block("<!-- scan example: input -->")
	want := block("<!-- scan example: output of crawlcheck scan --tools poisoned.json (exit 1) -->")
	path := filepath.Join(t.TempDir(), "poisoned.json")
	if err := os.WriteFile(path, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"scan", "--tools", path}, nil, &stdout, &stderr)
	if code != exitBlocked {
		t.Errorf("exit %d, want %d; stderr %s", code, exitBlocked, stderr.String())
	}
	if stdout.String() != want {
		t.Errorf("docs/scan.md's example output is not what crawlcheck scan prints:\n%s", stdout.String())
	}
}
