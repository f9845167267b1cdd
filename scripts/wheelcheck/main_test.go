package main

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// wheel writes a wheel file named for plat holding lib as libName and a
// WHEEL saying tag.
func wheel(t *testing.T, dir, plat, tag, libName string, lib []byte) string {
	return wheelWith(t, dir, plat, tag, libName, lib, "false", metadata)
}

// metadata is the METADATA hatchling writes for pyproject.toml: dependencies
// under extras only (and, after the blank line, the description).
const metadata = "Metadata-Version: 2.5\nName: crawlcheck\nVersion: 2.0.0\nProvides-Extra: mcp\n" +
	"Requires-Dist: mcp>=1.18; extra == 'mcp'\nProvides-Extra: wasm\nRequires-Dist: wasmtime>=50.0.1; extra == 'wasm'\n\nRequires-Dist: described\n"

func wheelWith(t *testing.T, dir, plat, tag, libName string, lib []byte, purelib, meta string) string {
	t.Helper()
	p := filepath.Join(dir, "crawlcheck-2.0.0-py3-none-"+plat+".whl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, data := range map[string][]byte{
		"crawlcheck/__init__.py":                 []byte("\n"),
		"crawlcheck/lib/" + libName:              lib,
		"crawlcheck-2.0.0.dist-info/WHEEL":       []byte("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: " + purelib + "\nTag: py3-none-" + tag + "\n"),
		"crawlcheck-2.0.0.dist-info/METADATA":    []byte(meta),
		"crawlcheck-2.0.0.dist-info/licenses/LI": []byte("x"),
	} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

// TestCheckWheel: the checker passes this machine's own library under a tag
// that fits it and refuses it under every tag that does not (the PE, Mach-O
// and cross-built ELF paths run in make wheels on the real wheels).
func TestCheckWheel(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("builds this machine's libcrawlcheck.so: linux/amd64 only")
	}
	dir := t.TempDir()
	so := filepath.Join(dir, "libcrawlcheck.so")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", so, "./cshared")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cshared: %v\n%s", err, out)
	}
	lib, err := os.ReadFile(so)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := checkWheel(wheel(t, t.TempDir(), "manylinux_2_99_x86_64", "manylinux_2_99_x86_64", "libcrawlcheck.so", lib))
	if err != nil {
		t.Fatalf("this machine's library under manylinux_2_99_x86_64: %v", err)
	}
	if !strings.Contains(sum, "elf x86_64") || !strings.Contains(sum, "crawlcheck_call_raw") || !strings.Contains(sum, "libc.so.6") {
		t.Errorf("summary %q", sum)
	}
	for _, c := range []struct{ plat, tag, name, want string }{
		{"manylinux_2_99_aarch64", "manylinux_2_99_aarch64", "libcrawlcheck.so", "is for x86_64, the tag says arm64"},
		{"win_amd64", "win_amd64", "crawlcheck.dll", "is not a pe library"},
		{"macosx_12_0_x86_64", "macosx_12_0_x86_64", "libcrawlcheck.dylib", "is not a macho library"},
		{"musllinux_1_2_x86_64", "musllinux_1_2_x86_64", "libcrawlcheck.so", "not one this project builds"},
		{"manylinux_2_99_x86_64", "linux_x86_64", "libcrawlcheck.so", "does not say Tag: py3-none-manylinux_2_99_x86_64"},
		{"manylinux_2_99_x86_64", "manylinux_2_99_x86_64", "crawlcheck.dll", "should hold crawlcheck/lib/libcrawlcheck.so"},
		{"linux_x86_64", "linux_x86_64", "libcrawlcheck.so", "not one this project builds"},
	} {
		_, err := checkWheel(wheel(t, t.TempDir(), c.plat, c.tag, c.name, lib))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s (Tag %s, %s): %v, want an error saying %q", c.plat, c.tag, c.name, err, c.want)
		}
	}
	// Built against this machine's glibc (2.34 or later moved pthread into
	// libc), it does not fit the oldest manylinux the release promises.
	l, err := readELF(lib)
	if err != nil {
		t.Fatal(err)
	}
	if older("2.17", l.glibc) {
		_, err := checkWheel(wheel(t, t.TempDir(), "manylinux_2_17_x86_64", "manylinux_2_17_x86_64", "libcrawlcheck.so", lib))
		if err == nil || !strings.Contains(err.Error(), "needs glibc "+l.glibc+", the tag promises 2.17") {
			t.Errorf("glibc %s library under manylinux_2_17: %v", l.glibc, err)
		}
	}
}
