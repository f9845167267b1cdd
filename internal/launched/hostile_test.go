package launched

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/core"
)

// makeLock asks the core to lock the make_lock vector's server with
// observed.launched set to launched: ok is whether the core read it (a
// malformed package refuses the whole request).
func makeLock(t *testing.T, launched json.RawMessage) (json.RawMessage, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "ops", "make_lock", "launched-not-resolved-pins-nothing.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vec struct {
		Request map[string]json.RawMessage `json:"request"`
	}
	if err := json.Unmarshal(b, &vec); err != nil {
		t.Fatal(err)
	}
	var observed map[string]json.RawMessage
	if err := json.Unmarshal(vec.Request["observed"], &observed); err != nil {
		t.Fatal(err)
	}
	observed["launched"] = launched
	vec.Request["observed"], _ = json.Marshal(observed)
	reqBytes, _ := json.Marshal(vec.Request)
	var env struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(core.Call("make_lock", reqBytes), &env); err != nil {
		t.Fatal(err)
	}
	return env.Result, env.OK
}

// A registry answering an integrity that is not an SRI string (garbage,
// or a terminal escape) is read as a registry that gave no answer for
// that version: not_installed with the spec, which the core judges,
// instead of a package the core would refuse, failing the whole check. A
// well-formed answer from the same registry resolves (the test can fail).
func TestRegistryIntegrityNotSRI(t *testing.T) {
	const name, version = "hostile-pkg", "1.0.0"
	integrity := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in, _ := json.Marshal(integrity) // the escape as JSON writes it, \u001b
		fmt.Fprintf(w, `{"name":%q,"dist-tags":{"latest":%q},"versions":{%q:{"name":%q,"version":%q,"dist":{"integrity":%s}}}}`,
			name, version, version, name, version, in)
	}))
	defer srv.Close()
	o := Options{NpmCache: t.TempDir(), NpmRegistry: srv.URL}
	for _, spec := range []string{name + "@" + version, name, name + "@latest"} {
		argv := []string{"npx", "-y", spec}
		integrity = "sha512-" + "QUJD"
		r := ResolveWith(context.Background(), argv, o)
		if r.Package == nil || r.Package.Integrity != integrity {
			t.Fatalf("%s, a well-formed answer: %+v", spec, r)
		}
		if _, ok := makeLock(t, r.Observed()); !ok {
			t.Fatalf("%s: the core refused the resolved package %s", spec, r.Observed())
		}
		for _, bad := range []string{"garbage", "sha512-\x1b[31mred", "md5-QUJD", "sha512-"} {
			integrity = bad
			r := ResolveWith(context.Background(), argv, o)
			if r.Package != nil || r.Reason != NotInstalled || r.Spec != spec {
				t.Errorf("%s, integrity %q: %+v, want not_installed with the spec", spec, bad, r)
			}
			if _, ok := makeLock(t, r.Observed()); !ok {
				t.Errorf("%s, integrity %q: the core refused %s", spec, bad, r.Observed())
			}
			// What the host handed before: the core refuses the request.
			p := &Package{Ecosystem: "npm", Name: name, Version: version, Integrity: bad}
			if _, ok := makeLock(t, json.RawMessage(`{"package":`+string(p.json())+`}`)); ok {
				t.Errorf("integrity %q: the core read it as a package; this test proves nothing", bad)
			}
		}
	}
}

// An npx cache whose package-lock says an integrity that is not an SRI
// string is unreadable (the cache does not say an integrity), not a
// package the core would refuse.
func TestCacheIntegrityNotSRI(t *testing.T) {
	const name, version = "hostile-pkg", "1.0.0"
	cache := t.TempDir()
	dir := filepath.Join(cache, "_npx", "0123abcd")
	write := func(rel, body string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("package.json", `{"_npx":{"packages":["`+name+"@"+version+`"]}}`)
	write("node_modules/"+name+"/package.json", `{"name":"`+name+`","version":"`+version+`"}`)
	argv := []string{"npx", "-y", name + "@" + version}
	for _, c := range []struct {
		integrity string
		want      string
	}{{"sha512-QUJD", ""}, {"garbage", Unreadable}} {
		write("package-lock.json", `{"packages":{"node_modules/`+name+`":{"version":"`+version+`","integrity":"`+c.integrity+`"}}}`)
		r := Resolve(argv, cache)
		if r.Reason != c.want || (c.want == "") != (r.Package != nil) {
			t.Errorf("integrity %q: %+v, want reason %q", c.integrity, r, c.want)
		}
	}
}

// An index listing more files for a release than a pin holds is read as
// no answer (not_installed), not as a package the core would refuse.
func TestParsedHashesTheCoreRefuses(t *testing.T) {
	var out bytes.Buffer
	out.WriteString("pkg==1.0.0 \\\n")
	for i := range 300 {
		fmt.Fprintf(&out, "    --hash=sha256:%064x \\\n", i)
	}
	hashes, ok := parseHashes(out.String(), "pkg", "1.0.0")
	if !ok || len(hashes) != 300 {
		t.Fatalf("parseHashes: %d, %v", len(hashes), ok)
	}
	if p := (&Package{Ecosystem: "pypi", Name: "pkg", Version: "1.0.0", Hashes: hashes}); p.readable() {
		t.Error("300 files: readable")
	}
	if p := (&Package{Ecosystem: "pypi", Name: "pkg", Version: "1.0.0", Hashes: hashes[:3]}); !p.readable() {
		t.Error("3 files: not readable")
	}
}

// fakeProgram writes an executable shell script named name in a new
// directory and puts that directory first on PATH.
func fakeProgram(t *testing.T, name, body string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return p
}

// A grandchild that holds npm's or uv's stdout open (here a sleep left
// behind) cannot hold the resolution past its context: Wait returns
// waitDelay after the kill. Before, the read of the stdout pipe lasted as
// long as the grandchild.
func TestGrandchildHoldingStdout(t *testing.T) {
	const body = "sleep 10 &\nsleep 10\n"
	prog := fakeProgram(t, "npm", body)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	reg := NpmRegistry(ctx, func(string) string { return "" }, os.Environ(), "")
	if d := time.Since(start); reg != "" || d > 4*time.Second {
		t.Errorf("npm config get registry: %q after %v", reg, d)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	start = time.Now()
	r := ResolveWith(ctx2, []string{"uvx", "pkg==1.0.0"}, Options{UV: prog})
	if d := time.Since(start); r.Reason != NotInstalled || d > 4*time.Second {
		t.Errorf("uv: %+v after %v", r, d)
	}
}

// A program that exits at once while a grandchild keeps its stdout open
// does not hold the resolution either (its answer may not be whole: it is
// none); one that writes past the cap is refused, and one that answers is
// read (the test can fail).
func TestOutputCapped(t *testing.T) {
	none := func(string) string { return "" }
	prog := fakeProgram(t, "npm", "echo https://registry.example/\n")
	if reg := NpmRegistry(context.Background(), none, os.Environ(), ""); reg != "https://registry.example/" {
		t.Errorf("an answer: %q", reg)
	}
	script := func(body string) {
		if err := os.WriteFile(prog, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script("sleep 10 &\necho https://registry.example/\n")
	start := time.Now()
	if reg := NpmRegistry(context.Background(), none, os.Environ(), ""); reg != "" || time.Since(start) > 4*time.Second {
		t.Errorf("exited, a grandchild holding stdout: %q after %v", reg, time.Since(start))
	}
	script("head -c 5000 /dev/zero | tr '\\0' a\n")
	if reg := NpmRegistry(context.Background(), none, os.Environ(), ""); reg != "" {
		t.Errorf("past the cap: %q", reg)
	}
}
