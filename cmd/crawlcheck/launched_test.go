package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLaunchedNpx locks @modelcontextprotocol/server-memory (the version
// bindings/js/package.json pins) launched with the real npx into an npm
// cache of the test's own, then checks it: from another working directory
// and through another path to npx it is the approved server; another
// version in the command line is denied before the server starts (npx
// never installs it); a tarball other than the approved one under the same
// version (the install's integrity edited) is denied. server-filesystem,
// whose directories follow its spec, is the same server only over the same
// directories.
func TestLaunchedNpx(t *testing.T) {
	npx := needNpx(t)
	tmp := t.TempDir()
	bin := buildCrawlcheck(t, tmp)
	cache, dirA, dirB := filepath.Join(tmp, "npm-cache"), filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	for _, d := range []string{cache, dirA, dirB} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const spec = "@modelcontextprotocol/server-memory@2026.8.31"
	lock := filepath.Join(tmp, "mem.lock")
	run := func(t *testing.T, dir string, want int, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--timeout", "120s"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "npm_config_cache="+cache)
		out, err := cmd.Output()
		if code := cmd.ProcessState.ExitCode(); code != want {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("crawlcheck %v in %s: exit %d, want %d\n%s\n%s", args, dir, code, want, out, stderr)
		}
		return out
	}
	type record struct {
		Effect       string             `json:"effect"`
		Observations recordObservations `json:"observations"`
		Server       struct {
			Identity string `json:"identity"`
			Launched struct {
				Identity string `json:"identity"`
			} `json:"launched"`
		} `json:"server"`
	}
	check := func(t *testing.T, dir string, want int, command string) record {
		t.Helper()
		var r record
		if err := json.Unmarshal(run(t, dir, want, "check", "--json", "--lock", lock, "--server", command), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}

	run(t, dirA, 0, "lock", "--server", "npx -y "+spec, "-o", lock)
	var pinned struct {
		Launched struct{ Name, Version, Integrity string } `json:"launched"`
	}
	raw, err := os.ReadFile(lock)
	if err != nil || json.Unmarshal(raw, &pinned) != nil {
		t.Fatalf("the lockfile: %v\n%s", err, raw)
	}
	if pinned.Launched.Name != "@modelcontextprotocol/server-memory" || pinned.Launched.Version != "2026.8.31" || !strings.HasPrefix(pinned.Launched.Integrity, "sha512-") {
		t.Fatalf("the lockfile pins %+v", pinned.Launched)
	}

	for _, c := range []struct{ dir, command string }{{dirA, "npx -y " + spec}, {dirB, "npx -y " + spec}, {dirB, npx + " --yes " + spec}} {
		r := check(t, c.dir, 0, c.command)
		if r.Effect != "proceed" || r.Server.Identity != "match" || r.Server.Launched.Identity != "match" {
			t.Errorf("%s from %s: %+v", c.command, c.dir, r)
		}
	}

	// Another version: denied on its spec, before npx could install it.
	r := check(t, dirB, 1, "npx -y @modelcontextprotocol/server-memory@2026.1.26")
	if r.Effect != "deny" || !r.Observations.has("launched_package_changed") {
		t.Errorf("another version: %+v", r)
	}
	// run refuses it the same way, before its gateway starts the server.
	cmd := exec.Command(bin, "run", "--lock", lock, "--", "npx", "-y", "@modelcontextprotocol/server-memory@2026.1.26")
	cmd.Dir = dirB
	cmd.Env = append(os.Environ(), "npm_config_cache="+cache)
	out, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "launched_package_changed") || !strings.Contains(string(out), "the server was not started") {
		t.Errorf("run with another version: exit %d\n%s", cmd.ProcessState.ExitCode(), out)
	}
	installs, _ := filepath.Glob(filepath.Join(cache, "_npx", "*", "node_modules", "@modelcontextprotocol", "server-memory", "package.json"))
	if len(installs) != 1 {
		t.Fatalf("%d installs of server-memory in the cache, want the approved one alone: the other version was started", len(installs))
	}

	// server-filesystem's directories come after its spec: the same
	// package and directory from another working directory is the approved
	// server, another directory is another server.
	const fsSpec = "@modelcontextprotocol/server-filesystem@2026.8.31"
	fsLock := filepath.Join(tmp, "fs.lock")
	run(t, dirA, 0, "lock", "--server", "npx -y "+fsSpec+" "+dirA, "-o", fsLock)
	var fsr record
	if err := json.Unmarshal(run(t, dirB, 0, "check", "--json", "--lock", fsLock, "--server", npx+" --yes "+fsSpec+" "+dirA), &fsr); err != nil {
		t.Fatal(err)
	}
	if fsr.Server.Identity != "match" || fsr.Server.Launched.Identity != "match" {
		t.Errorf("server-filesystem from another directory: %+v", fsr)
	}
	if err := json.Unmarshal(run(t, dirB, 1, "check", "--json", "--lock", fsLock, "--server", "npx -y "+fsSpec+" "+dirB), &fsr); err != nil {
		t.Fatal(err)
	}
	if !fsr.Observations.has("server_identity_mismatch") || fsr.Server.Launched.Identity != "not_compared" {
		t.Errorf("server-filesystem over another directory: %+v", fsr)
	}

	// Another tarball under the approved version: the install's integrity
	// is not the pinned one.
	lockJSON := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(installs[0])))), "package-lock.json")
	b, err := os.ReadFile(lockJSON)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), pinned.Launched.Integrity, "sha512-"+strings.Repeat("A", 86)+"==", 1)
	if edited == string(b) {
		t.Fatalf("%s does not hold the pinned integrity", lockJSON)
	}
	if err := os.WriteFile(lockJSON, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	r = check(t, dirB, 1, "npx -y "+spec)
	if r.Effect != "deny" || !r.Observations.has("launched_package_changed") || r.Server.Launched.Identity != "changed" {
		t.Errorf("another tarball: %+v", r)
	}
}
