package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesAndKeepsMode(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock.json")
	if err := Write(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "two" {
		t.Fatalf("read %q, %v; want two", b, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the original 0600", fi.Mode().Perm())
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
		t.Errorf("%d entries left in the directory, want only the file", len(ents))
	}
}

func TestWriteNewRefusesToReplace(t *testing.T) {
	p := filepath.Join(t.TempDir(), "key")
	if err := WriteNew(p, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteNew(p, []byte("second"), 0o600); err == nil {
		t.Fatal("WriteNew replaced an existing file")
	}
	if b, _ := os.ReadFile(p); string(b) != "first" {
		t.Errorf("content %q, want first", b)
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
		t.Errorf("%d entries left in the directory, want only the key", len(ents))
	}
}

func TestWriteIntoMissingDirectory(t *testing.T) {
	if err := Write(filepath.Join(t.TempDir(), "no", "such", "f"), nil, 0o644); err == nil {
		t.Fatal("wrote into a directory that does not exist")
	}
}
