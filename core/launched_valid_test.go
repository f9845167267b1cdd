package core

import "testing"

// LaunchedPackageValid answers what readLaunched reads: a host asks it
// before handing on a package a registry or a cache described.
func TestLaunchedPackageValid(t *testing.T) {
	for pkg, want := range map[string]bool{
		`{"ecosystem":"npm","name":"p","version":"1.0.0","integrity":"sha512-QUJD"}`:        true,
		`{"ecosystem":"npm","name":"p","version":"1.0.0","integrity":"garbage"}`:            false,
		`{"ecosystem":"npm","name":"p","version":"1.0.0","integrity":"sha512-\u001b[31m"}`:  false,
		`{"ecosystem":"npm","name":"p","version":"^1","integrity":"sha512-QUJD"}`:           false,
		`{"ecosystem":"pypi","name":"p","version":"1.0","hashes":["sha256:` + hex64 + `"]}`: true,
		`{"ecosystem":"pypi","name":"p","version":"1.0","hashes":["sha256:XYZ"]}`:           false,
		`not json`: false,
	} {
		if got := LaunchedPackageValid([]byte(pkg)); got != want {
			t.Errorf("%s: %v, want %v", pkg, got, want)
		}
	}
}

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
