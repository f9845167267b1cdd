package lock

import (
	"testing"

	"github.com/crawlcheck/verifier/core/internal/canon"
)

func TestParseLaunched(t *testing.T) {
	const ok = `{"ecosystem":"npm","name":"@scope/pkg","version":"1.2.3-rc.1+b5","integrity":"sha512-ljj/3S4aGjxdNSQWw6gucKKGnTLdBPWxzapyY/MT2tOVyZwvxChvevXSLPwx59nKJAlVpUVW+cOlnVRXRwiqMQ=="}`
	v, err := canon.ParseString(ok)
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParseLaunched(v, "launched")
	if err != nil || l.Name != "@scope/pkg" || l.Version != "1.2.3-rc.1+b5" {
		t.Fatalf("%+v, %v", l, err)
	}
	if canon.SHA256Hex(l.Value()) != canon.SHA256Hex(v) {
		t.Error("Value does not write what was read")
	}
	for _, bad := range []string{
		`{"ecosystem":"pypi","name":"p","version":"1.0.0","integrity":"sha512-AA=="}`,
		`{"ecosystem":"npm","name":"p","version":"^1.0.0","integrity":"sha512-AA=="}`,
		`{"ecosystem":"npm","name":"p","version":"latest","integrity":"sha512-AA=="}`,
		`{"ecosystem":"npm","name":"p","version":"1.0","integrity":"sha512-AA=="}`,
		`{"ecosystem":"npm","name":"p","version":"1.0.0-","integrity":"sha512-AA=="}`,
		`{"ecosystem":"npm","name":"p","version":"1.0.0","integrity":"md5-AA=="}`,
		`{"ecosystem":"npm","name":"p","version":"1.0.0","integrity":"sha512-A A=="}`,
		`{"ecosystem":"npm","name":"p","version":"1.0.0","integrity":"sha512-AA==="}`,
		`{"ecosystem":"npm","name":"","version":"1.0.0","integrity":"sha512-AA=="}`,
		`{"ecosystem":"npm","name":"p","version":"1.0.0"}`,
		`{"ecosystem":"npm","name":"p","version":"1.0.0","integrity":"sha512-AA==","extra":"x"}`,
	} {
		v, err := canon.ParseString(bad)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseLaunched(v, "launched"); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func TestLaunchTail(t *testing.T) {
	l := &Launched{Ecosystem: "npm", Name: "@scope/pkg", Version: "1.2.3"}
	for _, c := range []struct {
		endpoint, tail string
		ok             bool
	}{
		{"stdio:npx -y @scope/pkg@1.2.3", "", true},
		{"stdio:/usr/local/bin/npx --yes @scope/pkg@1.2.3 /srv/a  /srv/b", "/srv/a  /srv/b", true},
		{"stdio:npx -y x@scope/pkg@1.2.3", "", false}, // not a word of its own
		{"stdio:npx -y @scope/pkg@1.2.30", "", false}, // another version
		{"stdio:npx -y @scope/pkg@1.2.3x @scope/pkg@1.2.3 a", "a", true},
		{"https://example.com/@scope/pkg@1.2.3", "", false},
	} {
		tail, ok := LaunchTail(c.endpoint, l)
		if tail != c.tail || ok != c.ok {
			t.Errorf("%s: %q %v, want %q %v", c.endpoint, tail, ok, c.tail, c.ok)
		}
	}
	for _, c := range []struct {
		spec, name, version string
		ok                  bool
	}{
		{"@scope/pkg@1.2.3", "@scope/pkg", "1.2.3", true},
		{"pkg@1.2.3", "pkg", "1.2.3", true},
		{"pkg", "", "", false},
		{"@scope/pkg", "", "", false},
		{"@scope@1.2.3", "", "", false},
		{"pkg@^1.2.3", "", "", false},
	} {
		n, v, ok := SplitSpec(c.spec)
		if n != c.name || v != c.version || ok != c.ok {
			t.Errorf("SplitSpec(%s) = %q %q %v", c.spec, n, v, ok)
		}
	}
}
