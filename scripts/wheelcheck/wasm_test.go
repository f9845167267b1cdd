package main

import (
	"strings"
	"testing"
)

// module is a WebAssembly binary with the given imports (module.name
// functions) and exports (functions, and "memory" as a memory): all the
// checker reads of one.
func module(imports [][2]string, exports []string) []byte {
	str := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	sec := func(id byte, n int, body []byte) []byte {
		body = append([]byte{byte(n)}, body...)
		return append([]byte{id, byte(len(body))}, body...)
	}
	var imp, exp []byte
	for _, i := range imports {
		imp = append(append(append(imp, str(i[0])...), str(i[1])...), 0, 0) // func, type 0
	}
	for k, e := range exports {
		kind := byte(0)
		if e == "memory" {
			kind = 2
		}
		exp = append(append(exp, str(e)...), kind, byte(k))
	}
	b := []byte("\x00asm\x01\x00\x00\x00")
	b = append(b, sec(1, 1, []byte{0x60, 0, 0})...) // a type section the checker skips
	b = append(b, sec(2, len(imports), imp)...)
	return append(b, sec(7, len(exports), exp)...)
}

// TestCheckPure: the py3-none-any wheel passes with the ABI 2 module, and
// each way it could be wrong is refused; a native wheel declaring a runtime
// dependency is refused too.
func TestCheckPure(t *testing.T) {
	imports := [][2]string{{"wasi_snapshot_preview1", "fd_write"}, {"crawlcheck", "sha256"}}
	good := module(imports, wasmExports)
	sum, err := checkWheel(wheelWith(t, t.TempDir(), "any", "any", "crawlcheck.wasm", good, "true", metadata))
	if err != nil {
		t.Fatalf("the pure wheel: %v", err)
	}
	if !strings.Contains(sum, "call_raw") || !strings.Contains(sum, "imports from crawlcheck wasi_snapshot_preview1") {
		t.Errorf("summary %q", sum)
	}
	noExtra := strings.Replace(metadata, `Requires-Dist: wasmtime>=50.0.1; extra == 'wasm'`, "", 1)
	runtimeDep := strings.Replace(metadata, `; extra == 'wasm'`, "", 1)
	for _, c := range []struct {
		name, purelib, meta, want string
		lib                       []byte
	}{
		{"ABI 1 module", "true", metadata, "does not export call_raw", module(imports, []string{"_initialize", "abi_version", "malloc", "free", "call", "memory"})},
		{"foreign import", "true", metadata, "imports from env", module(append(imports, [2]string{"env", "f"}), wasmExports)},
		{"not wasm", "true", metadata, "not a WebAssembly 1.0 binary", []byte("\x7fELF")},
		{"platlib", "false", metadata, "Root-Is-Purelib: true", good},
		{"no extra", "true", noExtra, `does not declare wasmtime under the extra "wasm"`, good},
		{"runtime dependency", "true", runtimeDep, "declares a runtime dependency", good},
	} {
		_, err := checkWheel(wheelWith(t, t.TempDir(), "any", "any", "crawlcheck.wasm", c.lib, c.purelib, c.meta))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	if _, err := checkWheel(wheelWith(t, t.TempDir(), "any", "any", "crawlcheck.dll", good, "true", metadata)); err == nil || !strings.Contains(err.Error(), "should hold crawlcheck/lib/crawlcheck.wasm") {
		t.Errorf("a pure wheel without the module: %v", err)
	}
	// A native wheel with a runtime dependency: refused before its library is read.
	_, err = checkWheel(wheelWith(t, t.TempDir(), "win_amd64", "win_amd64", "crawlcheck.dll", []byte("MZ"), "false", runtimeDep))
	if err == nil || !strings.Contains(err.Error(), "declares a runtime dependency") {
		t.Errorf("a native wheel requiring wasmtime: %v", err)
	}
}
