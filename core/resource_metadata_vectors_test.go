package core_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// resourceMetadataVectors are the op vectors of resource_metadata
// (testdata/ops/resource_metadata): an example, one per case of
// testdata/www-authenticate.json (the cases every host's parser was held
// to before the rule moved into the core), the length bound, and the
// requests it refuses.
func resourceMetadataVectors(t testing.TB) []opVector {
	raw, err := os.ReadFile(filepath.Join(testdataDir, "www-authenticate.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []struct {
			Name            string   `json:"name"`
			WWWAuthenticate []string `json:"www_authenticate"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	var vs []opVector
	add := func(name string, request any) {
		vs = append(vs, opVector{Op: "resource_metadata", Name: name, Request: request})
	}
	add("example", obj{"www_authenticate": []string{`Bearer error="invalid_token", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource"`}})
	for _, c := range file.Cases {
		// The case's name, as a vector's file name may hold it.
		name := strings.Join(strings.FieldsFunc(c.Name, func(r rune) bool {
			return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_')
		}), " ")
		add(name, obj{"www_authenticate": c.WWWAuthenticate})
	}
	at := "https://rs.example/" + strings.Repeat("a", 2048-len("https://rs.example/"))
	add("a URL of 2048 bytes is kept", obj{"www_authenticate": []string{`Bearer resource_metadata="` + at + `"`}})
	add("a URL of 2049 bytes is not", obj{"www_authenticate": []string{`Bearer resource_metadata="` + at + `a"`}})
	add("no lines", obj{"www_authenticate": []string{}})
	add("missing www_authenticate", obj{})
	add("a line not a string", obj{"www_authenticate": []any{"Bearer", 401}})
	add("unknown field", obj{"www_authenticate": []string{}, "status": 401})
	return vs
}
