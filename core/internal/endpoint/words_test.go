package endpoint

import (
	"slices"
	"testing"
)

func TestWords(t *testing.T) {
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
		got, err := Words(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Words(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{`'open`, `"open`, `trailing\`} {
		if _, err := Words(bad); err == nil {
			t.Errorf("Words(%q): no error", bad)
		}
	}
}

// A stdio endpoint, as Stdio writes it, splits back into its args.
func TestSplitInvertsStdio(t *testing.T) {
	for _, args := range [][]string{
		{"node", "srv.js", "$HOME", "é", "a'b", "", "x y"},
		{"/usr/bin/server", "--flag=1,2", "50%"},
	} {
		ep := Stdio(args)
		url, got, err := Split(ep)
		if err != nil || url != "" || !slices.Equal(got, args) {
			t.Errorf("%s: got %q %q, %v; want %q", ep, url, got, err, args)
		}
	}
	for _, bad := range []string{"stdio:", "stdio:  ", "stdio:'open", "ftp://x/", "https:///mcp", "npx server"} {
		if _, _, err := Split(bad); err == nil {
			t.Errorf("Split(%q): no error", bad)
		}
	}
	if url, argv, err := Split("https://x/mcp"); err != nil || url != "https://x/mcp" || argv != nil {
		t.Errorf("Split(https://x/mcp) = %q %q %v", url, argv, err)
	}
}
