package core_test

import "testing"

// newUserVectors pin what a new user tripped on (issue 34): a stdio
// server's stray stdout lines are a fact on the record, never a block.
func newUserVectors(t testing.TB) []opVector {
	h := newHostFacts(t)
	var vs []opVector
	add := func(op, name string, request any) { vs = append(vs, opVector{Op: op, Name: name, Request: request}) }
	stray := func(n any) obj { o := deepCopy(h.observed); o["stray_lines"] = n; return o }

	add("continuity_check", "stray lines on the record", with(continuityRequest(h.lock, nil, "enforce"), "observed", stray(2)))
	add("continuity_check", "no stray lines leave the record as it was", with(continuityRequest(h.lock, nil, "enforce"), "observed", stray(0)))
	add("continuity_check", "stray lines negative refused", with(continuityRequest(h.lock, nil, "enforce"), "observed", stray(-1)))
	add("continuity_check", "stray lines not a number refused", with(continuityRequest(h.lock, nil, "enforce"), "observed", stray("2")))
	add("make_lock", "from observed with stray lines", obj{"observed": stray(3), "approved_at": approvedAt})
	return vs
}
