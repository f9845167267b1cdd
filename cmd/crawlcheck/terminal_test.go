package main

import (
	"os"
	"testing"
)

// TestDevNullIsNoTerminal: approve < /dev/null is the usage error docs/cli.md
// names (exit 2: --yes is required without a terminal), not a question
// nobody can answer (exit 1): /dev/null is a character device, not a
// terminal (issue 34, item 7).
func TestDevNullIsNoTerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Fatalf("%s reads as a terminal", os.DevNull)
	}
}
