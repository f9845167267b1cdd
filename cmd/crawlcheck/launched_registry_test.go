package main

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/launched"
)

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
	needNpx(t)
	const name, version = "@modelcontextprotocol/server-memory", "2026.8.31"
	const spec = name + "@" + version
	ms := newLaunchedMachines(t)
	tmp := ms.tmp
	// The registry this machine's npm uses is the mirror's upstream, and
	// the origin of the package's first tarball.
	mirror := startNPMMirror(t, ms, name)
	reg := mirror.url
	// The package's real tarball from upstream, published to the mirror.
	mirror.npm(t, "pack", spec, "--registry", mirror.upstream, "--pack-destination", tmp)
	tgz := filepath.Join(tmp, "modelcontextprotocol-server-memory-"+version+".tgz")
	mirror.npm(t, "publish", tgz, "--registry", reg)

	type record struct {
		Effect       string             `json:"effect"`
		Failure      any                `json:"failure"`
		Observations recordObservations `json:"observations"`
		Server       struct {
			Launched struct {
				Approved struct{ Integrity string } `json:"approved"`
				Observed struct{ Integrity string } `json:"observed"`
				Identity string                     `json:"identity"`
			} `json:"launched"`
		} `json:"server"`
	}
	// A machine: an npm cache of its own and a working directory of its
	// own, npx fetching from the mirror.
	crawlcheck := func(t *testing.T, m string, want int, args ...string) []byte {
		t.Helper()
		return ms.crawlcheck(t, m, mirror.machine(m, reg), "120s", want, args...)
	}
	lock := filepath.Join(tmp, "mem.lock")
	crawlcheck(t, "a", 0, "lock", "--server", "npx -y "+spec, "-o", lock)
	pinned := readLaunchedPin(t, lock)
	if pinned.Name != name || pinned.Version != version || !strings.HasPrefix(pinned.Integrity, "sha512-") {
		t.Fatalf("the lockfile pins %+v", pinned)
	}
	check := func(t *testing.T, m string, want int) record {
		t.Helper()
		return decodeRecord[record](t, crawlcheck(t, m, want, "check", "--json", "--lock", lock, "--server", "npx -y "+spec))
	}
	// Machine b, while the mirror serves the approved tarball: the same
	// package, installed there by this check.
	if r := check(t, "b", 0); r.Effect != "proceed" || r.Server.Launched.Identity != "match" {
		t.Fatalf("machine b before the republish: %+v", r)
	}

	// The same version republished with another tarball: the package's
	// own files and one changed line of its README.
	mirror.npm(t, "unpublish", spec, "--force", "--registry", reg)
	unpacked := ms.dir("unpacked")
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
	mirror.npm(t, "publish", filepath.Join(unpacked, "package"), "--ignore-scripts", "--registry", reg)

	// Machine c has not installed it: check refuses before the server
	// starts, its record naming the approved and the served integrity.
	r := check(t, "c", 1)
	if r.Effect != "deny" || !r.Observations.has("launched_package_changed") || r.Server.Launched.Identity != "changed" ||
		r.Server.Launched.Approved.Integrity != pinned.Integrity ||
		!strings.HasPrefix(r.Server.Launched.Observed.Integrity, "sha512-") || r.Server.Launched.Observed.Integrity == pinned.Integrity {
		t.Errorf("machine c after the republish: %+v", r)
	}
	if n := ms.npxInstalls("c", name); len(n) != 0 {
		t.Errorf("check on machine c installed %v: the server was started", n)
	}
	// run refuses it the same way, before its gateway starts the server.
	out := crawlcheck(t, "c", 1, "run", "--lock", lock, "--", "npx", "-y", spec)
	if !strings.Contains(string(out), "launched_package_changed") || !strings.Contains(string(out), "the server was not started") {
		t.Errorf("run on machine c:\n%s", out)
	}
	if n := ms.npxInstalls("c", name); len(n) != 0 {
		t.Errorf("run on machine c installed %v: the server was started", n)
	}
	// Machine b runs the install its cache holds, the approved one.
	if r := check(t, "b", 0); r.Effect != "proceed" || r.Server.Launched.Identity != "match" {
		t.Errorf("machine b after the republish: %+v", r)
	}
}

// rewriteWheel writes the wheel at src to dst with one file's content
// changed and its RECORD line made true again: an installable wheel of the
// same name and version whose bytes differ.
func rewriteWheel(t *testing.T, src, dst, file, appended string) {
	t.Helper()
	zr, err := zip.OpenReader(src)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	files := map[string][]byte{}
	var names []string
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name], names = b, append(names, f.Name)
	}
	if _, ok := files[file]; !ok {
		t.Fatalf("%s holds no %s", src, file)
	}
	files[file] = append(files[file], appended...)
	sum := sha256.Sum256(files[file])
	line := fmt.Sprintf("%s,sha256=%s,%d", file, base64.RawURLEncoding.EncodeToString(sum[:]), len(files[file]))
	for _, n := range names {
		if strings.HasSuffix(n, ".dist-info/RECORD") {
			var out []string
			for _, l := range strings.Split(string(files[n]), "\n") {
				if strings.HasPrefix(l, file+",") {
					l = line
				}
				out = append(out, l)
			}
			files[n] = []byte(strings.Join(out, "\n"))
		}
	}
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(files[n])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// servePyPIIndex lays a PEP 503 simple index of one project's wheel out
// under root and (the first time) serves root on loopback with python's
// http.server until the test ends; it answers the index's URL.
func servePyPIIndex(t *testing.T, root, project, wheel string, port *int) string {
	t.Helper()
	b, err := os.ReadFile(wheel)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	files, page := filepath.Join(root, "files"), filepath.Join(root, "simple", project)
	for _, d := range []string{files, page} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	name := filepath.Base(wheel)
	if err := os.WriteFile(filepath.Join(files, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	html := fmt.Sprintf("<!DOCTYPE html>\n<html><body>\n<a href=\"../../files/%s#sha256=%x\">%s</a>\n</body></html>\n", name, sum, name)
	if err := os.WriteFile(filepath.Join(page, "index.html"), []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	if *port == 0 {
		*port = freePort(t)
		cmd := exec.Command("python3", "-m", "http.server", "--bind", "127.0.0.1", "--directory", root, fmt.Sprint(*port))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/simple/%s/", *port, project)); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatal("python's http.server did not answer within 30 s")
			}
		}
	}
	return fmt.Sprintf("http://127.0.0.1:%d/simple/", *port)
}

// TestLaunchedUvx locks mcp-server-time (the reference server from PyPI)
// launched with `uvx mcp-server-time==V` while a local index (a PEP 503
// simple index on loopback, python's http.server) serves its wheel, its
// dependencies coming from the default index: the lockfile pins the
// distribution's name, version and the index's file hash, and another
// machine (another uv cache, another working directory, uvx named by
// another path) passes. Once the index serves another wheel under the same
// version (one file of it changed, its RECORD made true again), check and
// run refuse before the server starts (deny, launched_package_changed).
func TestLaunchedUvx(t *testing.T) {
	uv := launchedDeps(t, filepath.Join("venv", "bin", "uv"))
	venvBin := filepath.Dir(uv)
	const project, version = "mcp-server-time", "2026.10.19" // bindings/python/requirements/servers.txt
	const spec = project + "==" + version
	ms := newLaunchedMachines(t)
	tmp, mkdir := ms.tmp, ms.dir
	// The real wheel, from the registry this machine's pip uses.
	dl := exec.Command(filepath.Join(venvBin, "python"), "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:", spec, "-d", mkdir("download"))
	if out, err := dl.CombinedOutput(); err != nil {
		t.Fatalf("pip download %s: %v\n%s", spec, err, out)
	}
	wheel := filepath.Join(tmp, "download", "mcp_server_time-"+version+"-py3-none-any.whl")
	var port int
	index := servePyPIIndex(t, mkdir("index"), project, wheel, &port)

	machine := func(m string) []string {
		return []string{
			"PATH=" + venvBin + string(os.PathListSeparator) + os.Getenv("PATH"),
			"UV_CACHE_DIR=" + mkdir(m, "uv-cache"), "UV_INDEX=" + index, "UV_PYTHON_DOWNLOADS=never", "UV_NO_PROGRESS=1",
		}
	}
	type record struct {
		Effect   string `json:"effect"`
		Observed struct {
			Failure string `json:"failure"`
		} `json:"observed"`
		Observations recordObservations `json:"observations"`
		Server       struct {
			Launched struct {
				Approved struct{ Hashes []string } `json:"approved"`
				Observed struct{ Hashes []string } `json:"observed"`
				Identity string                    `json:"identity"`
			} `json:"launched"`
		} `json:"server"`
	}
	crawlcheck := func(t *testing.T, m string, want int, args ...string) []byte {
		t.Helper()
		return ms.crawlcheck(t, m, machine(m), "180s", want, args...)
	}
	lock := filepath.Join(tmp, "time.lock")
	crawlcheck(t, "a", 0, "lock", "--server", "uvx "+spec, "-o", lock)
	pinned := readLaunchedPin(t, lock)
	b, _ := os.ReadFile(wheel)
	want := fmt.Sprintf("sha256:%x", sha256.Sum256(b))
	if pinned.Ecosystem != "pypi" || pinned.Name != project || pinned.Version != version ||
		len(pinned.Hashes) != 1 || pinned.Hashes[0] != want {
		t.Fatalf("the lockfile pins %+v, want the wheel's %s", pinned, want)
	}
	check := func(t *testing.T, m string, want int, command string) record {
		t.Helper()
		return decodeRecord[record](t, crawlcheck(t, m, want, "check", "--json", "--lock", lock, "--server", command))
	}
	// Another machine, uvx by its path, a flag, the spec written name@version.
	if r := check(t, "b", 0, filepath.Join(venvBin, "uvx")+" --quiet "+project+"@"+version); r.Effect != "proceed" || r.Server.Launched.Identity != "match" {
		t.Fatalf("machine b: %+v", r)
	}

	// pipx run installs from pip's indexes: the same release read through
	// PIP_INDEX_URL (pipx itself is not installed here; uv reads the index).
	pipx := launched.ResolveWith(context.Background(), []string{"pipx", "run", "--spec", spec, project},
		launched.Options{UV: uv, Env: append(os.Environ(), "PIP_INDEX_URL="+index, "UV_PYTHON_DOWNLOADS=never"), Dir: tmp})
	if p := pipx.Package; p == nil || p.Ecosystem != "pypi" || p.Name != project || len(p.Hashes) != 1 || p.Hashes[0] != want {
		t.Errorf("pipx run through PIP_INDEX_URL: %+v (%s)", p, pipx.Reason)
	}

	// The index serves another wheel under the same version.
	changed := filepath.Join(mkdir("changed"), filepath.Base(wheel))
	rewriteWheel(t, wheel, changed, "mcp_server_time/__init__.py", "\n# republished under the same version\n")
	servePyPIIndex(t, filepath.Join(tmp, "index"), project, changed, &port)
	r := check(t, "c", 1, "uvx "+spec)
	if r.Effect != "deny" || !r.Observations.has("launched_package_changed") || r.Observed.Failure != "server_unavailable" || r.Server.Launched.Identity != "changed" ||
		len(r.Server.Launched.Observed.Hashes) != 1 || r.Server.Launched.Observed.Hashes[0] == want {
		t.Errorf("machine c after the wheel changed: %+v", r)
	}
	out := crawlcheck(t, "c", 1, "run", "--lock", lock, "--", "uvx", spec)
	if !strings.Contains(string(out), "launched_package_changed") || !strings.Contains(string(out), "the server was not started") {
		t.Errorf("run on machine c:\n%s", out)
	}
}

// TestLaunchedDockerDigest checks an image pinned by digest (the lockfile
// make_lock writes of `docker run -i --rm mcp/time@sha256:…`, from the
// core's vectors): another digest on the command line is refused by check
// and run before anything is started (docker is never run: this machine
// has no daemon), the record naming both digests; an image named by tag
// alone resolves to nothing, and keeps the command-line rule, said on the
// record (not_resolved: unpinned); so does a command no resolver reads
// (not_resolved: not_a_launcher).
func TestLaunchedDockerDigest(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "ops", "make_lock", "with-an-oci-image.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Response struct {
			Result struct{ Lock string } `json:"result"`
		} `json:"response"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || v.Response.Result.Lock == "" {
		t.Fatalf("the vector's lockfile: %v", err)
	}
	tmp := t.TempDir()
	lock := filepath.Join(tmp, "oci.lock")
	if err := os.WriteFile(lock, []byte(v.Response.Result.Lock), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := buildCrawlcheck(t, tmp)
	// A docker that records being run: nothing may start it.
	fake := filepath.Join(tmp, "bin")
	os.Mkdir(fake, 0o755)
	ran := filepath.Join(tmp, "docker-ran")
	if err := os.WriteFile(filepath.Join(fake, "docker"), []byte("#!/bin/sh\necho \"$@\" >> "+ran+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"))
	other := "mcp/time@sha256:" + strings.Repeat("11", 32)
	cmd := exec.Command(bin, "check", "--json", "--lock", lock, "--server", "docker run -i --rm "+other)
	cmd.Env = env
	out, _ := cmd.Output()
	var r struct {
		Effect       string `json:"effect"`
		Observations []struct {
			Observation string `json:"observation"`
		} `json:"observations"`
		Server struct {
			Launched struct {
				Observed struct{ Digest string } `json:"observed"`
				Identity string                  `json:"identity"`
			} `json:"launched"`
		} `json:"server"`
	}
	if err := json.NewDecoder(strings.NewReader(string(out))).Decode(&r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 || r.Effect != "deny" || r.Server.Launched.Identity != "changed" || r.Server.Launched.Observed.Digest != "sha256:"+strings.Repeat("11", 32) {
		t.Errorf("check with another digest: exit %d %+v", code, r)
	}
	run := exec.Command(bin, "run", "--lock", lock, "--", "docker", "run", "-i", "--rm", other)
	run.Env = env
	rout, _ := run.CombinedOutput()
	if run.ProcessState.ExitCode() != 1 || !strings.Contains(string(rout), "launched_package_changed") || !strings.Contains(string(rout), "the server was not started") {
		t.Errorf("run with another digest: exit %d\n%s", run.ProcessState.ExitCode(), rout)
	}
	if b, err := os.ReadFile(ran); err == nil {
		t.Errorf("docker was run: %s", b)
	}
	// By tag: nothing resolved before the start; the server is started
	// (here a docker that fails) and the record says why no package was
	// compared.
	cmd = exec.Command(bin, "check", "--json", "--lock", lock, "--server", "docker run -i --rm mcp/time:latest")
	cmd.Env = env
	out, _ = cmd.Output()
	var tr struct {
		Server struct {
			Identity string `json:"identity"`
			Launched struct {
				NotResolved string `json:"not_resolved"`
				Spec        string `json:"spec"`
				Identity    string `json:"identity"`
			} `json:"launched"`
		} `json:"server"`
	}
	if err := json.NewDecoder(strings.NewReader(string(out))).Decode(&tr); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if tr.Server.Identity != "mismatch" || tr.Server.Launched.NotResolved != "unpinned" || tr.Server.Launched.Spec != "mcp/time:latest" || tr.Server.Launched.Identity != "not_compared" {
		t.Errorf("by tag: %+v", tr)
	}
	// A command no resolver reads: the command-line rule, the record
	// saying why no package was compared.
	cmd = exec.Command(bin, "check", "--json", "--lock", lock, "--server", "python3 -c pass")
	cmd.Env = env
	out, _ = cmd.Output()
	tr.Server.Launched.Spec = ""
	if err := json.NewDecoder(strings.NewReader(string(out))).Decode(&tr); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if tr.Server.Identity != "mismatch" || tr.Server.Launched.NotResolved != "not_a_launcher" || tr.Server.Launched.Spec != "" || tr.Server.Launched.Identity != "not_compared" {
		t.Errorf("not a launcher: %+v", tr)
	}
}
