// Command wheelcheck reads the crawlcheck wheels a release builds (make
// wheels) and checks, for each, that the core library inside is the one its
// platform tag promises (or, for the py3-none-any wheel, that crawlcheck.wasm
// is the ABI 2 module: wasm.go), without running it: the object format and machine
// (ELF, Mach-O, PE; x86-64 or arm64), the four functions of crawlcheck.h's
// ABI 2 among its exports, the system libraries it needs (no MinGW or GCC
// runtime DLL a Windows machine does not have), and the oldest system it
// asks for against the tag (glibc symbol versions for manylinux, the
// minimum macOS in LC_BUILD_VERSION for macosx), and that no wheel declares
// a runtime dependency (wasmtime only under the extra "wasm").
//
//	go run ./scripts/wheelcheck build/wheels/*.whl
//
// It prints one line per wheel and exits 1 when any check fails.
package main

import (
	"archive/zip"
	"bytes"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// abiExports are the functions crawlcheck.h declares for ABI 2; a library
// without crawlcheck_call_raw is ABI 1, which the Python package refuses.
var abiExports = []string{"crawlcheck_abi_version", "crawlcheck_call", "crawlcheck_call_raw", "crawlcheck_free"}

// lib is what a library file says about itself.
type lib struct {
	format  string // elf, macho, pe
	arch    string // x86_64, arm64
	exports []string
	imports []string // the libraries it is linked against
	glibc   string   // the newest GLIBC_x.y symbol version it needs (ELF)
	minos   string   // the oldest macOS it runs on (Mach-O)
}

func readELF(b []byte) (*lib, error) {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	l := &lib{format: "elf"}
	switch f.Machine {
	case elf.EM_X86_64:
		l.arch = "x86_64"
	case elf.EM_AARCH64:
		l.arch = "arm64"
	default:
		l.arch = f.Machine.String()
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil, err
	}
	newest := [2]int{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF && elf.ST_BIND(s.Info) == elf.STB_GLOBAL && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			l.exports = append(l.exports, s.Name)
		}
		if v, ok := strings.CutPrefix(s.Version, "GLIBC_"); ok && s.Section == elf.SHN_UNDEF {
			if mj, mn, ok := strings.Cut(v, "."); ok {
				a, _ := strconv.Atoi(mj)
				c, _ := strconv.Atoi(strings.SplitN(mn, ".", 2)[0])
				if a > newest[0] || (a == newest[0] && c > newest[1]) {
					newest = [2]int{a, c}
				}
			}
		}
	}
	if newest[0] > 0 {
		l.glibc = fmt.Sprintf("%d.%d", newest[0], newest[1])
	}
	l.imports, err = f.ImportedLibraries()
	return l, err
}

func readMachO(b []byte) (*lib, error) {
	f, err := macho.NewFile(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	l := &lib{format: "macho"}
	switch f.Cpu {
	case macho.CpuAmd64:
		l.arch = "x86_64"
	case macho.CpuArm64:
		l.arch = "arm64"
	default:
		l.arch = f.Cpu.String()
	}
	if f.Symtab != nil {
		for _, s := range f.Symtab.Syms {
			// N_EXT and defined in a section (N_SECT): an exported symbol.
			if s.Type&0x01 != 0 && s.Type&0x0e == 0x0e {
				l.exports = append(l.exports, strings.TrimPrefix(s.Name, "_"))
			}
		}
	}
	for _, ld := range f.Loads {
		raw := ld.Raw()
		// LC_BUILD_VERSION: cmd, cmdsize, platform, minos (xxxx.yy.zz).
		if len(raw) >= 16 && f.ByteOrder.Uint32(raw) == 0x32 {
			v := f.ByteOrder.Uint32(raw[12:])
			l.minos = fmt.Sprintf("%d.%d", v>>16, (v>>8)&0xff)
		}
	}
	l.imports, err = f.ImportedLibraries()
	return l, err
}

func readPE(b []byte) (*lib, error) {
	f, err := pe.NewFile(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	l := &lib{format: "pe"}
	switch f.Machine {
	case pe.IMAGE_FILE_MACHINE_AMD64:
		l.arch = "x86_64"
	case pe.IMAGE_FILE_MACHINE_ARM64:
		l.arch = "arm64"
	default:
		l.arch = fmt.Sprintf("machine %#x", f.Machine)
	}
	oh, ok := f.OptionalHeader.(*pe.OptionalHeader64)
	if !ok || len(oh.DataDirectory) == 0 {
		return nil, errors.New("PE: no 64-bit optional header")
	}
	// at answers the section bytes from a relative virtual address on.
	at := func(a uint32) ([]byte, error) {
		for _, s := range f.Sections {
			if a >= s.VirtualAddress && a < s.VirtualAddress+s.VirtualSize {
				d, err := s.Data()
				if err != nil {
					return nil, err
				}
				if off := a - s.VirtualAddress; int(off) < len(d) {
					return d[off:], nil
				}
			}
		}
		return nil, fmt.Errorf("PE: address %#x in no section", a)
	}
	if dir := oh.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_EXPORT]; dir.VirtualAddress != 0 {
		// IMAGE_EXPORT_DIRECTORY: NumberOfNames at 24, AddressOfNames at 32.
		hdr, err := at(dir.VirtualAddress)
		if err != nil || len(hdr) < 40 {
			return nil, fmt.Errorf("PE: export directory: %v", err)
		}
		n, names := binary.LittleEndian.Uint32(hdr[24:]), binary.LittleEndian.Uint32(hdr[32:])
		ptrs, err := at(names)
		if err != nil || uint64(len(ptrs)) < 4*uint64(n) {
			return nil, fmt.Errorf("PE: export name table: %v", err)
		}
		for i := range n {
			name, err := at(binary.LittleEndian.Uint32(ptrs[4*i:]))
			if err != nil {
				return nil, err
			}
			if end := bytes.IndexByte(name, 0); end >= 0 {
				name = name[:end]
			}
			l.exports = append(l.exports, string(name))
		}
	}
	syms, err := f.ImportedSymbols()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, s := range syms {
		if _, dll, ok := strings.Cut(s, ":"); ok && !seen[strings.ToLower(dll)] {
			seen[strings.ToLower(dll)] = true
			l.imports = append(l.imports, strings.ToLower(dll))
		}
	}
	sort.Strings(l.imports)
	return l, nil
}

// want is what a wheel's platform tag promises of the library inside.
type want struct {
	file, format, arch string
	glibc              string   // the newest glibc the tag allows (manylinux_X_Y)
	macos              string   // the oldest macOS the tag names (macosx_X_Y)
	imports            []string // every library it may be linked against
}

var (
	manylinuxTag = regexp.MustCompile(`^manylinux_(\d+)_(\d+)_(x86_64|aarch64)$`)
	macosTag     = regexp.MustCompile(`^macosx_(\d+)_(\d+)_(x86_64|arm64)$`)
	windowsTag   = regexp.MustCompile(`^win_(amd64|arm64)$`)
)

// glibcLibs are the glibc libraries a manylinux wheel may link against (PEP
// 600's list, the ones a Go c-shared library can ask for).
var glibcLibs = []string{"libc.so.6", "libpthread.so.0", "libdl.so.2", "libm.so.6", "librt.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}

// windowsDLLs are the system DLLs every Windows 10 and later has (the
// Universal CRT's api-ms-win-crt-* sets included); a MinGW runtime DLL
// (libwinpthread-1.dll, libgcc_s_seh-1.dll) is not among them.
var windowsDLLs = []string{"kernel32.dll", "msvcrt.dll", "ucrtbase.dll", "ws2_32.dll", "winmm.dll", "advapi32.dll", "ntdll.dll", "user32.dll", "bcrypt.dll",
	"api-ms-win-crt-heap-l1-1-0.dll", "api-ms-win-crt-runtime-l1-1-0.dll", "api-ms-win-crt-stdio-l1-1-0.dll", "api-ms-win-crt-string-l1-1-0.dll",
	"api-ms-win-crt-private-l1-1-0.dll", "api-ms-win-crt-math-l1-1-0.dll", "api-ms-win-crt-time-l1-1-0.dll", "api-ms-win-crt-convert-l1-1-0.dll",
	"api-ms-win-crt-environment-l1-1-0.dll", "api-ms-win-crt-locale-l1-1-0.dll", "api-ms-win-crt-utility-l1-1-0.dll", "api-ms-win-crt-filesystem-l1-1-0.dll"}

func arch(tag string) string {
	switch tag {
	case "aarch64", "arm64":
		return "arm64"
	case "amd64", "x86_64":
		return "x86_64"
	}
	return tag
}

func expect(plat string) (*want, error) {
	if m := manylinuxTag.FindStringSubmatch(plat); m != nil {
		return &want{file: "libcrawlcheck.so", format: "elf", arch: arch(m[3]), glibc: m[1] + "." + m[2], imports: glibcLibs}, nil
	}
	if m := macosTag.FindStringSubmatch(plat); m != nil {
		return &want{file: "libcrawlcheck.dylib", format: "macho", arch: arch(m[3]), macos: m[1] + "." + m[2], imports: []string{
			"/usr/lib/libSystem.B.dylib", "/usr/lib/libresolv.9.dylib",
			"/System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation",
		}}, nil
	}
	if m := windowsTag.FindStringSubmatch(plat); m != nil {
		return &want{file: "crawlcheck.dll", format: "pe", arch: arch(m[1]), imports: windowsDLLs}, nil
	}
	return nil, fmt.Errorf("platform tag %q is not one this project builds", plat)
}

// older reports whether version a ("X.Y") is older than b.
func older(a, b string) bool {
	pa, pb := strings.SplitN(a, ".", 2), strings.SplitN(b, ".", 2)
	ma, _ := strconv.Atoi(pa[0])
	mb, _ := strconv.Atoi(pb[0])
	if ma != mb {
		return ma < mb
	}
	na, _ := strconv.Atoi(pa[1])
	nb, _ := strconv.Atoi(pb[1])
	return na < nb
}

// checkWheel answers a one-line summary of a wheel, or what is wrong with it.
func checkWheel(path string) (string, error) {
	// name-version-py3-none-PLAT.whl (PEP 427).
	parts := strings.Split(strings.TrimSuffix(filepath.Base(path), ".whl"), "-")
	if len(parts) != 5 || parts[2] != "py3" || parts[3] != "none" {
		return "", fmt.Errorf("file name is not name-version-py3-none-PLATFORM.whl")
	}
	plat := parts[4]
	if plat == "any" {
		zr, err := zip.OpenReader(path)
		if err != nil {
			return "", err
		}
		defer zr.Close()
		return checkPure(&zr.Reader)
	}
	w, err := expect(plat)
	if err != nil {
		return "", err
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		return "", err
	}
	defer zr.Close()
	var data, meta []byte
	var libs []string
	tagOK := false
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, "crawlcheck/lib/") && !strings.HasSuffix(f.Name, "/") {
			libs = append(libs, f.Name)
		}
		if strings.HasSuffix(f.Name, ".dist-info/WHEEL") || strings.HasSuffix(f.Name, ".dist-info/METADATA") || f.Name == "crawlcheck/lib/"+w.file {
			rc, err := f.Open()
			if err != nil {
				return "", err
			}
			b, err := io.ReadAll(io.LimitReader(rc, 64<<20))
			rc.Close()
			if err != nil {
				return "", err
			}
			if strings.HasSuffix(f.Name, "/WHEEL") {
				tagOK = slices.Contains(strings.Split(string(b), "\n"), "Tag: py3-none-"+plat) && strings.Contains(string(b), "Root-Is-Purelib: false")
			} else if strings.HasSuffix(f.Name, "/METADATA") {
				meta = b
			} else {
				data = b
			}
		}
	}
	if !tagOK {
		return "", fmt.Errorf("its WHEEL does not say Tag: py3-none-%s and Root-Is-Purelib: false", plat)
	}
	if len(libs) != 1 || data == nil {
		return "", fmt.Errorf("it should hold crawlcheck/lib/%s and nothing else under crawlcheck/lib/, holds %v", w.file, libs)
	}
	if _, err := checkMetadata(meta); err != nil {
		return "", err
	}
	var l *lib
	switch w.format {
	case "elf":
		l, err = readELF(data)
	case "macho":
		l, err = readMachO(data)
	case "pe":
		l, err = readPE(data)
	}
	if err != nil {
		return "", fmt.Errorf("%s is not a %s library: %v", w.file, w.format, err)
	}
	if l.arch != w.arch {
		return "", fmt.Errorf("%s is for %s, the tag says %s", w.file, l.arch, w.arch)
	}
	for _, e := range abiExports {
		if !slices.Contains(l.exports, e) {
			return "", fmt.Errorf("%s does not export %s (crawlcheck.h, ABI 2)", w.file, e)
		}
	}
	for _, i := range l.imports {
		if !slices.ContainsFunc(w.imports, func(a string) bool { return strings.EqualFold(a, i) }) {
			return "", fmt.Errorf("%s needs %s, which a %s system need not have", w.file, i, plat)
		}
	}
	if w.glibc != "" && l.glibc != "" && older(w.glibc, l.glibc) {
		return "", fmt.Errorf("%s needs glibc %s, the tag promises %s", w.file, l.glibc, w.glibc)
	}
	if w.macos != "" && (l.minos == "" || older(w.macos, l.minos)) {
		return "", fmt.Errorf("%s asks for macOS %q, the tag promises %s", w.file, l.minos, w.macos)
	}
	extra := ""
	if l.glibc != "" {
		extra = ", glibc ≥ " + l.glibc
	}
	if l.minos != "" {
		extra = ", macOS ≥ " + l.minos
	}
	return fmt.Sprintf("%s %s%s, exports %s, links %s", l.format, l.arch, extra, strings.Join(abiExports, " "), strings.Join(l.imports, " ")), nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: wheelcheck WHEEL...")
		os.Exit(2)
	}
	failed := false
	for _, p := range os.Args[1:] {
		sum, err := checkWheel(p)
		if err != nil {
			fmt.Printf("FAIL %s: %v\n", filepath.Base(p), err)
			failed = true
			continue
		}
		fmt.Printf("ok   %s: %s\n", filepath.Base(p), sum)
	}
	if failed {
		os.Exit(1)
	}
}
