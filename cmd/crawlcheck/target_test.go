package main

import (
	"slices"
	"testing"

	"github.com/crawlcheck/verifier/internal/preflight"
)

// A stdio endpoint, as preflight writes it, splits back into its args.
func TestEndpointTargetInvertsStdioEndpoint(t *testing.T) {
	for _, args := range [][]string{
		{"node", "srv.js", "$HOME", "é", "a'b", "", "x y"},
		{"/usr/bin/server", "--flag=1,2", "50%"},
	} {
		ep, err := preflight.StdioEndpoint(args)
		if err != nil {
			t.Fatal(err)
		}
		tg, err := endpointTarget(ep)
		if err != nil || !slices.Equal(tg.args, args) {
			t.Errorf("%s: got %q, %v; want %q", ep, tg.args, err, args)
		}
	}
}
