package sig

import (
	"time"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/ed25519"
	"github.com/crawlcheck/verifier/core/timefmt"
)

// Key statuses in a directory.
const (
	StatusActive  = "active"
	StatusRetired = "retired"
)

// Key is one issuer key. A zero NotBefore or NotAfter leaves that side open.
type Key struct {
	ID        string
	Public    ed25519.PublicKey
	Status    string
	NotBefore time.Time
	NotAfter  time.Time
}

// Usable returns "" when the key may vouch for something at now, else the
// reason it may not.
func (k Key) Usable(now time.Time) string {
	if k.Status == StatusRetired {
		return ReasonRetiredKey
	}
	if !k.NotBefore.IsZero() && now.Before(k.NotBefore) || !k.NotAfter.IsZero() && !now.Before(k.NotAfter) {
		return ReasonOutsideValidity
	}
	return ""
}

// Directory is an issuer's published key directory (docs/keys.md):
//
//	{"kind":"crawlcheck-key-directory","v":1,"issuer":"…",
//	 "keys":[{"kid":"…","alg":"ed25519","public_key":"<base64>",
//	          "status":"active"|"retired","not_before"?:time,"not_after"?:time}]}
type Directory struct {
	Issuer string
	Keys   []Key
}

// Lookup finds a key by id. A nil directory has no keys.
func (d *Directory) Lookup(id string) (Key, bool) {
	if d == nil {
		return Key{}, false
	}
	for _, k := range d.Keys {
		if k.ID == id {
			return k, true
		}
	}
	return Key{}, false
}

// ParseDirectory reads a key directory document.
func ParseDirectory(v canon.Value) (*Directory, error) {
	bad := func(format string, args ...any) (*Directory, error) {
		return nil, cerr.New(cerr.KeyInvalid, "key directory: "+format, args...)
	}
	if v.Kind() != canon.Object {
		return bad("is %s, not an object", v.Kind())
	}
	if k, _ := v.Get("kind"); k.String() != `"crawlcheck-key-directory"` {
		return bad("kind is %s, want \"crawlcheck-key-directory\"", k)
	}
	if ver, _ := v.Get("v"); ver.String() != "1" {
		return bad("unsupported v %s", ver)
	}
	d := &Directory{}
	if iss, ok := v.Get("issuer"); ok {
		if d.Issuer, ok = iss.Str(); !ok {
			return bad("issuer is not a string")
		}
	}
	keys, _ := v.Get("keys")
	if keys.Kind() != canon.Array {
		return bad("keys is not an array")
	}
	for i, kv := range keys.Elems() {
		var k Key
		var ok bool
		idV, _ := kv.Get("kid")
		if k.ID, ok = idV.Str(); !ok || k.ID == "" || len(k.ID) >= len(OperatorPrefix) && k.ID[:len(OperatorPrefix)] == OperatorPrefix {
			return bad("keys[%d].kid must be a non-empty string not starting with %q", i, OperatorPrefix)
		}
		if alg, _ := kv.Get("alg"); alg.String() != `"ed25519"` {
			return bad("keys[%d].alg must be \"ed25519\"", i)
		}
		pubV, _ := kv.Get("public_key")
		pubS, _ := pubV.Str()
		pub, err := PublicKey(pubS)
		if err != nil {
			return nil, cerr.In("key directory: keys["+canon.Int(int64(i)).String()+"].public_key", err)
		}
		k.Public = pub
		stV, _ := kv.Get("status")
		if k.Status, _ = stV.Str(); k.Status != StatusActive && k.Status != StatusRetired {
			return bad("keys[%d].status must be \"active\" or \"retired\"", i)
		}
		for _, f := range []struct {
			name string
			dst  *time.Time
		}{{"not_before", &k.NotBefore}, {"not_after", &k.NotAfter}} {
			if tv, ok := kv.Get(f.name); ok {
				ts, _ := tv.Str()
				t, err := timefmt.Parse(ts)
				if err != nil {
					return bad("keys[%d].%s: %v", i, f.name, cerr.Message(err))
				}
				*f.dst = t
			}
		}
		if _, dup := d.Lookup(k.ID); dup {
			return bad("kid %q appears twice", k.ID)
		}
		d.Keys = append(d.Keys, k)
	}
	return d, nil
}
