package ed25519

import (
	stded "crypto/ed25519"
	"crypto/sha512"
	"encoding/hex"
	"testing"
)

// RFC 8032, 7.1, tests 1-3.
var rfc8032 = []struct{ seed, pub, msg, sig string }{
	{"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
		"d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
		"e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"},
	{"4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
		"3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
		"92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"},
	{"c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
		"fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
		"6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"},
}

func unhex(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRFC8032(t *testing.T) {
	for i, v := range rfc8032 {
		priv := NewKeyFromSeed(unhex(t, v.seed))
		if got := hex.EncodeToString(priv.Public()); got != v.pub {
			t.Errorf("test %d: public key %s, want %s", i+1, got, v.pub)
		}
		sig := Sign(priv, unhex(t, v.msg))
		if got := hex.EncodeToString(sig); got != v.sig {
			t.Errorf("test %d: signature %s, want %s", i+1, got, v.sig)
		}
		if !Verify(priv.Public(), unhex(t, v.msg), sig) {
			t.Errorf("test %d: its own signature does not verify", i+1)
		}
		sig[5] ^= 1
		if Verify(priv.Public(), unhex(t, v.msg), sig) {
			t.Errorf("test %d: a flipped bit still verifies", i+1)
		}
	}
}

func TestSHA512(t *testing.T) {
	in := make([]byte, 300)
	for i := range in {
		in[i] = byte(i*31 + 7)
	}
	for n := range len(in) {
		want := sha512.Sum512(in[:n])
		if got := sum512(in[:n/3], in[n/3:n]); got != want {
			t.Fatalf("sum512 of %d bytes differs from crypto/sha512", n)
		}
	}
}

// FuzzAgainstStdlib: the same keys and signatures as crypto/ed25519, and
// the same verdict on any signature, valid or mangled.
func FuzzAgainstStdlib(f *testing.F) {
	for _, v := range rfc8032 {
		f.Add(unhex(f, v.seed), unhex(f, v.msg), unhex(f, v.sig), uint8(0))
	}
	f.Fuzz(func(t *testing.T, seed, msg, sig []byte, flip uint8) {
		if len(seed) != SeedSize {
			return
		}
		priv := NewKeyFromSeed(seed)
		want := stded.NewKeyFromSeed(seed)
		if string(priv) != string(want) {
			t.Fatalf("key of seed %x differs", seed)
		}
		s := Sign(priv, msg)
		if string(s) != string(stded.Sign(want, msg)) {
			t.Fatalf("signature differs for seed %x", seed)
		}
		pub := priv.Public()
		for _, c := range [][]byte{s, sig, mangle(s, flip)} {
			if got, w := Verify(pub, msg, c), stded.Verify(stded.PublicKey(pub), msg, c); got != w {
				t.Fatalf("Verify(%x) = %v, crypto/ed25519 says %v", c, got, w)
			}
		}
		// An arbitrary public key (often not a point).
		if len(sig) >= 32 {
			other := sig[:32]
			if got, w := Verify(other, msg, s), stded.Verify(stded.PublicKey(other), msg, s); got != w {
				t.Fatalf("Verify with key %x = %v, crypto/ed25519 says %v", other, got, w)
			}
		}
	})
}

func mangle(s []byte, flip uint8) []byte {
	c := append([]byte(nil), s...)
	c[int(flip)%len(c)] ^= 1 << (flip % 8)
	return c
}
