// Package keys is the issuer's signing keys on disk and the key directory it
// serves (docs/keys.md, docs/issuer.md "Keys and rotation").
//
// A key directory on disk is one state file, keys.json, and one seed file
// per key, <kid>.seed (the base64 of its 32-byte Ed25519 seed, mode 0600).
// A seed readable by the group or the world is refused: a signing service
// that runs with a leaked key vouches for whoever has it. The public key of
// each seed is the core's (public_key op): the service draws randomness and
// keeps files, and derives nothing itself.
//
// Rotation: Rotate makes a new active key that signs from then on and keeps
// the old ones active until their overlap ends (retire_after), so receipts
// and lockfiles signed just before still verify while hosts pick up the new
// directory; Retire marks them retired. A key whose overlap has ended is
// served as retired even before anyone runs retire: the overlap the operator
// set is a promise, and failing closed keeps it.
package keys

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/crawlcheck/verifier/internal/atomicfile"
	"github.com/crawlcheck/verifier/internal/corecall"
)

// StateFile is the name of the state file in a key directory.
const StateFile = "keys.json"

// Key is one key of the state file.
type Key struct {
	KID         string     `json:"kid"`
	PublicKey   string     `json:"public_key"`
	Status      string     `json:"status"` // active or retired
	NotBefore   time.Time  `json:"not_before"`
	CreatedAt   time.Time  `json:"created_at"`
	RetireAfter *time.Time `json:"retire_after,omitempty"` // set by Rotate on the keys it supersedes
	RetiredAt   *time.Time `json:"retired_at,omitempty"`
}

// State is keys.json: the issuer's name and every key it ever had, oldest
// first. The newest active key signs.
type State struct {
	Issuer string `json:"issuer"`
	Keys   []Key  `json:"keys"`
}

// Signer is a key that signs: its id and seed.
type Signer struct {
	KID  string
	Seed string
}

var kidPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Init makes a new key directory with one active key. An existing state file
// is refused: init never replaces keys.
func Init(dir, issuer string, now time.Time) (*State, error) {
	if issuer == "" {
		return nil, errors.New("keys init: the issuer needs a name (--issuer)")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("keys init: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, StateFile)); err == nil {
		return nil, fmt.Errorf("keys init: %s already holds keys (%s): rotate them instead", dir, StateFile)
	}
	st := &State{Issuer: issuer}
	if err := st.add(dir, now); err != nil {
		return nil, err
	}
	return st, st.save(dir, true)
}

// Load reads a key directory's state file.
func Load(dir string) (*State, error) {
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		return nil, fmt.Errorf("keys: %w (run crawlcheck-issuer keys init --dir %s)", err, dir)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("keys: %s: %w", filepath.Join(dir, StateFile), err)
	}
	if st.Issuer == "" || len(st.Keys) == 0 {
		return nil, fmt.Errorf("keys: %s names no issuer or no key", filepath.Join(dir, StateFile))
	}
	return &st, nil
}

// Rotate adds a new active key; every key active before stays active for
// overlap, then counts as retired.
func Rotate(dir string, overlap time.Duration, now time.Time) (*State, error) {
	if overlap < 0 {
		return nil, errors.New("keys rotate: a negative overlap")
	}
	st, err := Load(dir)
	if err != nil {
		return nil, err
	}
	until := now.Add(overlap).UTC()
	for i := range st.Keys {
		k := &st.Keys[i]
		if k.Status == "active" && (k.RetireAfter == nil || k.RetireAfter.After(until)) {
			k.RetireAfter = &until
		}
	}
	if err := st.add(dir, now); err != nil {
		return nil, err
	}
	return st, st.save(dir, false)
}

// Retire retires the key kid, or with kid empty every key whose overlap has
// ended. The key that signs is never retired: rotate first.
func Retire(dir, kid string, now time.Time) (*State, []string, error) {
	st, err := Load(dir)
	if err != nil {
		return nil, nil, err
	}
	signing := st.signingIndex(now)
	var done []string
	for i := range st.Keys {
		k := &st.Keys[i]
		if k.Status != "active" {
			if kid == k.KID {
				return nil, nil, fmt.Errorf("keys retire: %s is already retired", kid)
			}
			continue
		}
		due := kid == k.KID || (kid == "" && k.RetireAfter != nil && !now.Before(*k.RetireAfter))
		if !due {
			continue
		}
		if i == signing {
			return nil, nil, fmt.Errorf("keys retire: %s is the key that signs: rotate first", k.KID)
		}
		t := now.UTC()
		k.Status, k.RetiredAt = "retired", &t
		done = append(done, k.KID)
	}
	if kid != "" && len(done) == 0 {
		return nil, nil, fmt.Errorf("keys retire: no key %q", kid)
	}
	return st, done, st.save(dir, false)
}

func (st *State) add(dir string, now time.Time) error {
	seed := make([]byte, 32)
	if _, err := rand.Read(seed); err != nil {
		return fmt.Errorf("keys: drawing a seed: %w", err)
	}
	seedB64 := base64.StdEncoding.EncodeToString(seed)
	var pk struct {
		PublicKey string `json:"public_key"`
	}
	if err := corecall.Into("public_key", map[string]string{"private_key": seedB64}, &pk); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	sum := sha256.Sum256([]byte(pk.PublicKey))
	kid := fmt.Sprintf("%s-%s", now.UTC().Format("20060102"), hex.EncodeToString(sum[:])[:8])
	if !kidPattern.MatchString(kid) {
		return fmt.Errorf("keys: made an invalid key id %q", kid)
	}
	if err := atomicfile.WriteNew(filepath.Join(dir, kid+".seed"), []byte(seedB64+"\n"), 0o600); err != nil {
		return fmt.Errorf("keys: writing the seed: %w", err)
	}
	t := now.UTC().Truncate(time.Second)
	st.Keys = append(st.Keys, Key{KID: kid, PublicKey: pk.PublicKey, Status: "active", NotBefore: t, CreatedAt: now.UTC()})
	return nil
}

func (st *State) save(dir string, fresh bool) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	path := filepath.Join(dir, StateFile)
	if fresh {
		err = atomicfile.WriteNew(path, b, 0o600)
	} else {
		err = atomicfile.Write(path, b, 0o600)
	}
	if err != nil {
		return fmt.Errorf("keys: writing %s: %w", path, err)
	}
	return nil
}

// status is a key's status at now: retired once retired, or once its
// overlap has ended.
func (k Key) status(now time.Time) string {
	if k.Status == "active" && k.RetireAfter != nil && !now.Before(*k.RetireAfter) {
		return "retired"
	}
	return k.Status
}

// signingIndex is the newest key active at now, -1 when none is.
func (st *State) signingIndex(now time.Time) int {
	for i := len(st.Keys) - 1; i >= 0; i-- {
		if st.Keys[i].status(now) == "active" && !now.Before(st.Keys[i].NotBefore) {
			return i
		}
	}
	return -1
}

// Directory is the key directory served at /api/v1/keys, as of now
// (docs/keys.md): every key, newest first, with the status it has then.
func (st *State) Directory(now time.Time) json.RawMessage {
	type entry struct {
		KID       string `json:"kid"`
		Alg       string `json:"alg"`
		PublicKey string `json:"public_key"`
		Status    string `json:"status"`
		NotBefore string `json:"not_before"`
	}
	d := struct {
		Kind   string  `json:"kind"`
		V      int     `json:"v"`
		Issuer string  `json:"issuer"`
		Keys   []entry `json:"keys"`
	}{Kind: "crawlcheck-key-directory", V: 1, Issuer: st.Issuer, Keys: []entry{}}
	for i := len(st.Keys) - 1; i >= 0; i-- {
		k := st.Keys[i]
		d.Keys = append(d.Keys, entry{KID: k.KID, Alg: "ed25519", PublicKey: k.PublicKey, Status: k.status(now),
			NotBefore: k.NotBefore.UTC().Format("2006-01-02T15:04:05Z")})
	}
	b, _ := json.MarshalIndent(d, "", "  ")
	return append(b, '\n')
}

// History is a directory in which every key the issuer ever had is active
// with no window: what resign checks an old signature against, since a
// retired key verifies nothing (docs/keys.md).
func (st *State) History() json.RawMessage {
	type entry struct {
		KID       string `json:"kid"`
		Alg       string `json:"alg"`
		PublicKey string `json:"public_key"`
		Status    string `json:"status"`
	}
	d := struct {
		Kind   string  `json:"kind"`
		V      int     `json:"v"`
		Issuer string  `json:"issuer"`
		Keys   []entry `json:"keys"`
	}{Kind: "crawlcheck-key-directory", V: 1, Issuer: st.Issuer}
	for _, k := range st.Keys {
		d.Keys = append(d.Keys, entry{KID: k.KID, Alg: "ed25519", PublicKey: k.PublicKey, Status: "active"})
	}
	b, _ := json.Marshal(d)
	return b
}

// Signer is the key that signs at now, its seed read from disk (and refused
// when group- or world-accessible).
func (st *State) Signer(dir string, now time.Time) (Signer, error) {
	i := st.signingIndex(now)
	if i < 0 {
		return Signer{}, fmt.Errorf("keys: no key of %s is active at %s: rotate", dir, now.UTC().Format(time.RFC3339))
	}
	seed, err := ReadSeed(dir, st.Keys[i].KID)
	if err != nil {
		return Signer{}, err
	}
	return Signer{KID: st.Keys[i].KID, Seed: seed}, nil
}

// ReadSeed reads a key's seed file, refusing one that is not a regular file
// of mode 0600 or stricter.
func ReadSeed(dir, kid string) (string, error) {
	if !kidPattern.MatchString(kid) {
		return "", fmt.Errorf("keys: invalid key id %q", kid)
	}
	path := filepath.Join(dir, kid+".seed")
	fi, err := os.Lstat(path)
	if err != nil {
		return "", fmt.Errorf("keys: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("keys: %s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("keys: %s is readable by others (mode %04o): chmod 600 it, and rotate if it may have leaked", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("keys: %w", err)
	}
	seed := string(trimNL(b))
	if raw, err := base64.StdEncoding.DecodeString(seed); err != nil || len(raw) != 32 {
		return "", fmt.Errorf("keys: %s is not the base64 of a 32-byte seed", path)
	}
	return seed, nil
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// Live is a key directory a running service reads: the state file is read
// again whenever it changes on disk, so rotate and retire take effect on the
// next request without a restart.
type Live struct {
	dir  string
	mu   sync.Mutex
	mod  time.Time
	size int64
	st   *State
	seed map[string]string
}

// Open loads a key directory for serving; its signing key must be readable.
func Open(dir string, now time.Time) (*Live, error) {
	l := &Live{dir: dir, seed: map[string]string{}}
	st, err := l.State()
	if err != nil {
		return nil, err
	}
	if _, err := st.Signer(dir, now); err != nil {
		return nil, err
	}
	return l, nil
}

// State answers the current state, reloaded if the file changed.
func (l *Live) State() (*State, error) {
	fi, err := os.Stat(filepath.Join(l.dir, StateFile))
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st == nil || !fi.ModTime().Equal(l.mod) || fi.Size() != l.size {
		st, err := Load(l.dir)
		if err != nil {
			return nil, err
		}
		l.st, l.mod, l.size = st, fi.ModTime(), fi.Size()
	}
	return l.st, nil
}

// Signer answers the key that signs at now.
func (l *Live) Signer(now time.Time) (Signer, error) {
	st, err := l.State()
	if err != nil {
		return Signer{}, err
	}
	i := st.signingIndex(now)
	if i < 0 {
		return Signer{}, fmt.Errorf("keys: no key of %s is active: rotate", l.dir)
	}
	kid := st.Keys[i].KID
	l.mu.Lock()
	seed, ok := l.seed[kid]
	l.mu.Unlock()
	if !ok {
		if seed, err = ReadSeed(l.dir, kid); err != nil {
			return Signer{}, err
		}
		l.mu.Lock()
		l.seed[kid] = seed
		l.mu.Unlock()
	}
	return Signer{KID: kid, Seed: seed}, nil
}

// Directory is the key directory to serve now.
func (l *Live) Directory(now time.Time) (json.RawMessage, error) {
	st, err := l.State()
	if err != nil {
		return nil, err
	}
	return st.Directory(now), nil
}

// History is every key the issuer had, as active keys (State.History).
func (l *Live) History() (json.RawMessage, error) {
	st, err := l.State()
	if err != nil {
		return nil, err
	}
	return st.History(), nil
}

// Issuer is the issuer's name.
func (l *Live) Issuer() (string, error) {
	st, err := l.State()
	if err != nil {
		return "", err
	}
	return st.Issuer, nil
}
