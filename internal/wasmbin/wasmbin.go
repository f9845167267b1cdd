// Package wasmbin reads and writes the pieces of the WebAssembly binary
// format the build tools work on: LEB128 numbers and a module's list of
// sections. wasm/mergedata (which rewrites crawlcheck.wasm's data section in
// the Makefile's wasm target) and hosttest/bench's -wasm-size report both
// read modules with it, so that the two cannot come to disagree on how a
// module is laid out.
package wasmbin

import (
	"errors"
	"fmt"
)

// Header is the 8 bytes a module of the format's version 1 starts with: the
// magic "\0asm" and the version, little-endian.
const Header = "\x00asm\x01\x00\x00\x00"

// Uleb reads the unsigned LEB128 number at b[i:], answering it and the index
// of the byte after it. A number that runs past b or past 64 bits is an
// error.
func Uleb(b []byte, i int) (uint64, int, error) {
	var v uint64
	for s := uint(0); i < len(b) && s < 64; s += 7 {
		x := b[i]
		i++
		v |= uint64(x&0x7f) << s
		if x < 0x80 {
			return v, i, nil
		}
	}
	return 0, i, errors.New("bad LEB128")
}

// Sleb32 reads the signed LEB128 number at b[i:] that an i32.const holds,
// answering it and the index of the byte after it. More than five bytes, or
// a value outside int32, is an error.
func Sleb32(b []byte, i int) (int32, int, error) {
	var v int64
	for s := uint(0); i < len(b) && s < 35; s += 7 {
		x := b[i]
		i++
		v |= int64(x&0x7f) << s
		if x < 0x80 {
			if s+7 < 64 && x&0x40 != 0 {
				v |= -1 << (s + 7)
			}
			if v < -1<<31 || v > 1<<31-1 {
				return 0, i, errors.New("i32.const out of range")
			}
			return int32(v), i, nil
		}
	}
	return 0, i, errors.New("bad signed LEB128")
}

// AppendUleb appends v to b as unsigned LEB128, in the fewest bytes.
func AppendUleb(b []byte, v uint64) []byte {
	for {
		x := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, x)
		}
		b = append(b, x|0x80)
	}
}

// AppendSleb32 appends v to b as signed LEB128, in the fewest bytes.
func AppendSleb32(b []byte, v int32) []byte {
	for {
		x := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && x&0x40 == 0) || (v == -1 && x&0x40 != 0) {
			return append(b, x)
		}
		b = append(b, x|0x80)
	}
}

// Section is one section of a module: its id and its body (a slice of the
// module's bytes, not a copy).
type Section struct {
	ID   byte
	Body []byte
}

// Sections splits mod, after its 8-byte header (which the caller checks:
// the tools differ on which versions they take), into its sections in
// order. A section whose size runs past the module's end is an error naming
// the byte it starts at.
func Sections(mod []byte) ([]Section, error) {
	if len(mod) < len(Header) {
		return nil, errors.New("shorter than a module's header")
	}
	var out []Section
	for i := len(Header); i < len(mod); {
		n, j, err := Uleb(mod, i+1)
		if err != nil || uint64(len(mod)-j) < n {
			return nil, fmt.Errorf("section at byte %d: truncated", i)
		}
		out = append(out, Section{mod[i], mod[j : j+int(n)]})
		i = j + int(n)
	}
	return out, nil
}
