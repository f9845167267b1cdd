package core

import (
	"sync"

	"github.com/crawlcheck/verifier/core/internal/ed25519"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/sig"
)

// Keyring is the signing keys a native Go host derives once and keeps
// itself: the issuer signs every receipt with one key (two during a
// rotation), and deriving a key's public half from its seed (a scalar
// multiplication) was a tenth of sign_receipt's own work. The instance
// keeps no key (docs/abi.md, State): a seed handed to an SDK's instance
// (sign_lock in a browser page) must not outlive the call, so the keys
// live in the host's Keyring, which it makes, holds and drops.
//
// A Keyring keeps the keysKept seeds it last derived, by their exact text
// (one text has one seed: base64 is decoded strictly), so a key from it is
// the key a derivation would give, and a seed that does not decode is
// refused by the op as always. The zero value is ready; it is safe for
// concurrent use.
type Keyring struct {
	mu   sync.Mutex
	keys []ringKey // most recently used first
}

type ringKey struct {
	seed string
	priv ed25519.PrivateKey
}

// keysKept bounds a Keyring: a host signs with one key, two during a
// rotation.
const keysKept = 4

// Call is core.Call with the signing keys of the request (private_key)
// taken from, or derived into, the ring.
func (k *Keyring) Call(op string, request []byte) []byte {
	return call(op, request, uint64(len(request)), false, func() (req.Obj, error) {
		o, err := req.Parse(request)
		o.Keys = k.key
		return o, err
	})
}

// key answers the private key of seedB64, derived once.
func (k *Keyring) key(seedB64 string) (ed25519.PrivateKey, error) {
	k.mu.Lock()
	for i, e := range k.keys {
		if e.seed == seedB64 {
			copy(k.keys[1:i+1], k.keys[:i])
			k.keys[0] = e
			k.mu.Unlock()
			return e.priv, nil
		}
	}
	k.mu.Unlock()
	priv, err := sig.PrivateKey(seedB64)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.keys = append([]ringKey{{string([]byte(seedB64)), priv}}, k.keys[:min(len(k.keys), keysKept-1)]...)
	return priv, nil
}
