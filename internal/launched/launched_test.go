package launched

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// memory is the reference server bindings/js/package.json pins.
const memory = "@modelcontextprotocol/server-memory"
const memoryVersion = "2026.8.31"

var (
	installOnce sync.Once
	installDir  string
	installErr  error
)

// npxCache runs the real npx once, into a cache of its own, from a
// working directory of its own: the server starts and exits when its stdin
// closes, leaving npx's install in <cache>/_npx.
func npxCache(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx not on PATH")
	}
	installOnce.Do(func() {
		installDir, installErr = os.MkdirTemp("", "launched-npm-cache-")
		if installErr != nil {
			return
		}
		cmd := exec.Command("npx", "-y", memory+"@"+memoryVersion)
		cmd.Dir = os.TempDir()
		cmd.Env = append(os.Environ(), "npm_config_cache="+installDir)
		var out []byte
		out, installErr = cmd.CombinedOutput()
		if installErr != nil {
			installErr = &installError{installErr, string(out)}
		}
	})
	if installErr != nil {
		t.Fatal(installErr)
	}
	return installDir
}

type installError struct {
	err error
	out string
}

func (e *installError) Error() string { return e.err.Error() + ": " + e.out }

func TestResolveNpxInstall(t *testing.T) {
	cache := npxCache(t)
	spec := memory + "@" + memoryVersion
	a := Resolve([]string{"npx", "-y", spec}, cache)
	if a.Package == nil {
		t.Fatalf("npx -y %s: %s", spec, a.Reason)
	}
	if a.Package.Ecosystem != "npm" || a.Package.Name != memory || a.Package.Version != memoryVersion ||
		!strings.HasPrefix(a.Package.Integrity, "sha512-") {
		t.Fatalf("resolved %+v", a.Package)
	}
	// Another path to npx, its long flag, and server arguments after the
	// spec: the same package.
	npx, _ := exec.LookPath("npx")
	b := Resolve([]string{npx, "--yes", spec, "--some-server-flag"}, cache)
	if b.Package == nil || !reflect.DeepEqual(*b.Package, *a.Package) {
		t.Fatalf("%s --yes: %+v, want %+v", npx, b, a.Package)
	}
}

func TestResolveRefuses(t *testing.T) {
	cache := npxCache(t)
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"node", "server.js"}, NotALauncher},
		{[]string{"npx"}, NotALauncher},
		{[]string{"npx", "-y"}, NotALauncher},
		{[]string{"npx", "-p", "other", memory + "@" + memoryVersion}, NotALauncher},
		{[]string{"npx", "--package=other", memory}, NotALauncher},
		// A dist-tag (a bare name is latest) is the registry's to
		// resolve (ResolveWith): the cache alone says NotInstalled.
		{[]string{"npx", "-y", memory}, NotInstalled},
		{[]string{"npx", "-y", memory + "@latest"}, NotInstalled},
		{[]string{"npx", "-y", memory + "@next"}, NotInstalled},
		// Ranges, which npm never takes for a tag, stay unpinned.
		{[]string{"npx", "-y", memory + "@^2026.8.31"}, Unpinned},
		{[]string{"npx", "-y", memory + "@2026"}, Unpinned},
		{[]string{"npx", "-y", memory + "@v2026"}, Unpinned},
		{[]string{"npx", "-y", memory + "@x"}, Unpinned},
		{[]string{"npx", "-y", memory + "@*"}, Unpinned},
		{[]string{"npx", "-y", memory + "@>=1"}, Unpinned},
		{[]string{"npx", "-y", "@modelcontextprotocol@1.0.0"}, Unpinned},
		{[]string{"npx", "-y", memory + "@2026.8.30"}, NotInstalled},
	} {
		r := Resolve(c.argv, cache)
		if r.Package != nil || r.Reason != c.want {
			t.Errorf("%q: %+v, want %s", c.argv, r, c.want)
		}
	}
	if r := Resolve([]string{"npx", "-y", memory + "@" + memoryVersion}, t.TempDir()); r.Reason != NotInstalled {
		t.Errorf("an empty cache: %+v", r)
	}
}

// An install whose package.json says another version than the spec (a
// cache edited after npx installed it) resolves to nothing, not to the
// spec's version.
func TestResolveEditedInstall(t *testing.T) {
	cache := npxCache(t)
	copyDir := t.TempDir()
	if err := os.CopyFS(copyDir, os.DirFS(cache)); err != nil {
		t.Fatal(err)
	}
	entries, _ := filepath.Glob(filepath.Join(copyDir, "_npx", "*", "node_modules", filepath.FromSlash(memory), "package.json"))
	if len(entries) != 1 {
		t.Fatalf("%d installs of %s", len(entries), memory)
	}
	b, err := os.ReadFile(entries[0])
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), `"version": "`+memoryVersion+`"`, `"version": "9.9.9"`, 1)
	if edited == string(b) {
		t.Fatal("no version member to edit")
	}
	if err := os.WriteFile(entries[0], []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := Resolve([]string{"npx", "-y", memory + "@" + memoryVersion}, copyDir); r.Reason != Unreadable {
		t.Errorf("edited install: %+v", r)
	}
}

func TestCacheDir(t *testing.T) {
	env := map[string]string{"HOME": "/home/u"}
	get := func(k string) string { return env[k] }
	if d := CacheDir(get); d != filepath.Join("/home/u", ".npm") {
		t.Errorf("default: %s", d)
	}
	env["npm_config_cache"] = "/c"
	if d := CacheDir(get); d != "/c" {
		t.Errorf("npm_config_cache: %s", d)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if installDir != "" {
		os.RemoveAll(installDir)
	}
	os.Exit(code)
}
