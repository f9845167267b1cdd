package core_test

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// coreImports are the only packages outside the core that core code may
// import, each for a reason that keeps "no I/O, no clock, no randomness"
// true: TestCoreImports checks it rather than trusting it.
var coreImports = map[string]string{
	"cmp":           "ordering",
	"errors":        "error values",
	"math":          "number range checks",
	"slices":        "sorting",
	"sort":          "one copy of the sort code for every element type (core/internal/sorting)",
	"strconv":       "number text",
	"strings":       "string handling",
	"unicode/utf8":  "UTF-8 validation",
	"unsafe":        "zero-copy strings in the parser and of attachments",
	"sync":          "a buffer pool (no goroutines, no I/O)",
	"sync/atomic":   "the parser's container memo, read without a lock (already linked by sync)",
	"crypto/sha256": "hashing",
	"crypto/subtle": "constant-time comparison (core/internal/ed25519)",
	"math/bits":     "SHA-2's rotations (core/digest, core/internal/ed25519)",
	"filippo.io/edwards25519": "Ed25519's group arithmetic for signing and verifying with keys " +
		"the host supplies (core/internal/ed25519: signatures are deterministic; GenerateKey is refused below)",
	"encoding/base64": "key and page encodings",
	"time":            "time values and RFC 3339 text (the clock itself is refused below)",
}

// testHelperImports may be imported by core/internal/coretest, the tests'
// helper package, which no artifact links.
var testHelperImports = map[string]bool{"testing": true, "os": true, "path/filepath": true}

// forbiddenCalls are functions of allowed packages that read the clock or
// draw randomness.
var forbiddenCalls = map[string]bool{
	"time.Now": true, "time.Since": true, "time.Until": true, "time.Sleep": true,
	"time.After": true, "time.AfterFunc": true, "time.Tick": true, "time.NewTimer": true,
	"time.NewTicker": true, "ed25519.GenerateKey": true,
}

// TestCoreImports pins the core's imports to coreImports (plus the core's
// own packages; the tests' helper core/internal/coretest may also import
// testHelperImports)
// and refuses calls that read the clock or draw randomness.
func TestCoreImports(t *testing.T) {
	const module = "github.com/crawlcheck/verifier/"
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		pkg, err := build.ImportDir(path, 0)
		if _, none := err.(*build.NoGoError); none {
			return nil
		}
		if err != nil {
			return err
		}
		for _, imp := range pkg.Imports {
			switch {
			case strings.HasPrefix(imp, module+"core"):
			case coreImports[imp] != "":
			case testHelperImports[imp] && strings.Contains(filepath.ToSlash(path), "internal/coretest"):
			default:
				t.Errorf("core/%s imports %q, which is not in the core's allowlist (core/imports_test.go)", path, imp)
			}
		}
		for _, name := range pkg.GoFiles {
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(path, name), nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && forbiddenCalls[id.Name+"."+sel.Sel.Name] {
						t.Errorf("core/%s/%s uses %s.%s: the core reads no clock and draws no randomness", path, name, id.Name, sel.Sel.Name)
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
