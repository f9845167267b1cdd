package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestMergeRows: a BENCH_ROWS run replaces its rows in the table written
// before, keeps the others and the rest of the file, and says under the
// table when they were measured (once, however often it runs).
func TestMergeRows(t *testing.T) {
	p := filepath.Join(t.TempDir(), "b.md")
	table := tableHeading + "\n\nrun of the day\n\n| row | ours | contender | ratio | target | |\n|---|---:|---:|---:|---|---|\n" +
		"| a | 1 | 2 | 0.5× | ≤ 1.0× | met |\n| b | 3 | 2 | 1.5× | ≤ 1.0× | **missed** |\n"
	os.WriteFile(p, []byte("# B\n\n"+table+"\n## Next\n\nx\n"), 0o644)
	cli := []rowGroup{{name: "cli"}}
	for range 2 {
		if err := mergeRows(p, []tableRow{{"b", "1", "2", "0.5×", "≤ 1.0×", "met"}}, cli, "1 2 3", "4 5 6", time.Second); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(p)
	want := "# B\n\n" + strings.Replace(table, "| b | 3 | 2 | 1.5× | ≤ 1.0× | **missed** |", "| b | 1 | 2 | 0.5× | ≤ 1.0× | met |", 1) + "\nThe cli rows: measured alone (BENCH_ROWS=cli) "
	if !strings.HasPrefix(string(got), want) || strings.Count(string(got), "measured alone") != 1 || !strings.HasSuffix(string(got), "load average 1 2 3 before, 4 5 6 after; the run took 1s.\n\n## Next\n\nx\n") {
		t.Errorf("got %q", got)
	}
	// Another group's note after it, then this group again: its note moves
	// to the end and leaves no second blank line where it was.
	for _, g := range [][]rowGroup{{{name: "size"}}, cli} {
		if err := mergeRows(p, []tableRow{{"a", "1", "2", "0.5×", "≤ 1.0×", "met"}}, g, "1 2 3", "4 5 6", time.Second); err != nil {
			t.Fatal(err)
		}
	}
	got, _ = os.ReadFile(p)
	if strings.Contains(string(got), "\n\n\n") || !strings.Contains(string(got), "met |\n\nThe size rows") {
		t.Errorf("after another group's note: %q", got)
	}
	if _, err := selectGroups("cli,nope"); err == nil {
		t.Error("an unknown row group was taken")
	}
}

// TestRewriteDetail: make bench-detail rewrites the file with its report
// and keeps make bench's table, the notes on the session rows after it, the
// sections written by hand and make load's section, none of which it
// measures; an old generated section goes.
func TestRewriteDetail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "b.md")
	table := tableHeading + "\n\n| row |\n\nnote\n"
	sessions := sessionsHeading + " (issue 23)\n\nwhere the time goes\n"
	issuer := issuerHeading + "\n\n| a |\n"
	hand := handHeadings[1] + "\n\nmeasured by hand\n"
	os.WriteFile(p, []byte("# B\n\n"+table+"\n"+sessions+"\n## Old detail\n\nx\n\n"+hand+"\n"+issuer), 0o644)
	if err := rewriteDetail(p, "# B\n\n## New detail\n\ny\n"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if want := "# B\n\n" + table + "\n" + sessions + "\n## New detail\n\ny\n\n" + hand + "\n" + issuer; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
