package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestKeptSection: make bench rewrites docs/benchmarks.md but keeps make
// load's section, which it does not measure.
func TestKeptSection(t *testing.T) {
	p := filepath.Join(t.TempDir(), "b.md")
	os.WriteFile(p, []byte("# B\n\n## Old\n\nx\n\n"+issuerHeading+"\n\n| a |\n\n## JavaScript\n\ny\n"), 0o644)
	if got, want := keptSection(p, issuerHeading), "\n"+issuerHeading+"\n\n| a |\n"; got != want {
		t.Errorf("kept %q, want %q", got, want)
	}
	if got := keptSection(filepath.Join(t.TempDir(), "none.md"), issuerHeading); got != "" {
		t.Errorf("no file: %q", got)
	}
}
