package preflight_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/crawlcheck/verifier/internal/preflight"
)

// TestResourceMetadataVectors: testdata/www-authenticate.json is what the
// core's resource_metadata op keeps of a 401's WWW-Authenticate lines; the
// Go host hands it the lines of an http.Header (ResourceMetadataOf), and the
// JS and Python hosts replay the same cases, so every host records the same
// resource_metadata for the same server.
func TestResourceMetadataVectors(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "www-authenticate.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Cases []struct {
			Name             string   `json:"name"`
			WWWAuthenticate  []string `json:"www_authenticate"`
			ResourceMetadata string   `json:"resource_metadata"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range v.Cases {
		h := http.Header{}
		for _, line := range c.WWWAuthenticate {
			h.Add("WWW-Authenticate", line)
		}
		if got := preflight.ResourceMetadataOf(h); got != c.ResourceMetadata {
			t.Errorf("%s: %q, want %q", c.Name, got, c.ResourceMetadata)
		}
	}
}
