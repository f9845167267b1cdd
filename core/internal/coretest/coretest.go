// Package coretest holds helpers the core's package tests share.
package coretest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

// Hashed parses a JSON array of tools strictly and hashes it, failing the
// test on any refusal.
func Hashed(t testing.TB, list string) []tools.Tool {
	t.Helper()
	v, err := canon.ParseString(list)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := tools.Hash(v)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// RepoPath is a path from the module root, found from the test's directory
// up: a test does not depend on how deep its package sits.
func RepoPath(t testing.TB, elem ...string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(append([]string{dir}, elem...)...)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("coretest: no go.mod above the test's directory")
		}
		dir = parent
	}
}
