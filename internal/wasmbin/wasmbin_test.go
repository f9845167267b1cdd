package wasmbin

import (
	"bytes"
	"math"
	"testing"
)

// The numbers of the format's own examples and the edges of each width,
// written out by hand so that the reader and the writer are each checked
// against bytes neither produced.
func TestLEB128(t *testing.T) {
	for _, c := range []struct {
		v    uint64
		want []byte
	}{
		{0, []byte{0}},
		{127, []byte{0x7f}},
		{128, []byte{0x80, 0x01}},
		{624485, []byte{0xe5, 0x8e, 0x26}},
		{math.MaxUint64, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	} {
		if got := AppendUleb([]byte{9}, c.v); !bytes.Equal(got, append([]byte{9}, c.want...)) {
			t.Errorf("AppendUleb(%d) = %x, want %x", c.v, got[1:], c.want)
		}
		v, next, err := Uleb(append([]byte{9}, append(c.want, 7)...), 1)
		if err != nil || v != c.v || next != 1+len(c.want) {
			t.Errorf("Uleb(%x) = %d, %d, %v; want %d, %d", c.want, v, next, err, c.v, 1+len(c.want))
		}
	}
	for _, c := range []struct {
		v    int32
		want []byte
	}{
		{0, []byte{0}},
		{-1, []byte{0x7f}},
		{63, []byte{0x3f}},
		{64, []byte{0xc0, 0x00}},
		{-123456, []byte{0xc0, 0xbb, 0x78}},
		{math.MaxInt32, []byte{0xff, 0xff, 0xff, 0xff, 0x07}},
		{math.MinInt32, []byte{0x80, 0x80, 0x80, 0x80, 0x78}},
	} {
		if got := AppendSleb32(nil, c.v); !bytes.Equal(got, c.want) {
			t.Errorf("AppendSleb32(%d) = %x, want %x", c.v, got, c.want)
		}
		v, next, err := Sleb32(c.want, 0)
		if err != nil || v != c.v || next != len(c.want) {
			t.Errorf("Sleb32(%x) = %d, %d, %v; want %d", c.want, v, next, err, c.v)
		}
	}
	for name, b := range map[string][]byte{"empty": nil, "unended": {0x80, 0x80}, "past 64 bits": bytes.Repeat([]byte{0x80}, 10)} {
		if _, _, err := Uleb(b, 0); err == nil {
			t.Errorf("Uleb, %s: no error", name)
		}
	}
	for name, b := range map[string][]byte{"unended": {0x80}, "past 5 bytes": {0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, "past int32": {0x80, 0x80, 0x80, 0x80, 0x08}} {
		if _, _, err := Sleb32(b, 0); err == nil {
			t.Errorf("Sleb32, %s: no error", name)
		}
	}
}

func TestSections(t *testing.T) {
	mod := []byte(Header + "\x01\x02ab" + "\x00\x00" + "\x0b\x81\x01")
	mod = append(mod, bytes.Repeat([]byte{'d'}, 129)...)
	secs, err := Sections(mod)
	if err != nil || len(secs) != 3 {
		t.Fatalf("Sections: %+v, %v", secs, err)
	}
	want := []Section{{1, []byte("ab")}, {0, []byte{}}, {11, bytes.Repeat([]byte{'d'}, 129)}}
	for k, s := range secs {
		if s.ID != want[k].ID || !bytes.Equal(s.Body, want[k].Body) {
			t.Errorf("section %d: %d %q, want %d %q", k, s.ID, s.Body, want[k].ID, want[k].Body)
		}
	}
	if secs, err := Sections([]byte(Header)); err != nil || len(secs) != 0 {
		t.Errorf("a module of no sections: %+v, %v", secs, err)
	}
	for name, b := range map[string][]byte{"short header": []byte("\x00asm"), "size past the end": mod[:len(mod)-1], "no size": []byte(Header + "\x01")} {
		if _, err := Sections(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
