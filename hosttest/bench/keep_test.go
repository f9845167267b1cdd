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

// TestWriteSection: make bench replaces its own section and keeps the rest,
// or puts it before the first section when the file has none yet.
func TestWriteSection(t *testing.T) {
	p := filepath.Join(t.TempDir(), "b.md")
	os.WriteFile(p, []byte("# B\n\nintro\n\n## Old\n\nx\n"), 0o644)
	if err := writeSection(p, tableHeading, tableHeading+"\n\n| 1 |\n"); err != nil {
		t.Fatal(err)
	}
	if err := writeSection(p, tableHeading, tableHeading+"\n\n| 2 |\n"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if want := "# B\n\nintro\n\n" + tableHeading + "\n\n| 2 |\n\n## Old\n\nx\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
