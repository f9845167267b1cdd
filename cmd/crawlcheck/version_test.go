package main

import (
	"strings"
	"testing"
)

// TestVersionStamped: make release stamps releaseVersion and releaseCommit
// with -X (its binaries have no VCS information); when set they are what
// crawlcheck --version and crawlcheck version name, ahead of the build info.
func TestVersionStamped(t *testing.T) {
	defer func(v, c string) { releaseVersion, releaseCommit = v, c }(releaseVersion, releaseCommit)
	releaseVersion, releaseCommit = "9.8.7", "0123456789abcdef0123456789abcdef01234567"
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, errs := runCLI(args...)
		if code != 0 || !strings.HasPrefix(out, "crawlcheck 9.8.7\ncommit  0123456789abcdef0123456789abcdef01234567\n") || strings.Contains(out, "uncommitted") {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}
