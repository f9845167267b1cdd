package core_test

import (
	"strconv"
	"testing"
)

// nullDescriptionVectors pin that description: null is absent, as
// docs/hashing.md says (it once said a non-string description is refused).
func nullDescriptionVectors() []opVector {
	return []opVector{
		{Op: "hash_tools", Name: "description null is absent", Request: obj{"tools": []any{obj{"name": "a", "description": nil}}}},
	}
}

// TestNullDescriptionIsAbsent: a null description hashes exactly as no
// description, in both formats.
func TestNullDescriptionIsAbsent(t *testing.T) {
	withNull := call(t, "hash_tools", obj{"tools": []any{obj{"name": "a", "description": nil}}})
	absent := call(t, "hash_tools", obj{"tools": []any{obj{"name": "a"}}})
	if string(withNull) != string(absent) {
		t.Fatalf("description null:\n%s\nabsent:\n%s", withNull, absent)
	}
}

// tooManyPagesVectors: a walk of more pages than a check compares is
// compared up to the cap and counted truncated (page_cap_reached), an
// observation on a record, not a refused request (issue 10, item 4).
func tooManyPagesVectors(t testing.TB) []opVector {
	lock := lockDoc(t, baseTools(), approvedAt)
	pages := make([]string, 1001)
	for i := range pages {
		pages[i] = `{"tools":[],"nextCursor":"c` + strconv.Itoa(i) + `"}`
	}
	r := continuityRequest(lock, pages, "enforce")
	return []opVector{{Op: "continuity_check", Name: "more pages than a check compares", Request: r}}
}
