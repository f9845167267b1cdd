package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/crawlcheck/verifier/internal/atomicfile"
)

// The operator token is the credential that publishes corrections (POST
// /api/v1/corrections, docs/issuer.md). operator-token prints a new one once
// and writes only its SHA-256 beside the keys; serve reads that hash, so
// neither the disk nor the process holds a token that could write into the
// log.

// operatorTokenFile is where the hash is kept unless --file says otherwise.
const operatorTokenFile = "operator-token.sha256"

func operatorToken(args []string, stdout, stderr io.Writer) error {
	fs, dir := flags("operator-token", stderr)
	file := fs.String("file", "", "where to write the token's SHA-256 (default DIR/"+operatorTokenFile+")")
	if err := parse(fs, dir, args); err != nil {
		return err
	}
	if *file == "" {
		*file = filepath.Join(*dir, operatorTokenFile)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	token := "cco_" + base64.RawURLEncoding.EncodeToString(b)
	h := sha256.Sum256([]byte(token))
	if err := atomicfile.Write(*file, []byte(hex.EncodeToString(h[:])+"\n"), 0o600); err != nil {
		return fmt.Errorf("operator token: %w", err)
	}
	// The token alone on stdout, the way serve prints its URL: a script
	// keeps it; it is shown this once.
	fmt.Fprintln(stdout, token)
	fmt.Fprintf(stderr, "crawlcheck-issuer: its SHA-256 is in %s (a serve started after this takes it; the token before it no longer corrects)\n", *file)
	return nil
}

// readOperatorHash reads the operator token's SHA-256 for serve: "" when
// the default file is absent (the service then takes no corrections); an
// error when a named file is absent or either holds no SHA-256.
func readOperatorHash(file string, named bool) (string, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) && !named {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("operator token file: %w", err)
	}
	h := strings.ToLower(strings.TrimSpace(string(b)))
	if d, err := hex.DecodeString(h); err != nil || len(d) != sha256.Size {
		return "", fmt.Errorf("operator token file %s: not the hex SHA-256 of a token (crawlcheck-issuer operator-token writes one)", file)
	}
	return h, nil
}
