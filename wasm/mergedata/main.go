// Command mergedata rewrites crawlcheck.wasm's data section as one segment:
// the step after `go build` in the Makefile's wasm target (issue 36, the npm
// package's size).
//
// Go's linker writes the memory image as active data segments and starts a
// new segment at every run of more than 8 zero bytes, which makes the module
// smallest before compression. Compressed it does the opposite: the module
// had 47,208 segments, each a header of 5 to 8 bytes (its offset, its
// length) that gzip cannot predict. Most come from runtime.findfunctab, one
// 20-byte bucket per 4,096 program counters: on wasm a PC is the function's
// index << 16, so every function has 16 buckets of a few non-zero bytes each.
// One segment holding the zeros between them instead is 0.48 MB larger raw and
// 82 KB smaller gzipped (1.587 → 1.504 MB, gzip -9), and the npm tarball is
// gzip. The memory the module starts with is the same byte for byte
// (main_test.go checks it on a module built here).
//
//	go run ./wasm/mergedata build/crawlcheck.wasm
//
// The file is rewritten in place. A data section in any form other than the
// one Go writes (active segments for memory 0 at constant offsets, not
// overlapping) is refused, so that a toolchain that changes it is noticed
// rather than rewritten wrongly.
package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/crawlcheck/verifier/internal/wasmbin"
)

const (
	sectionData      = 11
	sectionDataCount = 12
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: mergedata MODULE.wasm")
		os.Exit(2)
	}
	if err := rewrite(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "mergedata:", err)
		os.Exit(1)
	}
}

// rewrite merges the data segments of the module at path, in place (a
// temporary file renamed over it, so a failure leaves the build's output as
// it was).
func rewrite(path string) error {
	in, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := merge(in)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".mergedata-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

type segment struct {
	offset uint32
	data   []byte
}

// merge returns the module with its data section as one segment; every
// other section is copied as it is.
func merge(mod []byte) ([]byte, error) {
	if len(mod) < 8 || string(mod[:8]) != wasmbin.Header {
		return nil, errors.New("not a WebAssembly module (version 1)")
	}
	sections, err := wasmbin.Sections(mod)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), mod[:8]...)
	seen := false
	for _, s := range sections {
		id, body := s.ID, s.Body
		switch id {
		case sectionData:
			segs, err := readData(body)
			if err != nil {
				return nil, fmt.Errorf("data section: %w", err)
			}
			body, seen = writeData(segs), true
		case sectionDataCount:
			// One segment now; the count must say so or the module is
			// invalid.
			body = wasmbin.AppendUleb(nil, 1)
		}
		out = append(out, id)
		out = wasmbin.AppendUleb(out, uint64(len(body)))
		out = append(out, body...)
	}
	if !seen {
		return nil, errors.New("no data section")
	}
	return out, nil
}

// readData reads the segments of a data section in the one form Go writes.
func readData(b []byte) ([]segment, error) {
	count, i, err := wasmbin.Uleb(b, 0)
	if err != nil {
		return nil, err
	}
	var segs []segment
	for k := uint64(0); k < count; k++ {
		flag, j, err := wasmbin.Uleb(b, i)
		if err != nil {
			return nil, err
		}
		if flag != 0 {
			return nil, fmt.Errorf("segment %d: kind %d, not an active segment of memory 0", k, flag)
		}
		if j >= len(b) || b[j] != 0x41 { // i32.const
			return nil, fmt.Errorf("segment %d: offset is not an i32.const", k)
		}
		off, j, err := wasmbin.Sleb32(b, j+1)
		if err != nil {
			return nil, fmt.Errorf("segment %d: %w", k, err)
		}
		if j >= len(b) || b[j] != 0x0b { // end
			return nil, fmt.Errorf("segment %d: offset expression longer than one i32.const", k)
		}
		if off < 0 {
			return nil, fmt.Errorf("segment %d: negative offset %d", k, off)
		}
		size, j, err := wasmbin.Uleb(b, j+1)
		if err != nil || uint64(len(b)-j) < size {
			return nil, fmt.Errorf("segment %d: truncated", k)
		}
		segs = append(segs, segment{uint32(off), b[j : j+int(size)]})
		i = j + int(size)
	}
	if i != len(b) {
		return nil, fmt.Errorf("%d bytes after the last segment", len(b)-i)
	}
	if len(segs) == 0 {
		return nil, errors.New("no segments")
	}
	slices.SortStableFunc(segs, func(a, b segment) int { return cmp.Compare(a.offset, b.offset) })
	for k := 1; k < len(segs); k++ {
		prev := segs[k-1]
		if uint64(prev.offset)+uint64(len(prev.data)) > uint64(segs[k].offset) {
			return nil, fmt.Errorf("segments at %#x and %#x overlap", prev.offset, segs[k].offset)
		}
	}
	return segs, nil
}

// writeData is a data section of one active segment from the first
// segment's offset to the last one's end, zeros in the gaps (what the
// memory holds there before the module runs).
func writeData(segs []segment) []byte {
	start := segs[0].offset
	last := segs[len(segs)-1]
	image := make([]byte, int(last.offset-start)+len(last.data))
	for _, s := range segs {
		copy(image[s.offset-start:], s.data)
	}
	b := wasmbin.AppendUleb(nil, 1)
	b = append(b, 0, 0x41)
	b = wasmbin.AppendSleb32(b, int32(start))
	b = append(b, 0x0b)
	b = wasmbin.AppendUleb(b, uint64(len(image)))
	return append(b, image...)
}
