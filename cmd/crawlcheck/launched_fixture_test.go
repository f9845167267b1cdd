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

// What the launched-package tests (TestLaunched*, TestRunLaunchedAfterStart)
// share: the programs make launched-deps installs, crawlcheck built once a
// test, machines that are directories of a test's own, and a local npm
// registry (verdaccio) to publish real packages to.

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

// needNpx is npx's path; without npx on PATH the test is skipped.
func needNpx(t *testing.T) string {
	t.Helper()
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skip("npx not on PATH")
	}
	return npx
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

// launchedMachines is one test's temporary directory and the crawlcheck
// built into it; a machine is a directory of it (its caches, its working
// directory), so that what one machine installed another has not.
type launchedMachines struct {
	t        *testing.T
	tmp, bin string
}

func newLaunchedMachines(t *testing.T) *launchedMachines {
	t.Helper()
	tmp := t.TempDir()
	return &launchedMachines{t: t, tmp: tmp, bin: buildCrawlcheck(t, tmp)}
}

// dir is the directory tmp/parts..., made if it is not there yet.
func (ms *launchedMachines) dir(parts ...string) string {
	ms.t.Helper()
	d := filepath.Join(append([]string{ms.tmp}, parts...)...)
	if err := os.MkdirAll(d, 0o755); err != nil {
		ms.t.Fatal(err)
	}
	return d
}

// crawlcheck runs crawlcheck --timeout timeout args on machine m: in its
// working directory (tmp/m/work), env added to this process's environment.
// Any exit but want fails t. It answers what it wrote to stdout, then to
// stderr.
func (ms *launchedMachines) crawlcheck(t *testing.T, m string, env []string, timeout string, want int, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(ms.bin, append([]string{"--timeout", timeout}, args...)...)
	cmd.Dir = ms.dir(m, "work")
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if code := cmd.ProcessState.ExitCode(); code != want {
		t.Fatalf("crawlcheck %v on %s: exit %d (%v), want %d\n%s\n%s", args, m, code, err, want, out, stderr.String())
	}
	return append(out, stderr.String()...)
}

// npxInstalls are the installs of the npm package pkg in machine m's npx
// cache (tmp/m/npm-cache, npmMirror.machine's).
func (ms *launchedMachines) npxInstalls(m, pkg string) []string {
	found, _ := filepath.Glob(filepath.Join(ms.tmp, m, "npm-cache", "_npx", "*", "node_modules", pkg, "package.json"))
	return found
}

// launchedPin is the launched member of a lockfile, what a test reads
// back of its pin.
type launchedPin struct {
	Ecosystem, Name, Version, Integrity string
	Hashes                              []string
}

// readLaunchedPin reads the launched member of the lockfile at path.
func readLaunchedPin(t *testing.T, path string) launchedPin {
	t.Helper()
	var pinned struct {
		Launched launchedPin `json:"launched"`
	}
	if raw, err := os.ReadFile(path); err != nil || json.Unmarshal(raw, &pinned) != nil {
		t.Fatalf("the lockfile: %v\n%s", err, raw)
	}
	return pinned.Launched
}

// decodeRecord reads the record crawlcheck check --json wrote first in out
// (what follows it, stderr's lines, is not read) into an R, a test's own
// view of a record.
func decodeRecord[R any](t *testing.T, out []byte) R {
	t.Helper()
	var r R
	if err := json.NewDecoder(strings.NewReader(string(out))).Decode(&r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return r
}

// recordObservations is a record's observations, as the tests' views of a
// record read them.
type recordObservations []struct {
	Observation string `json:"observation"`
}

// has says whether the observation named o is among them.
func (obs recordObservations) has(o string) bool {
	for _, x := range obs {
		if x.Observation == o {
			return true
		}
	}
	return false
}

// npmMirror is a local npm registry (verdaccio, on loopback) that serves
// one package from its own storage alone, as published to it, and every
// other package from upstream (the registry this machine's npm uses) as a
// mirror does.
type npmMirror struct {
	ms *launchedMachines
	// url is the mirror's (ending in '/'); upstream the registry it
	// mirrors; userconfig an npmrc holding the token npm sends it.
	url, upstream, userconfig string
}

// startNPMMirror starts an npmMirror serving the package local from its
// storage, under tmp/verdaccio; it is stopped at the test's end.
func startNPMMirror(t *testing.T, ms *launchedMachines, local string) *npmMirror {
	t.Helper()
	upstream, err := exec.Command("npm", "config", "get", "registry").Output()
	if err != nil {
		t.Fatalf("npm config get registry: %v", err)
	}
	r := &npmMirror{ms: ms, upstream: strings.TrimSpace(string(upstream)), userconfig: filepath.Join(ms.tmp, "npmrc")}
	r.url = startVerdaccio(t, ms.dir("verdaccio"), local, r.upstream)
	// verdaccio lets anyone publish (publish: $all); npm sends a token.
	host := strings.TrimPrefix(strings.TrimSuffix(r.url, "/"), "http:")
	if err := os.WriteFile(r.userconfig, []byte(host+"/:_authToken=test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return r
}

// npm runs npm as the publisher: a cache of its own (tmp/publisher-cache),
// in tmp; each command names the registry it talks to.
func (r *npmMirror) npm(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command("npm", args...)
	cmd.Dir = r.ms.tmp
	cmd.Env = append(os.Environ(), "npm_config_cache="+r.ms.dir("publisher-cache"), "npm_config_userconfig="+r.userconfig, "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm %v: %v\n%s", args, err, out)
	}
}

// machine is the environment of machine m whose npm (and npx) fetches from
// registry: an npm cache of its own.
func (r *npmMirror) machine(m, registry string) []string {
	return []string{"npm_config_cache=" + r.ms.dir(m, "npm-cache"), "npm_config_registry=" + registry, "npm_config_userconfig=" + r.userconfig, "npm_config_update_notifier=false"}
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
