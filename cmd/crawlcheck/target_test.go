package main

import (
	"slices"
	"testing"

	"github.com/crawlcheck/verifier/internal/preflight"
)

func TestSplitWords(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"npx -y @scope/server@1.2", []string{"npx", "-y", "@scope/server@1.2"}},
		{"  a\tb  ", []string{"a", "b"}},
		{`python -m srv 'a b' '' 'it'"'"'s'`, []string{"python", "-m", "srv", "a b", "", "it's"}},
		{`say "a \"b\" \$HOME \n" c\ d`, []string{"say", `a "b" $HOME \n`, "c d"}},
		{`x"y"'z'`, []string{"xyz"}},
		{"", nil},
	} {
		got, err := splitWords(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("splitWords(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{`'open`, `"open`, `trailing\`} {
		if _, err := splitWords(bad); err == nil {
			t.Errorf("splitWords(%q): no error", bad)
		}
	}
}

// A stdio endpoint, as preflight writes it, splits back into its args.
func TestSplitWordsInvertsStdioEndpoint(t *testing.T) {
	for _, args := range [][]string{
		{"node", "srv.js", "$HOME", "é", "a'b", "", "x y"},
		{"/usr/bin/server", "--flag=1,2", "50%"},
	} {
		ep, err := preflight.StdioEndpoint(args)
		if err != nil {
			t.Fatal(err)
		}
		tg, err := targetOf(ep)
		if err != nil || !slices.Equal(tg.args, args) {
			t.Errorf("%s: got %q, %v; want %q", ep, tg.args, err, args)
		}
	}
}
