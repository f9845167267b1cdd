package main

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// wasmExports are crawlcheck.wasm's exports for ABI 2 (docs/abi.md,
// wasm/exports.txt): the pure wheel's loader calls each of them.
var wasmExports = []string{"_initialize", "abi_version", "malloc", "free", "call", "call_raw", "memory"}

// wasmImportModules are the modules crawlcheck.wasm may import from: WASI
// preview 1, which wasmtime provides, and the host's SHA-256, which the
// package's loader does. Anything else would not instantiate.
var wasmImportModules = []string{"wasi_snapshot_preview1", "crawlcheck"}

// wasmtimeExtra is the one dependency any wheel may declare, and only under
// the extra "wasm": the pure wheel's runtime (pyproject.toml).
var wasmtimeExtra = regexp.MustCompile(`^Requires-Dist: wasmtime(>=[0-9.]+)?; extra == ['"]wasm['"]$`)

// readWasm reads a WebAssembly module's exports (name and kind) and the
// modules it imports from.
func readWasm(b []byte) (*lib, error) {
	if len(b) < 8 || !bytes.Equal(b[:8], []byte("\x00asm\x01\x00\x00\x00")) {
		return nil, errors.New("not a WebAssembly 1.0 binary")
	}
	l := &lib{format: "wasm", arch: "wasm32"}
	r := bytes.NewReader(b[8:])
	for r.Len() > 0 {
		id, _ := r.ReadByte()
		n, err := uleb(r)
		if err != nil {
			return nil, err
		}
		if n > uint64(r.Len()) {
			return nil, fmt.Errorf("section %d runs past the end", id)
		}
		sec := make([]byte, n)
		io.ReadFull(r, sec)
		s := bytes.NewReader(sec)
		switch id {
		case 2: // imports: module, name, description
			cnt, err := uleb(s)
			if err != nil {
				return nil, err
			}
			for i := uint64(0); i < cnt; i++ {
				mod, err1 := name(s)
				_, err2 := name(s)
				if err := errors.Join(err1, err2, skipImportDesc(s)); err != nil {
					return nil, fmt.Errorf("import %d: %v", i, err)
				}
				if !slices.Contains(l.imports, mod) {
					l.imports = append(l.imports, mod)
				}
			}
		case 7: // exports: name, kind, index
			cnt, err := uleb(s)
			if err != nil {
				return nil, err
			}
			for i := uint64(0); i < cnt; i++ {
				nm, err := name(s)
				if err != nil {
					return nil, fmt.Errorf("export %d: %v", i, err)
				}
				kind, err := s.ReadByte()
				if err != nil {
					return nil, err
				}
				if _, err := uleb(s); err != nil {
					return nil, err
				}
				if kind == 0 || (kind == 2 && nm == "memory") { // functions, and the memory
					l.exports = append(l.exports, nm)
				}
			}
		}
	}
	sort.Strings(l.imports)
	return l, nil
}

func uleb(r *bytes.Reader) (uint64, error) {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		c, err := r.ReadByte()
		if err != nil {
			return 0, errors.New("truncated LEB128")
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, nil
		}
	}
	return 0, errors.New("LEB128 too long")
}

func name(r *bytes.Reader) (string, error) {
	n, err := uleb(r)
	if err != nil || n > uint64(r.Len()) {
		return "", errors.New("truncated name")
	}
	b := make([]byte, n)
	io.ReadFull(r, b)
	return string(b), nil
}

// skipImportDesc reads past one import's description: a function's type
// index, a table's type and limits, a memory's limits, a global's type.
func skipImportDesc(r *bytes.Reader) error {
	kind, err := r.ReadByte()
	if err != nil {
		return err
	}
	limits := func() error {
		flags, err := r.ReadByte()
		if err != nil {
			return err
		}
		if _, err := uleb(r); err != nil {
			return err
		}
		if flags&1 != 0 {
			_, err = uleb(r)
		}
		return err
	}
	switch kind {
	case 0:
		_, err = uleb(r)
	case 1:
		if _, err = r.ReadByte(); err == nil {
			err = limits()
		}
	case 2:
		err = limits()
	case 3:
		_, err = r.Seek(2, io.SeekCurrent)
	default:
		err = fmt.Errorf("import kind %d", kind)
	}
	return err
}

// checkMetadata refuses a wheel whose METADATA declares a dependency outside
// an extra other than wasmtime under "wasm": the native wheels have no runtime
// dependency, and the pure wheel's runtime comes with crawlcheck[wasm].
// It reports whether the wasm extra's wasmtime is declared.
func checkMetadata(meta []byte) (bool, error) {
	if meta == nil {
		return false, errors.New("it has no METADATA")
	}
	extra := false
	for _, line := range strings.Split(strings.ReplaceAll(string(meta), "\r\n", "\n"), "\n") {
		if line == "" {
			break // the headers end; the description follows
		}
		if !strings.HasPrefix(line, "Requires-Dist: ") {
			continue
		}
		if wasmtimeExtra.MatchString(line) {
			extra = true
			continue
		}
		if !strings.Contains(line, "; extra == ") {
			return false, fmt.Errorf("METADATA declares a runtime dependency: %q", line)
		}
	}
	return extra, nil
}

// checkPure checks the py3-none-any wheel: a pure wheel (Root-Is-Purelib:
// true) whose crawlcheck/lib/ holds crawlcheck.wasm alone, a WebAssembly
// module exporting ABI 2's functions and importing only from WASI and the
// host's SHA-256, with wasmtime under the extra "wasm".
func checkPure(zr *zip.Reader) (string, error) {
	var data, wheelFile, meta []byte
	var libs []string
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, "crawlcheck/lib/") && !strings.HasSuffix(f.Name, "/") {
			libs = append(libs, f.Name)
		}
		var dst *[]byte
		switch {
		case strings.HasSuffix(f.Name, ".dist-info/WHEEL"):
			dst = &wheelFile
		case strings.HasSuffix(f.Name, ".dist-info/METADATA"):
			dst = &meta
		case f.Name == "crawlcheck/lib/crawlcheck.wasm":
			dst = &data
		default:
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return "", err
		}
		*dst, err = io.ReadAll(io.LimitReader(rc, 64<<20))
		rc.Close()
		if err != nil {
			return "", err
		}
	}
	lines := strings.Split(string(wheelFile), "\n")
	if !slices.Contains(lines, "Tag: py3-none-any") || !slices.Contains(lines, "Root-Is-Purelib: true") {
		return "", errors.New("its WHEEL does not say Tag: py3-none-any and Root-Is-Purelib: true")
	}
	if len(libs) != 1 || data == nil {
		return "", fmt.Errorf("it should hold crawlcheck/lib/crawlcheck.wasm and nothing else under crawlcheck/lib/, holds %v", libs)
	}
	extra, err := checkMetadata(meta)
	if err != nil {
		return "", err
	}
	if !extra {
		return "", errors.New(`its METADATA does not declare wasmtime under the extra "wasm"`)
	}
	l, err := readWasm(data)
	if err != nil {
		return "", fmt.Errorf("crawlcheck.wasm: %v", err)
	}
	for _, e := range wasmExports {
		if !slices.Contains(l.exports, e) {
			return "", fmt.Errorf("crawlcheck.wasm does not export %s (docs/abi.md, ABI 2)", e)
		}
	}
	for _, m := range l.imports {
		if !slices.Contains(wasmImportModules, m) {
			return "", fmt.Errorf("crawlcheck.wasm imports from %s, which neither wasmtime nor the package provides", m)
		}
	}
	return fmt.Sprintf("wasm module, exports %s, imports from %s, wasmtime under [wasm]", strings.Join(wasmExports, " "), strings.Join(l.imports, " ")), nil
}
