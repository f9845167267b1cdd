// Package release holds the check that make release's binaries are
// reproducible: scripts/release.sh's build, run twice, gives the same bytes.
package release

import (
	"bytes"
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestReproducible builds the host's target (so that the binary can be asked
// its version) twice through scripts/release.sh's build, the one place the
// release flags live: once in the clone, once from a copy of the tracked files
// at another path with an empty build cache, so that nothing of the first
// build (the path, a cached object, the clone's state) can make the second
// agree with it. Every binary must be byte-identical, and each one's --version
// must name the CHANGELOG's version and the commit without VCS information.
// It compiles every dependency from nothing (the issuer's SQLite among them),
// minutes on a busy machine: make release-check runs it
// (CRAWLCHECK_RELEASE_CHECK=1), make test does not.
func TestReproducible(t *testing.T) {
	if os.Getenv("CRAWLCHECK_RELEASE_CHECK") != "1" {
		t.Skip("builds the release binaries twice from an empty cache; make release-check sets CRAWLCHECK_RELEASE_CHECK=1")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	commit := strings.TrimSpace(run(t, root, nil, "git", "rev-parse", "HEAD"))
	goos, goarch := runtime.GOOS, runtime.GOARCH
	tmp := t.TempDir()
	first, second := filepath.Join(tmp, "first"), filepath.Join(tmp, "second")
	run(t, root, []string{"COMMIT=" + commit}, "scripts/release.sh", "build", goos, goarch, first)

	// The copy: the tracked files as they are in the worktree, elsewhere.
	src := filepath.Join(tmp, "elsewhere", "verifier-src")
	for _, f := range strings.Split(strings.TrimRight(run(t, root, nil, "git", "ls-files", "-z"), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the worktree, not committed yet
		}
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(src, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	run(t, src, []string{"COMMIT=" + commit, "GOCACHE=" + filepath.Join(tmp, "gocache"), "GOFLAGS=-modcacherw"},
		"scripts/release.sh", "build", goos, goarch, second)

	names, err := os.ReadDir(first)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 2 {
		t.Fatalf("the build gave %d files, want crawlcheck and crawlcheck-issuer", len(names))
	}
	for _, e := range names {
		a, err := os.ReadFile(filepath.Join(first, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(second, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two builds differ: sha256 %x and %x", e.Name(), sha256.Sum256(a), sha256.Sum256(b))
		} else {
			t.Logf("%s: %d bytes, sha256 %x, identical", e.Name(), len(a), sha256.Sum256(a))
		}
		// crawlcheck_2.0.0_linux_amd64 is "crawlcheck", crawlcheck-issuer_... "crawlcheck-issuer".
		name, _, _ := strings.Cut(e.Name(), "_")
		out := run(t, tmp, nil, filepath.Join(first, e.Name()), "--version")
		version := changelogVersion(t, root)
		if !strings.HasPrefix(out, name+" "+version+"\n") || !strings.Contains(out, "commit  "+commit+"\n") {
			t.Errorf("%s --version does not name version %s and commit %s:\n%s", e.Name(), version, commit, out)
		}
		// -trimpath leaves -ldflags out of the build info; -buildvcs=false the vcs.* settings.
		if bi := run(t, tmp, nil, "go", "version", "-m", filepath.Join(first, e.Name())); strings.Contains(bi, "vcs.") || !strings.Contains(bi, "-trimpath=true") || !strings.Contains(bi, "CGO_ENABLED=0") {
			t.Errorf("build info: want -trimpath, CGO_ENABLED=0 and no vcs.* settings:\n%s", bi)
		}
	}
}

// changelogVersion is the version the release stamps: the CHANGELOG's first
// "## X.Y.Z" heading, read here apart from the script so that a script that
// stamps something else fails.
func changelogVersion(t *testing.T, root string) string {
	b, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "## "); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
			return strings.Fields(rest)[0]
		}
	}
	t.Fatal("CHANGELOG.md has no version heading")
	return ""
}

// run runs a command in dir with env added and returns its stdout.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
