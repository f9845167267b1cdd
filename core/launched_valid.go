package core

import (
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/lock"
)

// LaunchedPackageValid says whether pkg, the JSON of a package a host
// resolved (continuity_check's observed.launched.package), is one the core
// reads: the same rule (lock.ParseLaunched) that refuses a malformed one in
// a request. A host resolves a package from what a registry, an index or
// an npx cache says; a registry answering an integrity that is not an SRI
// string, or an index listing more files than a pin holds, is the
// registry's fault, which the host reports as an unresolved package (an
// observation the core judges), not as a request the core refuses. Asking
// here keeps that rule in one place instead of a copy in every host.
func LaunchedPackageValid(pkg []byte) bool {
	v, err := canon.Parse(pkg)
	if err != nil {
		return false
	}
	_, err = lock.ParseLaunched(v, "package")
	return err == nil
}
