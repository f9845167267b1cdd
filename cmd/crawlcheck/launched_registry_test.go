package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// launchedDeps is the directory make test-launched installs the local
// registries' programs into (verdaccio with npm ci, uv in a venv:
// hosttest/launched); make test sets it, and CRAWLCHECK_NEED_SERVERS, so
// there these tests cannot be skipped.
func launchedDeps(t *testing.T, rel string) string {
	t.Helper()
	dir := os.Getenv("CRAWLCHECK_LAUNCHED_DEPS")
	path := filepath.Join(dir, rel)
	if _, err := os.Stat(path); dir == "" || err != nil {
		if os.Getenv("CRAWLCHECK_NEED_SERVERS") != "" {
			t.Fatalf("%s is not installed under CRAWLCHECK_LAUNCHED_DEPS=%q: make test-launched installs it", rel, dir)
		}
		t.Skip("CRAWLCHECK_LAUNCHED_DEPS names no install of " + rel + " (make test-launched)")
	}
	return path
}

// buildCrawlcheck builds this program into dir.
func buildCrawlcheck(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "crawlcheck")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building crawlcheck: %v\n%s", err, out)
	}
	return bin
}

// startVerdaccio runs verdaccio on a loopback port with a storage of its
// own: the package named local is published there alone (never fetched
// from upstream), every other package is fetched from upstream (the
// registry this machine's npm uses) as a mirror does. It is stopped at
// the test's end.
func startVerdaccio(t *testing.T, dir, local, upstream string) string {
	t.Helper()
	bin := launchedDeps(t, filepath.Join("node_modules", ".bin", "verdaccio"))
	port := freePort(t)
	conf := fmt.Sprintf(`storage: ./storage
auth:
  htpasswd:
    file: ./htpasswd
uplinks:
  upstream:
    url: %q
packages:
  %q:
    access: $all
    publish: $all
    unpublish: $all
  '**':
    access: $all
    publish: $all
    proxy: upstream
log: { type: stdout, format: pretty, level: warn }
`, upstream, local)
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "--config", filepath.Join(dir, "config.yaml"), "--listen", addr)
	cmd.Dir = dir
	logf, err := os.Create(filepath.Join(dir, "verdaccio.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	})
	url := "http://" + addr + "/"
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if resp, err := http.Get(url + "-/ping"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "verdaccio.log"))
			t.Fatalf("verdaccio did not answer on %s within 60 s:\n%s", addr, log)
		}
	}
}

// TestLaunchedMovedTarball republishes a real package under the same
// version in a local npm registry (verdaccio, on loopback) so that the
// same command line, `npx -y @modelcontextprotocol/server-memory@V`,
// resolves to another tarball: a lockfile made while the registry served
// the first one passes from another machine (another npm cache) while it
// still does, and once the registry serves the second one, check and run
// on a machine that has not installed it refuse before the server starts
// (deny, launched_package_changed), check's record saying both packages.
// A machine whose npx cache still holds the approved install runs that
// install, and passes.
func TestLaunchedMovedTarball(t *testing.T) {
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx not on PATH")
	}
	tmp := t.TempDir()
	bin := buildCrawlcheck(t, tmp)
	const name, version = "@modelcontextprotocol/server-memory", "2026.8.31"
	const spec = name + "@" + version
	mkdir := func(parts ...string) string {
		d := filepath.Join(append([]string{tmp}, parts...)...)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	// The registry this machine's npm uses is the mirror's upstream, and
	// the origin of the package's first tarball.
	upstream, err := exec.Command("npm", "config", "get", "registry").Output()
	if err != nil {
		t.Fatalf("npm config get registry: %v", err)
	}
	reg := startVerdaccio(t, mkdir("verdaccio"), name, strings.TrimSpace(string(upstream)))
	host := strings.TrimPrefix(strings.TrimSuffix(reg, "/"), "http:")
	userconfig := filepath.Join(tmp, "npmrc")
	// verdaccio lets anyone publish (publish: $all); npm sends a token.
	if err := os.WriteFile(userconfig, []byte(host+"/:_authToken=test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// npm, as the publisher: a cache of its own, the local registry.
	npm := func(args ...string) {
		t.Helper()
		cmd := exec.Command("npm", args...)
		cmd.Dir = tmp
		cmd.Env = append(os.Environ(), "npm_config_cache="+mkdir("publisher-cache"), "npm_config_userconfig="+userconfig, "npm_config_update_notifier=false")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm %v: %v\n%s", args, err, out)
		}
	}
	// The package's real tarball from upstream, published to the mirror.
	npm("pack", spec, "--registry", strings.TrimSpace(string(upstream)), "--pack-destination", tmp)
	tgz := filepath.Join(tmp, "modelcontextprotocol-server-memory-"+version+".tgz")
	npm("publish", tgz, "--registry", reg)

	// A machine: an npm cache of its own and a working directory of its
	// own, npx fetching from the mirror.
	machine := func(n string) []string {
		return []string{"npm_config_cache=" + mkdir(n, "npm-cache"), "npm_config_registry=" + reg, "npm_config_userconfig=" + userconfig, "npm_config_update_notifier=false"}
	}
	type record struct {
		Effect       string `json:"effect"`
		Failure      any    `json:"failure"`
		Observations []struct {
			Observation string `json:"observation"`
		} `json:"observations"`
		Server struct {
			Launched struct {
				Approved struct{ Integrity string } `json:"approved"`
				Observed struct{ Integrity string } `json:"observed"`
				Identity string                     `json:"identity"`
			} `json:"launched"`
		} `json:"server"`
	}
	crawlcheck := func(t *testing.T, m string, want int, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--timeout", "120s"}, args...)...)
		cmd.Dir = mkdir(m, "work")
		cmd.Env = append(os.Environ(), machine(m)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if code := cmd.ProcessState.ExitCode(); code != want {
			t.Fatalf("crawlcheck %v on %s: exit %d (%v), want %d\n%s\n%s", args, m, code, err, want, out, stderr.String())
		}
		return append(out, stderr.String()...)
	}
	lock := filepath.Join(tmp, "mem.lock")
	crawlcheck(t, "a", 0, "lock", "--server", "npx -y "+spec, "-o", lock)
	var pinned struct {
		Launched struct{ Name, Version, Integrity string } `json:"launched"`
	}
	if raw, err := os.ReadFile(lock); err != nil || json.Unmarshal(raw, &pinned) != nil {
		t.Fatalf("the lockfile: %v\n%s", err, raw)
	}
	if pinned.Launched.Name != name || pinned.Launched.Version != version || !strings.HasPrefix(pinned.Launched.Integrity, "sha512-") {
		t.Fatalf("the lockfile pins %+v", pinned.Launched)
	}
	check := func(t *testing.T, m string, want int) record {
		t.Helper()
		out := crawlcheck(t, m, want, "check", "--json", "--lock", lock, "--server", "npx -y "+spec)
		var r record
		if err := json.NewDecoder(strings.NewReader(string(out))).Decode(&r); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return r
	}
	// Machine b, while the mirror serves the approved tarball: the same
	// package, installed there by this check.
	if r := check(t, "b", 0); r.Effect != "proceed" || r.Server.Launched.Identity != "match" {
		t.Fatalf("machine b before the republish: %+v", r)
	}

	// The same version republished with another tarball: the package's
	// own files and one changed line of its README.
	npm("unpublish", spec, "--force", "--registry", reg)
	unpacked := mkdir("unpacked")
	if out, err := exec.Command("tar", "-xzf", tgz, "-C", unpacked).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	readme := filepath.Join(unpacked, "package", "README.md")
	f, err := os.OpenFile(readme, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "\nRepublished under the same version.")
	f.Close()
	npm("publish", filepath.Join(unpacked, "package"), "--ignore-scripts", "--registry", reg)

	installs := func(m string) []string {
		found, _ := filepath.Glob(filepath.Join(tmp, m, "npm-cache", "_npx", "*", "node_modules", "@modelcontextprotocol", "server-memory", "package.json"))
		return found
	}
	// Machine c has not installed it: check refuses before the server
	// starts, its record naming the approved and the served integrity.
	r := check(t, "c", 1)
	has := false
	for _, o := range r.Observations {
		has = has || o.Observation == "launched_package_changed"
	}
	if r.Effect != "deny" || !has || r.Server.Launched.Identity != "changed" ||
		r.Server.Launched.Approved.Integrity != pinned.Launched.Integrity ||
		!strings.HasPrefix(r.Server.Launched.Observed.Integrity, "sha512-") || r.Server.Launched.Observed.Integrity == pinned.Launched.Integrity {
		t.Errorf("machine c after the republish: %+v", r)
	}
	if n := installs("c"); len(n) != 0 {
		t.Errorf("check on machine c installed %v: the server was started", n)
	}
	// run refuses it the same way, before its gateway starts the server.
	out := crawlcheck(t, "c", 1, "run", "--lock", lock, "--", "npx", "-y", spec)
	if !strings.Contains(string(out), "launched_package_changed") || !strings.Contains(string(out), "the server was not started") {
		t.Errorf("run on machine c:\n%s", out)
	}
	if n := installs("c"); len(n) != 0 {
		t.Errorf("run on machine c installed %v: the server was started", n)
	}
	// Machine b runs the install its cache holds, the approved one.
	if r := check(t, "b", 0); r.Effect != "proceed" || r.Server.Launched.Identity != "match" {
		t.Errorf("machine b after the republish: %+v", r)
	}
}
