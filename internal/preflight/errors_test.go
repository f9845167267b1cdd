package preflight_test

import (
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/preflight"
)

// TestErrorCodesAreTheCores: the exported codes are docs/abi.md's closed
// list (which core/abi_fields_test.go holds to the core's own).
func TestErrorCodesAreTheCores(t *testing.T) {
	doc, err := os.ReadFile(repoPath("docs", "abi.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "## Error codes (closed list)")
	section, _, _ = strings.Cut(section, "\n## ")
	var documented []preflight.ErrorCode
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9_]+)` \\|").FindAllStringSubmatch(section, -1) {
		documented = append(documented, preflight.ErrorCode(m[1]))
	}
	if !slices.Equal(documented, preflight.ErrorCodes) {
		t.Errorf("preflight.ErrorCodes %v, docs/abi.md %v", preflight.ErrorCodes, documented)
	}
}

// TestCoreErrorBranches: a caller can branch on the code of a refusal.
func TestCoreErrorBranches(t *testing.T) {
	_, err := preflight.ReadLock([]byte(`{"kind":"crawlcheck-mcp-lock-9"}`), time.Now(), preflight.Settings{})
	var ce *preflight.CoreError
	if !errors.As(err, &ce) || ce.Code != preflight.ErrLockUnsupported || ce.Op != "verify_lock" {
		t.Errorf("ReadLock of an unknown kind: %#v, want a CoreError with ErrLockUnsupported", err)
	}
}
