package core

import (
	"slices"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/continuity"
	"github.com/crawlcheck/verifier/core/internal/lock"
	"github.com/crawlcheck/verifier/core/internal/req"
)

// readLaunched reads observed.launched: the package the host resolved
// (internal/launched), or why none. A malformed one refuses the request: it
// is the host's own reading of its files, not something a server sent.
func readLaunched(or *req.Reader) continuity.ObservedLaunched {
	var out continuity.ObservedLaunched
	if !or.Has("launched") || or.Failed() {
		return out
	}
	v := or.Value("launched")
	field := or.Field("launched")
	pv, hasPkg := v.Get("package")
	rv, hasReason := v.Get("not_resolved")
	sv, hasSpec := v.Get("spec")
	want := 1
	if hasSpec {
		want = 2
	}
	if hasPkg == hasReason || len(v.Members()) != want || hasSpec && hasPkg {
		or.Fail(cerr.New(cerr.BadRequest, "%s must be {\"package\": {…}} or {\"not_resolved\": reason, \"spec\"?: name@version}", field))
		return out
	}
	if hasPkg {
		p, err := lock.ParseLaunched(pv, field+".package")
		if err != nil {
			or.Fail(cerr.New(cerr.BadRequest, "%s", cerr.Message(err)))
			return out
		}
		out.Package = p
		return out
	}
	r, ok := rv.Str()
	if !ok || !slices.Contains(continuity.LaunchedReasons, r) {
		or.Fail(cerr.New(cerr.BadRequest, "%s.not_resolved must be one of %v", field, continuity.LaunchedReasons))
		return out
	}
	out.Reason = r
	if hasSpec {
		if out.Spec, ok = sv.Str(); !ok || out.Spec == "" {
			or.Fail(cerr.New(cerr.BadRequest, "%s.spec must be a non-empty string", field))
		}
	}
	return out
}
