package login

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// TestStoreIsTheUsersAlone: the store is written 0600 in a 0700
// directory, a store others can read is refused (not used, not
// rewritten), and a login is found by its endpoint only.
func TestStoreIsTheUsersAlone(t *testing.T) {
	s := Store{Path: filepath.Join(t.TempDir(), "crawlcheck", "tokens.json")}
	e := &Entry{Resource: "https://a.example/mcp", ClientID: "c", TokenURL: "https://as.example/token", Token: &oauth2.Token{AccessToken: "secret-a"}}
	if err := s.Put("https://a.example/mcp", e); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{s.Path: 0o600, filepath.Dir(s.Path): 0o700} {
		if info, err := os.Stat(path); err != nil || info.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %v", path, info.Mode().Perm(), err, want)
		}
	}
	if tok, err := s.AccessToken(t.Context(), "https://a.example/mcp", nil, time.Now); err != nil || tok != "secret-a" {
		t.Errorf("the login's token: %q, %v", tok, err)
	}
	if tok, err := s.AccessToken(t.Context(), "https://b.example/mcp", nil, time.Now); err != nil || tok != "" {
		t.Errorf("another endpoint got %q, %v", tok, err)
	}
	os.Chmod(s.Path, 0o644)
	if _, err := s.Get("https://a.example/mcp"); err == nil || !strings.Contains(err.Error(), "readable by others") || strings.Contains(err.Error(), "secret-a") {
		t.Errorf("a store others can read: %v", err)
	}
	os.Chmod(s.Path, 0o600)
	if ok, err := s.Delete("https://a.example/mcp"); !ok || err != nil {
		t.Errorf("delete: %v, %v", ok, err)
	}
	if data, _ := os.ReadFile(s.Path); strings.Contains(string(data), "secret-a") {
		t.Error("the token outlived logout in the store")
	}
}
