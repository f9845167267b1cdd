package sig

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/ed25519"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// RFC 8032 section 7.1, the Ed25519 test vectors.
var rfc8032 = []struct{ name, secret, public, message, signature string }{
	{"TEST 1",
		"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
		"d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
		"",
		"e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"},
	{"TEST 2",
		"4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
		"3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
		"72",
		"92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"},
	{"TEST 3",
		"c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
		"fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
		"af82",
		"6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"},
	{"TEST 1024",
		"f5e5767cf153319517630f226876b86c8160cc583bc013744c6bf255f5cc0ee5",
		"278117fc144c72340f67d0f2316e8386ceffbf2b2428c9c51fef7c597f1d426e",
		"08b8b2b733424243760fe426a4b54908632110a66c2f6591eabd3345e3e4eb98" +
			"fa6e264bf09efe12ee50f8f54e9f77b1e355f6c50544e23fb1433ddf73be84d8" +
			"79de7c0046dc4996d9e773f4bc9efe5738829adb26c81b37c93a1b270b20329d" +
			"658675fc6ea534e0810a4432826bf58c941efb65d57a338bbd2e26640f89ffbc" +
			"1a858efcb8550ee3a5e1998bd177e93a7363c344fe6b199ee5d02e82d522c4fe" +
			"ba15452f80288a821a579116ec6dad2b3b310da903401aa62100ab5d1a36553e" +
			"06203b33890cc9b832f79ef80560ccb9a39ce767967ed628c6ad573cb116dbef" +
			"efd75499da96bd68a8a97b928a8bbc103b6621fcde2beca1231d206be6cd9ec7" +
			"aff6f6c94fcd7204ed3455c68c83f4a41da4af2b74ef5c53f1d8ac70bdcb7ed1" +
			"85ce81bd84359d44254d95629e9855a94a7c1958d1f8ada5d0532ed8a5aa3fb2" +
			"d17ba70eb6248e594e1a2297acbbb39d502f1a8c6eb6f1ce22b3de1a1f40cc24" +
			"554119a831a9aad6079cad88425de6bde1a9187ebb6092cf67bf2b13fd65f270" +
			"88d78b7e883c8759d2c4f5c65adb7553878ad575f9fad878e80a0c9ba63bcbcc" +
			"2732e69485bbc9c90bfbd62481d9089beccf80cfe2df16a2cf65bd92dd597b07" +
			"07e0917af48bbb75fed413d238f5555a7a569d80c3414a8d0859dc65a46128ba" +
			"b27af87a71314f318c782b23ebfe808b82b0ce26401d2e22f04d83d1255dc51a" +
			"ddd3b75a2b1ae0784504df543af8969be3ea7082ff7fc9888c144da2af58429e" +
			"c96031dbcad3dad9af0dcbaaaf268cb8fcffead94f3c7ca495e056a9b47acdb7" +
			"51fb73e666c6c655ade8297297d07ad1ba5e43f1bca32301651339e22904cc8c" +
			"42f58c30c04aafdb038dda0847dd988dcda6f3bfd15c4b4c4525004aa06eeff8" +
			"ca61783aacec57fb3d1f92b0fe2fd1a85f6724517b65e614ad6808d6f6ee34df" +
			"f7310fdc82aebfd904b01e1dc54b2927094b2db68d6f903b68401adebf5a7e08" +
			"d78ff4ef5d63653a65040cf9bfd4aca7984a74d37145986780fc0b16ac451649" +
			"de6188a7dbdf191f64b5fc5e2ab47b57f7f7276cd419c17a3ca8e1b939ae49e4" +
			"88acba6b965610b5480109c8b17b80e1b7b750dfc7598d5d5011fd2dcc5600a3" +
			"2ef5b52a1ecc820e308aa342721aac0943bf6686b64b2579376504ccc493d97e" +
			"6aed3fb0f9cd71a43dd497f01f17c0e2cb3797aa2a2f256656168e6c496afc5f" +
			"b93246f6b1116398a346f1a641f3b041e989f7914f90cc2c7fff357876e506b5" +
			"0d334ba77c225bc307ba537152f3f1610e4eafe595f6d9d90d11faa933a15ef1" +
			"369546868a7f3a45a96768d40fd9d03412c091c6315cf4fde7cb68606937380d" +
			"b2eaaa707b4c4185c32eddcdd306705e4dc1ffc872eeee475a64dfac86aba41c" +
			"0618983f8741c5ef68d3a101e8a3b8cac60c905c15fc910840b94c00a0b9d0",
		"0aab4c900501b3e24d7cdf4663326a3a87df5e4843b2cbdb67cbf6e460fec350aa5371b1508f9f4528ecea23c436d94b5e8fcd4f681e30a6ac00a9704a188a03"},
	{"TEST SHA(abc)",
		"833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42",
		"ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf",
		"ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
		"dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b58909351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704"},
}

func TestRFC8032Vectors(t *testing.T) {
	if abc := sha512.Sum512([]byte("abc")); hex.EncodeToString(abc[:]) != rfc8032[4].message {
		t.Fatal("the SHA(abc) message is not SHA-512(\"abc\")")
	}
	if n := len(rfc8032[3].message) / 2; n != 1023 {
		t.Fatalf("TEST 1024 message has %d bytes, want 1023", n)
	}
	for _, v := range rfc8032 {
		t.Run(v.name, func(t *testing.T) {
			priv, err := PrivateKey(base64.StdEncoding.EncodeToString(unhex(t, v.secret)))
			if err != nil {
				t.Fatal(err)
			}
			pubB64 := base64.StdEncoding.EncodeToString(unhex(t, v.public))
			if got := EncodePublic(priv.Public()); got != pubB64 {
				t.Fatalf("public key %s, want %s", got, pubB64)
			}
			pub, err := PublicKey(pubB64)
			if err != nil {
				t.Fatal(err)
			}
			msg, want := unhex(t, v.message), unhex(t, v.signature)
			if got := ed25519.Sign(priv, msg); !bytes.Equal(got, want) {
				t.Errorf("signature %x, want %x", got, want)
			}
			if !ed25519.Verify(pub, msg, want) {
				t.Error("the RFC signature does not verify")
			}
			bad := append([]byte(nil), want...)
			bad[0] ^= 1
			if ed25519.Verify(pub, msg, bad) {
				t.Error("a flipped signature verifies")
			}
		})
	}
}

func TestKeyDecoding(t *testing.T) {
	seed := bytes.Repeat([]byte{7}, 32)
	for _, s := range []string{"", "not base64!", base64.StdEncoding.EncodeToString(seed[:31]),
		base64.StdEncoding.EncodeToString(append(seed, 0)), base64.RawURLEncoding.EncodeToString(seed)[:42] + "_"} {
		if _, err := PrivateKey(s); cerr.CodeOf(err) != cerr.KeyInvalid {
			t.Errorf("PrivateKey(%q) = %v, want key_invalid", s, err)
		}
		if _, err := PublicKey(s); cerr.CodeOf(err) != cerr.KeyInvalid {
			t.Errorf("PublicKey(%q) = %v, want key_invalid", s, err)
		}
	}
	priv, err := PrivateKey(base64.StdEncoding.EncodeToString(seed))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(priv[:32], seed) {
		t.Error("seed not kept")
	}
	pub := priv.Public()
	h := sha256.Sum256(pub)
	if got, want := OperatorKeyID(pub), "op_"+hex.EncodeToString(h[:])[:16]; got != want {
		t.Errorf("OperatorKeyID = %s, want %s", got, want)
	}
	if _, err := PublicKey(strings.Repeat("A", 200)); !strings.Contains(cerr.Message(err), "…") {
		t.Errorf("a long key is not clipped in the message: %v", err)
	}
}

func TestSignFormat(t *testing.T) {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32))
	digest := strings.Repeat("ab", 32)
	if got := string(Message("crawlcheck-mcp-lock", digest)); got != "crawlcheck.sig.v1:crawlcheck-mcp-lock:"+digest {
		t.Errorf("Message = %q", got)
	}
	s := Sign(priv, "k1:2026", "crawlcheck-mcp-lock", digest)
	encoded, found := strings.CutPrefix(s, "ed25519:k1:2026:")
	if !found || len(encoded) != 86 || strings.ContainsAny(encoded, ":=+/") {
		t.Fatalf("signature string %q", s)
	}
	raw, err := base64.RawURLEncoding.DecodeString(encoded)
	if err != nil || !ed25519.Verify(priv.Public(), []byte("crawlcheck.sig.v1:crawlcheck-mcp-lock:"+digest), raw) {
		t.Error("the signature is not over the domain-separated message")
	}
	if KeyIDOf(s) != "k1:2026" || KeyIDOf("garbage") != "" {
		t.Error("KeyIDOf")
	}
}

var (
	now       = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	issuer    = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, 32))
	retired   = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, 32))
	future    = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{4}, 32))
	expired   = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{5}, 32))
	operator  = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{6}, 32))
	otherOp   = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{8}, 32))
	directory = &Directory{Issuer: "crawlcheck.io", Keys: []Key{
		{ID: "cc-2026", Public: issuer.Public(), Status: StatusActive, NotBefore: now.AddDate(-1, 0, 0), NotAfter: now.AddDate(1, 0, 0)},
		{ID: "cc-2025", Public: retired.Public(), Status: StatusRetired},
		{ID: "cc-2027", Public: future.Public(), Status: StatusActive, NotBefore: now.Add(time.Second)},
		{ID: "cc-2024", Public: expired.Public(), Status: StatusActive, NotAfter: now},
	}}
)

func opID(k ed25519.PrivateKey) string { return OperatorKeyID(k.Public()) }

func TestVerify(t *testing.T) {
	const kind = "crawlcheck-mcp-lock"
	d := canon.SHA256Hex(canon.Str("content"))
	e := canon.SHA256Hex(canon.Str("edited"))
	keys := Keys{Directory: directory, Operator: []ed25519.PublicKey{operator.Public()}}
	onlyOther := Keys{Directory: directory, Operator: []ed25519.PublicKey{otherOp.Public()}}
	good := Sign(issuer, "cc-2026", kind, d)
	for _, c := range []struct {
		name                 string
		stored, content, sig string
		keys                 Keys
		trust, reason, keyID string
	}{
		{"unsigned", "", d, "", keys, Unsigned, "", ""},
		{"unsigned with a matching sha256", d, d, "", keys, Unsigned, "", ""},
		{"unsigned, sha256 does not match", d, e, "", keys, Untrusted, ReasonDigestMismatch, ""},
		{"issuer key", d, d, good, keys, Verified, "", "cc-2026"},
		{"issuer key, no operator keys", d, d, good, Keys{Directory: directory}, Verified, "", "cc-2026"},
		{"operator key", d, d, Sign(operator, opID(operator), kind, d), keys, OperatorSigned, "", opID(operator)},
		{"edited after signing", d, e, good, keys, Untrusted, ReasonEdited, "cc-2026"},
		{"signature over another digest", e, e, good, keys, Untrusted, ReasonBadSignature, "cc-2026"},
		{"signed by another key under the issuer's id", d, d, Sign(otherOp, "cc-2026", kind, d), keys, Untrusted, ReasonBadSignature, "cc-2026"},
		{"another kind (domain separation)", d, d, Sign(issuer, "cc-2026", "crawlcheck-receipt", d), keys, Untrusted, ReasonBadSignature, "cc-2026"},
		{"key not in the directory", d, d, Sign(issuer, "cc-1999", kind, d), keys, Untrusted, ReasonForeignKey, "cc-1999"},
		{"no directory", d, d, good, Keys{}, Untrusted, ReasonForeignKey, "cc-2026"},
		{"operator id, no operator keys", d, d, Sign(operator, opID(operator), kind, d), Keys{Directory: directory}, Untrusted, ReasonForeignKey, opID(operator)},
		{"wrong operator key", d, d, Sign(operator, opID(operator), kind, d), onlyOther, Untrusted, ReasonWrongOperatorKey, opID(operator)},
		{"operator key under another op id", d, d, Sign(operator, opID(otherOp), kind, d), onlyOther, Untrusted, ReasonBadSignature, opID(otherOp)},
		{"retired key", d, d, Sign(retired, "cc-2025", kind, d), keys, Untrusted, ReasonRetiredKey, "cc-2025"},
		{"key not yet valid", d, d, Sign(future, "cc-2027", kind, d), keys, Untrusted, ReasonOutsideValidity, "cc-2027"},
		{"key expired (not_after is exclusive)", d, d, Sign(expired, "cc-2024", kind, d), keys, Untrusted, ReasonOutsideValidity, "cc-2024"},
		{"no ed25519 prefix", d, d, strings.TrimPrefix(good, "ed25519:"), keys, Untrusted, ReasonMalformedSignature, ""},
		{"no key id", d, d, "ed25519:" + good[strings.LastIndexByte(good, ':'):], keys, Untrusted, ReasonMalformedSignature, ""},
		{"short signature", d, d, good[:len(good)-4], keys, Untrusted, ReasonMalformedSignature, ""},
		{"padded base64", d, d, good + "==", keys, Untrusted, ReasonMalformedSignature, ""},
		{"standard base64 alphabet", d, d, "ed25519:cc-2026:" + strings.Repeat("+", 86), keys, Untrusted, ReasonMalformedSignature, ""},
		{"signature without sha256", "", d, good, keys, Untrusted, ReasonMalformedSignature, "cc-2026"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Verify(kind, c.stored, c.content, c.sig, c.keys, now)
			if r.Trust != c.trust || r.Reason != c.reason || r.KeyID != c.keyID {
				t.Errorf("got %+v, want trust %s reason %q key %q", r, c.trust, c.reason, c.keyID)
			}
		})
	}
}

func TestUsableBoundaries(t *testing.T) {
	k := Key{Status: StatusActive, NotBefore: now, NotAfter: now.Add(time.Hour)}
	for at, want := range map[time.Time]string{
		now.Add(-time.Nanosecond): ReasonOutsideValidity,
		now:                       "",
		now.Add(59 * time.Minute): "",
		now.Add(time.Hour):        ReasonOutsideValidity,
	} {
		if got := k.Usable(at); got != want {
			t.Errorf("Usable(%s) = %q, want %q", at, got, want)
		}
	}
	if (Key{Status: StatusActive}).Usable(now) != "" {
		t.Error("an open window is not usable")
	}
	if (Key{Status: StatusRetired}).Usable(now) != ReasonRetiredKey {
		t.Error("a retired key is usable")
	}
}

func dirDoc(keys string) string {
	return `{"kind":"crawlcheck-key-directory","v":1,"issuer":"crawlcheck.io","keys":[` + keys + `]}`
}

func TestParseDirectory(t *testing.T) {
	pub := base64.StdEncoding.EncodeToString(issuer.Public())
	pub2 := base64.StdEncoding.EncodeToString(retired.Public())
	key := func(extra string) string {
		return `{"kid":"cc-2026","alg":"ed25519","public_key":"` + pub + `","status":"active"` + extra + `}`
	}
	v, err := canon.ParseString(dirDoc(key(`,"not_before":"2026-01-01T00:00:00Z","not_after":"2027-01-01T01:00:00+01:00"`) +
		`,{"kid":"cc-2025","alg":"ed25519","public_key":"` + pub2 + `","status":"retired"}`))
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseDirectory(v)
	if err != nil {
		t.Fatal(err)
	}
	k, ok := d.Lookup("cc-2026")
	if d.Issuer != "crawlcheck.io" || len(d.Keys) != 2 || !ok || k.Status != StatusActive ||
		!k.NotBefore.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) || !k.NotAfter.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) ||
		!bytes.Equal(k.Public, issuer.Public()) {
		t.Errorf("read %+v", d)
	}
	if k, _ := d.Lookup("cc-2025"); k.Status != StatusRetired || !k.NotBefore.IsZero() || !k.NotAfter.IsZero() {
		t.Errorf("cc-2025: %+v", k)
	}
	var nilDir *Directory
	if _, ok := nilDir.Lookup("cc-2026"); ok {
		t.Error("a nil directory has a key")
	}

	for _, c := range []struct{ doc, msg string }{
		{`[]`, "not an object"},
		{`{"kind":"crawlcheck-keys","v":1,"keys":[]}`, "kind is"},
		{`{"kind":"crawlcheck-key-directory","v":2,"keys":[]}`, "unsupported v 2"},
		{`{"kind":"crawlcheck-key-directory","v":1}`, "keys is not an array"},
		{`{"kind":"crawlcheck-key-directory","v":1,"issuer":7,"keys":[]}`, "issuer is not a string"},
		{dirDoc(`{"alg":"ed25519","public_key":"` + pub + `","status":"active"}`), "keys[0].kid"},
		{dirDoc(`{"kid":"","alg":"ed25519","public_key":"` + pub + `","status":"active"}`), "keys[0].kid"},
		{dirDoc(`{"kid":"op_0123456789abcdef","alg":"ed25519","public_key":"` + pub + `","status":"active"}`), `not starting with "op_"`},
		{dirDoc(`{"kid":"k","alg":"ES256","public_key":"` + pub + `","status":"active"}`), "keys[0].alg"},
		{dirDoc(`{"kid":"k","alg":"ed25519","public_key":"AAAA","status":"active"}`), "keys[0].public_key"},
		{dirDoc(`{"kid":"k","alg":"ed25519","status":"active"}`), "keys[0].public_key"},
		{dirDoc(`{"kid":"k","alg":"ed25519","public_key":"` + pub + `","status":"revoked"}`), "keys[0].status"},
		{dirDoc(`{"kid":"k","alg":"ed25519","public_key":"` + pub + `"}`), "keys[0].status"},
		{dirDoc(key(`,"not_before":"tomorrow"`)), "keys[0].not_before"},
		{dirDoc(key(`,"not_after":17e8`)), "keys[0].not_after"},
		{dirDoc(key("") + "," + key("")), `kid "cc-2026" appears twice`},
	} {
		v, err := canon.ParseString(c.doc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseDirectory(v); cerr.CodeOf(err) != cerr.KeyInvalid || !strings.Contains(cerr.Message(err), c.msg) {
			t.Errorf("%s: got %v, want key_invalid containing %q", c.doc, err, c.msg)
		}
	}
}

// TestPrivateKey: a seed gives the key a derivation gives, each time, and
// a seed spelled in a way only a lax decoder reads is refused.
func TestPrivateKey(t *testing.T) {
	for i := byte(0); i < 3; i++ {
		seed := bytes.Repeat([]byte{i}, ed25519.SeedSize)
		text := base64.StdEncoding.EncodeToString(seed)
		for try := 0; try < 2; try++ {
			priv, err := PrivateKey(text)
			if err != nil || !bytes.Equal(priv, ed25519.NewKeyFromSeed(seed)) {
				t.Fatalf("seed %d try %d: %x, %v", i, try, priv, err)
			}
		}
	}
	// A seed's text with its last character changed to one that decodes
	// to the same bytes in a lax decoder: refused.
	text := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{5}, ed25519.SeedSize))
	lax := text[:len(text)-2] + "F="
	if lax != text {
		if _, err := PrivateKey(lax); cerr.CodeOf(err) != cerr.KeyInvalid {
			t.Errorf("PrivateKey(%q) = %v, want key_invalid", lax, err)
		}
	}
}
