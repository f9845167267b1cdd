package keys_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/keys"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

type dirDoc struct {
	Issuer string
	Keys   []struct{ KID, Status, Public_Key string }
}

func directory(t *testing.T, st *keys.State, now time.Time) dirDoc {
	t.Helper()
	var d dirDoc
	if err := json.Unmarshal(st.Directory(now), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestRotationAndRetirement(t *testing.T) {
	dir := t.TempDir()
	st, err := keys.Init(dir, "issuer.example", t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Init(dir, "issuer.example", t0); err == nil {
		t.Fatal("init over existing keys was accepted")
	}
	first, err := st.Signer(dir, t0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(dir, first.KID+".seed"))
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("seed mode %04o, want 0600", fi.Mode().Perm())
	}
	t1 := t0.Add(24 * time.Hour)
	st, err = keys.Rotate(dir, time.Hour, t1)
	if err != nil {
		t.Fatal(err)
	}
	second, err := st.Signer(dir, t1)
	if err != nil || second.KID == first.KID {
		t.Fatalf("after rotate the signer is %v, %v; want a new key", second.KID, err)
	}
	d := directory(t, st, t1.Add(time.Minute))
	if len(d.Keys) != 2 || d.Keys[0].KID != second.KID || d.Keys[1].Status != "active" {
		t.Fatalf("during the overlap: %+v", d)
	}
	if d := directory(t, st, t1.Add(time.Hour)); d.Keys[1].Status != "retired" {
		t.Fatalf("after the overlap the old key is served %q, want retired", d.Keys[1].Status)
	}
	if _, _, err := keys.Retire(dir, second.KID, t1); err == nil || !strings.Contains(err.Error(), "signs") {
		t.Fatalf("retiring the signing key: %v", err)
	}
	st, done, err := keys.Retire(dir, first.KID, t1.Add(time.Minute))
	if err != nil || len(done) != 1 {
		t.Fatalf("retire: %v %v", done, err)
	}
	if d := directory(t, st, t1.Add(time.Minute)); d.Keys[1].Status != "retired" || d.Issuer != "issuer.example" {
		t.Fatalf("after retire: %+v", d)
	}
}

func TestSeedReadableByOthersIsRefused(t *testing.T) {
	dir := t.TempDir()
	st, err := keys.Init(dir, "issuer.example", t0)
	if err != nil {
		t.Fatal(err)
	}
	kid := st.Keys[0].KID
	for _, mode := range []os.FileMode{0o640, 0o604} {
		os.Chmod(filepath.Join(dir, kid+".seed"), mode)
		if _, err := keys.Open(dir, t0); err == nil || !strings.Contains(err.Error(), "readable by others") {
			t.Fatalf("mode %04o: %v, want a refusal", mode, err)
		}
	}
	os.Chmod(filepath.Join(dir, kid+".seed"), 0o600)
	if _, err := keys.Open(dir, t0); err != nil {
		t.Fatal(err)
	}
}

func TestLiveFollowsTheFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := keys.Init(dir, "issuer.example", t0); err != nil {
		t.Fatal(err)
	}
	live, err := keys.Open(dir, t0)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := live.Signer(t0)
	if _, err := keys.Rotate(dir, time.Hour, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	b, err := live.Signer(t0.Add(2 * time.Second))
	if err != nil || a.KID == b.KID {
		t.Fatalf("the live keys did not follow a rotation: %s then %s (%v)", a.KID, b.KID, err)
	}
}
