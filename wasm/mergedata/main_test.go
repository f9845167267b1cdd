package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/crawlcheck/verifier/internal/wasmbin"
)

// module is a WebAssembly module of the given sections (id, body).
func module(sections ...[]byte) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	for _, s := range sections {
		b = append(b, s[0])
		b = wasmbin.AppendUleb(b, uint64(len(s)-1))
		b = append(b, s[1:]...)
	}
	return b
}

// dataSection is a data section of active segments for memory 0, in the
// order given.
func dataSection(segs ...segment) []byte {
	b := wasmbin.AppendUleb([]byte{sectionData}, uint64(len(segs)))
	for _, s := range segs {
		b = append(b, 0, 0x41)
		b = wasmbin.AppendSleb32(b, int32(s.offset))
		b = append(b, 0x0b)
		b = wasmbin.AppendUleb(b, uint64(len(s.data)))
		b = append(b, s.data...)
	}
	return b
}

// sections splits a module into its sections (id byte, then body).
func sections(t *testing.T, mod []byte) [][]byte {
	t.Helper()
	secs, err := wasmbin.Sections(mod)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, s := range secs {
		out = append(out, append([]byte{s.ID}, s.Body...))
	}
	return out
}

// memoryImage is the linear memory a module's data section writes before
// it runs, up to the last byte written, and the number of segments.
func memoryImage(t *testing.T, mod []byte) ([]byte, int) {
	t.Helper()
	var image []byte
	n := 0
	for _, s := range sections(t, mod) {
		if s[0] != sectionData {
			continue
		}
		segs, err := readData(s[1:])
		if err != nil {
			t.Fatal(err)
		}
		for _, seg := range segs {
			end := int(seg.offset) + len(seg.data)
			if end > len(image) {
				image = append(image, make([]byte, end-len(image))...)
			}
			copy(image[seg.offset:], seg.data)
		}
		n += len(segs)
	}
	return image, n
}

func TestMergeKeepsTheMemoryImage(t *testing.T) {
	typeSec := []byte{1, 1, 0x60, 0, 0} // one type, () -> ()
	custom := append([]byte{0, 4}, "name"...)
	in := module(typeSec,
		dataSection(
			segment{0x2000, []byte("later")},
			segment{0x1000, []byte{1, 2, 3}},
			segment{0x1010, bytes.Repeat([]byte{9}, 200)},
		),
		[]byte{sectionDataCount, 3},
		custom,
	)
	out, err := merge(in)
	if err != nil {
		t.Fatal(err)
	}
	wantImage, wantN := memoryImage(t, in)
	gotImage, gotN := memoryImage(t, out)
	if wantN != 3 || gotN != 1 {
		t.Fatalf("segments %d -> %d, want 3 -> 1", wantN, gotN)
	}
	if !bytes.Equal(gotImage, wantImage) {
		t.Fatal("the merged module's memory image differs")
	}
	got, orig := sections(t, out), sections(t, in)
	if len(got) != len(orig) {
		t.Fatalf("%d sections, want %d", len(got), len(orig))
	}
	for k := range got {
		switch got[k][0] {
		case sectionData:
		case sectionDataCount:
			if !bytes.Equal(got[k], []byte{sectionDataCount, 1}) {
				t.Errorf("data count section %x, want one segment", got[k])
			}
		default:
			if !bytes.Equal(got[k], orig[k]) {
				t.Errorf("section %d (id %d) changed", k, got[k][0])
			}
		}
	}
	// The segment starts where the first one did, not at 0.
	segs, err := readData(got[1][1:])
	if err != nil || len(segs) != 1 || segs[0].offset != 0x1000 || len(segs[0].data) != 0x2000+5-0x1000 {
		t.Fatalf("merged segment %+v, %v", segs, err)
	}
}

func TestMergeRefusesOtherForms(t *testing.T) {
	overlap := module(dataSection(segment{0x1000, []byte("abcd")}, segment{0x1002, []byte("xy")}))
	passive := module([]byte{sectionData, 1, 1, 2, 'h', 'i'})
	global := module([]byte{sectionData, 1, 0, 0x23, 0, 0x0b, 1, 'x'}) // offset from global.get 0
	trailing := module(append(dataSection(segment{0x1000, []byte("a")}), 0))
	for name, mod := range map[string][]byte{"overlap": overlap, "passive": passive, "global offset": global, "trailing bytes": trailing, "no data": module([]byte{1, 1, 0x60, 0, 0}), "not wasm": []byte("\x7fELF....")} {
		if _, err := merge(mod); err == nil {
			t.Errorf("%s: merged, want an error", name)
		}
	}
}

func gzipLen(t *testing.T, b []byte) int {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return buf.Len()
}

// The real module: built as the Makefile builds it (without the merge),
// merged, the same memory image in one segment, and smaller gzipped.
func TestMergeCrawlcheckWasm(t *testing.T) {
	if testing.Short() {
		t.Skip("builds crawlcheck.wasm")
	}
	path := filepath.Join(t.TempDir(), "crawlcheck.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", path, ".")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	in, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := rewrite(path); err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wantImage, wantN := memoryImage(t, in)
	gotImage, gotN := memoryImage(t, out)
	if gotN != 1 || wantN < 1000 {
		t.Fatalf("segments %d -> %d: Go's linker no longer splits the data at zeros? (then this step has nothing to do)", wantN, gotN)
	}
	if !bytes.Equal(gotImage, wantImage) {
		t.Fatal("the merged module's memory image differs")
	}
	if g, w := gzipLen(t, out), gzipLen(t, in); g >= w {
		t.Errorf("gzipped %d bytes merged, %d as linked: the merge no longer pays", g, w)
	} else {
		t.Logf("gzip -9 (Go's): %d -> %d bytes; raw %d -> %d", w, g, len(in), len(out))
	}
	if again, err := merge(out); err != nil || !bytes.Equal(again, out) {
		t.Errorf("merging a merged module again changed it (%v)", err)
	}
}
