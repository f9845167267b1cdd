package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
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

// TestWriteRefusesWhatIsNotAFile: a device, a FIFO, a directory and a link
// to one of them stay what they are (issue 10: "-o /dev/null" as root left
// /dev/null a regular file).
func TestWriteRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	toFD := filepath.Join(dir, "to-stdout")
	if err := os.Symlink("/proc/self/fd/1", toFD); err != nil {
		t.Fatal(err)
	}
	toNull := filepath.Join(dir, "to-null")
	if err := os.Symlink("/dev/null", toNull); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "nothing"), dangling); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/null", fifo, toFD, toNull, dangling, dir} {
		before, _ := os.Lstat(p)
		if err := Write(p, []byte("lock"), 0o644); err == nil {
			t.Errorf("Write(%s) replaced it", p)
		}
		after, _ := os.Lstat(p)
		if before.Mode() != after.Mode() {
			t.Errorf("%s changed from %v to %v", p, before.Mode(), after.Mode())
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 4 {
		t.Errorf("%d entries in the directory, want the 4 made above (no temporary file left)", len(ents))
	}
}

// TestWriteFollowsALinkToAFile: the file a link names is replaced, and the
// link stays a link.
func TestWriteFollowsALinkToAFile(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real", "lock.json")
	os.Mkdir(filepath.Dir(real), 0o755)
	if err := os.WriteFile(real, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "lock.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Errorf("the linked file holds %q", b)
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the original 0600", fi.Mode().Perm())
	}
}
