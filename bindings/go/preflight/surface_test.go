package preflight_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"
)

// publicSurface is every name this package exports: what a go-sdk user
// calls (docs/preflight.md, "The public surface and the lower layers").
// TestPublicSurface fails on a name added or dropped, so the surface grows
// only deliberately; a lower layer a host of this module needs belongs in
// internal/preflight.
var publicSurface = []string{
	"ApprovalRefusedError", "CheckpointPath", "Config", "Consultation", "CoreError",
	"DefaultIssuerTimeout", "DefaultMaxAnswerBytes", "DefaultPageCap", "DefaultTimeout",
	"EffectDeny", "EffectPause", "EffectPauseTool", "EffectProceed", "EffectProceedRecorded", "EffectRefresh",
	"ErrBadRequest", "ErrForkedProcess", "ErrInputTooLarge", "ErrInternal", "ErrIssuerKeysInvalid",
	"ErrJSONDuplicateKey", "ErrJSONInvalidUTF8", "ErrJSONLoneSurrogate", "ErrJSONNumberOutOfRange",
	"ErrJSONSyntax", "ErrJSONTooDeep", "ErrKeyInvalid", "ErrLockInvalid", "ErrLockUnsupported",
	"ErrPolicyInvalid", "ErrRecordInvalid", "ErrToolsMalformed", "ErrUnknownOp", "ErrorCode",
	"Evidence", "Finding", "HandedItem", "HandedList", "HandedTool", "Handoff", "Issuer", "ItemRefusedError", "NonceStatePath", "ObservedSummary",
	"Open", "ParseRecord", "Pilot", "PilotAckPath", "PinnedKey", "ProofPath", "Recheck", "RecheckMax", "RecheckMin", "Record", "RefusedError", "Session",
	"SessionCheckAgain", "SessionProceed", "SessionStop", "Settings", "Unnamed",
	"Would",
}

func TestPublicSurface(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for name, obj := range f.Scope.Objects {
				if ast.IsExported(name) && obj.Kind != ast.Bad {
					got = append(got, name)
				}
			}
		}
	}
	slices.Sort(got)
	want := slices.Clone(publicSurface)
	slices.Sort(want)
	for _, n := range got {
		if !slices.Contains(want, n) {
			t.Errorf("bindings/go/preflight exports %s, which publicSurface does not list: a name a go-sdk user calls goes there, a lower layer in internal/preflight", n)
		}
	}
	for _, n := range want {
		if !slices.Contains(got, n) {
			t.Errorf("bindings/go/preflight no longer exports %s (publicSurface lists it; CHANGELOG.md says what a removal breaks)", n)
		}
	}
}
