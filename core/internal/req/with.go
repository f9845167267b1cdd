package req

import "github.com/crawlcheck/verifier/core/internal/canon"

// With is the object o with its value replaced by v, keeping its path and
// its attachments: an op that rewrites a nested request (the session
// engine's retries of a check) reads the new one as it read the old, its
// {"$raw": i} references resolving against the same attachments.
func (o Obj) With(v canon.Value) Obj {
	o.V = v
	return o
}
