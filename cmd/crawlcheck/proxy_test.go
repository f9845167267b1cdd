package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProxyToken: the proxy's token is made once, in a file only its
// owner can read, read back unchanged after, and refused once others can
// read it.
func TestProxyToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawlcheck", "proxy-token")
	first, made, err := proxyToken(path)
	if err != nil || !made || len(first) != 64 {
		t.Fatalf("made %v, %q, %v", made, first, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the token file: %v %v", fi, err)
	}
	again, made, err := proxyToken(path)
	if err != nil || made || again != first {
		t.Fatalf("read back %v, %q, %v", made, again, err)
	}
	os.Chmod(path, 0o644)
	if _, _, err := proxyToken(path); err == nil || !strings.Contains(err.Error(), "can be read by others") {
		t.Fatalf("a token others can read: %v", err)
	}
}

// TestProxyRefusesAnotherInterface: crawlcheck proxy will not listen off
// loopback, and says why.
func TestProxyRefusesAnotherInterface(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "lock.json"), []byte("{}"), 0o644)
	code, _, stderr := runCLI("proxy", "--listen", "0.0.0.0:0", "--upstream", "http://127.0.0.1:9/mcp", "--lock", filepath.Join(dir, "lock.json"), "--token-file", filepath.Join(dir, "token"))
	if code != exitError || !strings.Contains(stderr, "loopback only") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}
