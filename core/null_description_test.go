package core_test

import "testing"

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
