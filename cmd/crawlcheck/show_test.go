package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryPrintIsShown keeps the rule of show.go: outside it, nothing is
// printed with fmt directly, so no string reaches a terminal unescaped by
// accident.
func TestEveryPrintIsShown(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	direct := regexp.MustCompile(`\bfmt\.(Fprint|Print)`)
	for _, f := range files {
		if f == "show.go" || strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if direct.MatchString(line) {
				t.Errorf("%s:%d prints with fmt directly; use say (show.go): %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}

func TestLineEscaper(t *testing.T) {
	var b strings.Builder
	e := &lineEscaper{w: &b}
	for _, p := range []string{"one\x1b[2K", "\rtwo\nthr", "ee\u202e\n", "tail\x07"} {
		if _, err := e.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	e.Close()
	want := `one\u{1B}[2K\u{0D}two` + "\n" + `three\u{202E}` + "\n" + `tail\u{07}` + "\n"
	if b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	e.Write([]byte(strings.Repeat("x", 3*maxLine+5)))
	if len(e.buf) > maxLine {
		t.Fatalf("buffer grew to %d", len(e.buf))
	}
}
