package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/crawlcheck/verifier/internal/atomicfile"
	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/preflight"
)

// cmdKeygen makes an operator key pair: the seed from crypto/rand (the core
// draws no randomness), the public key and its id from the core.
func cmdKeygen(c *cli, args []string) error {
	fs := c.flagSet("keygen")
	out := fs.String("o", "", "write the private key to `KEYFILE` (mode 0600) and the public key to KEYFILE.pub; neither may exist")
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
	if *out == "" || *out == "-" {
		return usagef("-o KEYFILE is required: a private key is written to a file, never to stdout")
	}
	for _, p := range []string{*out, *out + ".pub"} {
		if err := atomicfile.Check(p, true); err != nil {
			return err
		}
	}
	seed := make([]byte, 32)
	if _, err := rand.Read(seed); err != nil {
		return fmt.Errorf("reading random bytes: %w", err)
	}
	priv := base64.StdEncoding.EncodeToString(seed)
	var pub struct {
		PublicKey string `json:"public_key"`
		KeyID     string `json:"key_id"`
	}
	if err := corecall.Into("public_key", map[string]string{"private_key": priv}, &pub); err != nil {
		return err
	}
	if err := atomicfile.WriteNew(*out, []byte(priv+"\n"), 0o600); err != nil {
		return err
	}
	if err := atomicfile.WriteNew(*out+".pub", []byte(pub.PublicKey+"\n"), 0o644); err != nil {
		return err
	}
	say(c.stdout, "%s %s\n", pub.KeyID, pub.PublicKey)
	return nil
}

// cmdSign signs a crawlcheck lockfile with an operator key.
func cmdSign(c *cli, args []string) error {
	fs := c.flagSet("sign")
	keyPath := fs.String("key", "", "the operator's private key `KEYFILE` (required)")
	out := fs.String("o", "", "write the signed lockfile to `FILE` (- for stdout) instead of replacing LOCKFILE")
	rest, err := c.parse(fs, args, 1)
	if err != nil {
		return err
	}
	if *keyPath == "" {
		return usagef("--key is required")
	}
	if *out == "" {
		err = checkOut(rest[0])
	} else {
		err = checkOut(*out)
	}
	if err != nil {
		return err
	}
	key, err := readKey("the signing key", *keyPath)
	if err != nil {
		return err
	}
	lock, err := readInput("the lockfile", rest[0])
	if err != nil {
		return err
	}
	signed, err := preflight.SignLock(lock, key)
	if err != nil {
		return err
	}
	dest := rest[0]
	if *out == "-" {
		_, err := c.stdout.Write(signed)
		return err
	}
	if *out != "" {
		dest = *out
	}
	if err := atomicfile.Write(dest, signed, 0o644); err != nil {
		return err
	}
	say(c.stdout, "signed: wrote %s\n", dest)
	return nil
}

// cmdVerify verifies a lockfile's signature (or its absence) against the
// operator keys and the issuer's key directory. Exit 1 when untrusted.
func cmdVerify(c *cli, args []string) error {
	fs := c.flagSet("verify")
	var keys stringList
	fs.Var(&keys, "operator-key", "an operator public key file `PUB` (repeatable)")
	issuerKeys := fs.String("issuer-keys", "", "the issuer's key directory `FILE`")
	asJSON := fs.Bool("json", false, "print the core's verify_lock answer")
	rest, err := c.parse(fs, args, 1)
	if err != nil {
		return err
	}
	sf := settingsFlags{operatorKeys: keys, issuerKeys: *issuerKeys}
	settings, err := sf.settings()
	if err != nil {
		return err
	}
	lock, err := readInput("the lockfile", rest[0])
	if err != nil {
		return err
	}
	now, err := c.clock()
	if err != nil {
		return err
	}
	info, err := preflight.ReadLock(lock, now, settings)
	if err != nil {
		return fmt.Errorf("lockfile %s: %w", rest[0], err)
	}
	if *asJSON {
		line, _ := json.Marshal(info)
		machine(c.stdout, line)
	} else {
		say(c.stdout, "%s: %s, %d tools, trust %s", rest[0], info.Format, info.Count, info.Trust)
		if info.KeyID != "" {
			say(c.stdout, ", key %s", info.KeyID)
		}
		if info.Reason != "" {
			say(c.stdout, " (%s)", info.Reason)
		}
		say(c.stdout, "\n")
	}
	if info.Trust == "untrusted" {
		return blocked("%s is untrusted: %s", rest[0], info.Reason)
	}
	return nil
}
