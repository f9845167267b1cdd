package main

// wasmsize: what each package contributes to crawlcheck.wasm's code (issue
// 23). go tool nm does not read wasm, so this reads the module itself: the
// code section's function bodies, named by the name section a build without
// -ldflags=-s keeps (Go writes the '/' of a package path as '_' and keeps
// the '.' before the function and in a leading domain).
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -tags=crawlcheck_nodoc -o /tmp/named.wasm ./wasm
//	go run ./hosttest/bench -wasm-size /tmp/named.wasm

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/crawlcheck/verifier/internal/wasmbin"
)

// wasmSizeReport writes code bytes by package, then the largest functions.
func wasmSizeReport(w io.Writer, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return errors.New("wasm: not a module")
	}
	sections, err := wasmbin.Sections(b)
	if err != nil {
		return fmt.Errorf("wasm: %w", err)
	}
	var imported uint64
	var sizes []int
	names := map[uint64]string{}
	for _, sec := range sections {
		s := sec.Body
		switch sec.ID {
		case 2: // imports: count the functions, which come first in the index space
			c, i, err := wasmbin.Uleb(s, 0)
			if err != nil {
				return err
			}
			for range c {
				for range 2 {
					n, j, err := wasmbin.Uleb(s, i)
					if err != nil {
						return err
					}
					i = j + int(n)
				}
				kind := s[i]
				i++
				switch kind {
				case 0:
					imported++
					_, i, err = wasmbin.Uleb(s, i)
				case 1:
					i += 1
					flags := s[i]
					if _, i, err = wasmbin.Uleb(s, i+1); err == nil && flags&1 == 1 {
						_, i, err = wasmbin.Uleb(s, i)
					}
				case 2:
					flags := s[i]
					if _, i, err = wasmbin.Uleb(s, i+1); err == nil && flags&1 == 1 {
						_, i, err = wasmbin.Uleb(s, i)
					}
				case 3:
					i += 2
				}
				if err != nil {
					return err
				}
			}
		case 10: // code
			c, i, err := wasmbin.Uleb(s, 0)
			if err != nil {
				return err
			}
			for range c {
				n, j, err := wasmbin.Uleb(s, i)
				if err != nil {
					return err
				}
				sizes = append(sizes, int(n))
				i = j + int(n)
			}
		case 0: // custom: the name section's function names
			n, i, err := wasmbin.Uleb(s, 0)
			if err != nil || string(s[i:i+int(n)]) != "name" {
				continue
			}
			for i += int(n); i < len(s); {
				sub := s[i]
				l, j, err := wasmbin.Uleb(s, i+1)
				if err != nil {
					return err
				}
				end := j + int(l)
				if sub == 1 {
					c, j, _ := wasmbin.Uleb(s, j)
					for range c {
						var idx, ln uint64
						idx, j, _ = wasmbin.Uleb(s, j)
						ln, j, _ = wasmbin.Uleb(s, j)
						names[idx] = string(s[j : j+int(ln)])
						j += int(ln)
					}
				}
				i = end
			}
		}
	}
	if len(names) == 0 {
		return errors.New("wasm: no name section (build without -ldflags=-s)")
	}
	type entry struct {
		name string
		size int
	}
	byPkg := map[string]int{}
	var funcs []entry
	total := 0
	for k, n := range sizes {
		name := names[uint64(k)+imported]
		byPkg[packageOf(name)] += n
		funcs = append(funcs, entry{name, n})
		total += n
	}
	var pkgs []entry
	for p, n := range byPkg {
		pkgs = append(pkgs, entry{p, n})
	}
	bySize := func(a, b entry) int { return cmp.Compare(b.size, a.size) }
	slices.SortFunc(pkgs, bySize)
	slices.SortFunc(funcs, bySize)
	fmt.Fprintf(w, "module %d bytes, code %d bytes in %d functions\n", len(b), total, len(sizes))
	for _, s := range sections {
		fmt.Fprintf(w, "section %d: %d bytes\n", s.ID, len(s.Body))
	}
	fmt.Fprintln(w, "\ncode by package:")
	for _, p := range pkgs[:min(40, len(pkgs))] {
		fmt.Fprintf(w, "%9d  %5.1f%%  %s\n", p.size, 100*float64(p.size)/float64(total), p.name)
	}
	fmt.Fprintln(w, "\nlargest functions:")
	for _, f := range funcs[:min(25, len(funcs))] {
		fmt.Fprintf(w, "%9d  %s\n", f.size, f.name)
	}
	return nil
}

// packageOf is a function's package in the name section's spelling: up to
// the first '.' after a leading domain (github.com_…).
func packageOf(name string) string {
	start := 0
	if i, k := strings.IndexByte(name, '.'), strings.IndexByte(name, '_'); i > 0 && k > i+1 && strings.Trim(name[i+1:k], "abcdefghijklmnopqrstuvwxyz") == "" {
		start = k
	}
	if k := strings.IndexByte(name[start:], '.'); k >= 0 {
		return name[:start+k]
	}
	return name
}
