package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/internal/atomicfile"
	"github.com/crawlcheck/verifier/internal/issuer/service"
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

// Tenant tokens are the credentials the operator issues to the tenants it
// lets have tools they hand over signed (POST /api/v1/mcp/lock, a lockfile
// whose provenance is submitted by tenant:<id>; docs/issuer.md, Trust
// model). tenant-token --tenant ID draws one, prints it once and writes its
// SHA-256 under the id in DIR/tenant-tokens.json (0600; running it again
// replaces that tenant's token, --revoke removes it); serve reads the
// hashes at start. The token names its tenant (cctt.<id>.<secret>), so the
// service compares one hash, never tries each.

// tenantTokenFile is the tenants' token hashes, beside the keys.
const tenantTokenFile = "tenant-tokens.json"

func tenantToken(args []string, stdout, stderr io.Writer) error {
	fs, dir := flags("tenant-token", stderr)
	tenant := fs.String("tenant", "", "the tenant's id (1 to 64 of A-Z a-z 0-9 . _ -, a letter or digit first)")
	revoke := fs.Bool("revoke", false, "remove the tenant's token instead of drawing one")
	if err := parse(fs, dir, args); err != nil {
		return err
	}
	if err := tenantIDValid(*tenant); err != nil {
		return fmt.Errorf("%w: --tenant: %v", errUsage, err)
	}
	file := filepath.Join(*dir, tenantTokenFile)
	hashes, err := readTenantHashes(file)
	if err != nil {
		return err
	}
	var token string
	if *revoke {
		delete(hashes, *tenant)
	} else {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		token = service.TenantTokenPrefix + *tenant + "." + base64.RawURLEncoding.EncodeToString(b)
		h := sha256.Sum256([]byte(token))
		hashes[*tenant] = hex.EncodeToString(h[:])
	}
	body, _ := json.MarshalIndent(hashes, "", "  ")
	if err := atomicfile.Write(file, append(body, '\n'), 0o600); err != nil {
		return fmt.Errorf("tenant token: %w", err)
	}
	if *revoke {
		fmt.Fprintf(stderr, "crawlcheck-issuer: tenant %s has no token in %s (a serve started after this refuses it)\n", *tenant, file)
		return nil
	}
	fmt.Fprintln(stdout, token)
	fmt.Fprintf(stderr, "crawlcheck-issuer: its SHA-256 is in %s (a serve started after this takes it; the tenant's token before it no longer opens)\n", file)
	return nil
}

// readTenantHashes reads DIR/tenant-tokens.json: none when absent; an
// error when it is not an object of tenant ids to hex SHA-256s.
func readTenantHashes(file string) (map[string]string, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tenant token file: %w", err)
	}
	hashes := map[string]string{}
	if err := json.Unmarshal(b, &hashes); err != nil {
		return nil, fmt.Errorf("tenant token file %s: %w", file, err)
	}
	for id, h := range hashes {
		if d, err := hex.DecodeString(h); err != nil || len(d) != sha256.Size || h != strings.ToLower(h) || tenantIDValid(id) != nil {
			return nil, fmt.Errorf("tenant token file %s: tenant %q: not a tenant id and the hex SHA-256 of its token (crawlcheck-issuer tenant-token writes them)", file, id)
		}
	}
	return hashes, nil
}

// tenantIDValid asks the core whether tenant:<id> is a principal a
// lockfile's provenance may name (the rule is the core's: make_lock
// refuses any other), so no id is issued a token the service could never
// sign for.
func tenantIDValid(id string) error {
	req, _ := json.Marshal(map[string]any{"tools": []any{}, "approved_at": "2026-01-01T00:00:00Z",
		"provenance": map[string]string{"source": "submitted", "by": "tenant:" + id}})
	var env struct {
		OK    bool `json:"ok"`
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(core.Call("make_lock", req), &env); err != nil {
		return err
	}
	if !env.OK {
		return errors.New(env.Error.Message)
	}
	return nil
}
