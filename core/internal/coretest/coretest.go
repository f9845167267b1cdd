// Package coretest holds helpers the core's package tests share.
package coretest

import (
	"testing"

	"github.com/crawlcheck/verifier/core/canon"
	"github.com/crawlcheck/verifier/core/tools"
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
