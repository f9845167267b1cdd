package launched

import (
	"reflect"
	"strings"
	"testing"
)

const (
	digest  = "sha256:0f3a5b8c2d9e4f1a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c"
	wheelH  = "sha256:5c099a001c6ca78260bda419f2e9b2aabee1adc4fe6ca56d8959871ad8da58a1"
	sdistH  = "sha256:41427e33cafba09ef0e0f197a9dc33f2bc7238947fa319e0ec7d6500e2f97421"
	timeVer = "mcp-server-time==2026.10.19"
)

// The command lines each launcher's reading accepts, and what it makes of
// them without asking an index (Resolve): an image by digest is pinned
// from the command line; a uvx or pipx release is NotInstalled with its
// spec until its index is asked; anything not read is NotALauncher.
func TestResolveKinds(t *testing.T) {
	for _, c := range []struct {
		argv     []string
		launcher string
		pkg      *Package
		reason   string
		spec     string
	}{
		{[]string{"docker", "run", "-i", "--rm", "mcp/time@" + digest}, "docker", &Package{Ecosystem: "oci", Name: "mcp/time", Digest: digest}, "", "mcp/time@" + digest},
		{[]string{"/usr/bin/docker", "run", "-i", "-e", "TZ=UTC", "--volume=/a:/b", "ghcr.io:443/o/time:1.0@" + digest, "--flag"}, "docker", &Package{Ecosystem: "oci", Name: "ghcr.io:443/o/time", Digest: digest}, "", "ghcr.io:443/o/time:1.0@" + digest},
		{[]string{"docker", "run", "-i", "--rm", "mcp/time"}, "docker", nil, Unpinned, "mcp/time"},
		{[]string{"docker", "run", "-i", "mcp/time:latest"}, "docker", nil, Unpinned, "mcp/time:latest"},
		{[]string{"docker", "run", "--gpus", "all", "mcp/time@" + digest}, "", nil, NotALauncher, ""},
		{[]string{"docker", "ps"}, "", nil, NotALauncher, ""},
		{[]string{"uvx", timeVer}, "uvx", nil, NotInstalled, timeVer},
		{[]string{"/opt/bin/uvx", "-q", "mcp-server-time@2026.10.19", "--local-timezone", "UTC"}, "uvx", nil, NotInstalled, "mcp-server-time@2026.10.19"},
		{[]string{"uvx", "--from", timeVer, "mcp-server-time"}, "uvx", nil, NotInstalled, timeVer},
		{[]string{"uv", "tool", "run", "--from=" + timeVer, "mcp-server-time"}, "uvx", nil, NotInstalled, timeVer},
		{[]string{"pipx", "run", "--spec", timeVer, "mcp-server-time"}, "pipx", nil, NotInstalled, timeVer},
		{[]string{"uvx", "mcp-server-time"}, "uvx", nil, Unpinned, "mcp-server-time"},
		{[]string{"uvx", "mcp-server-time@latest"}, "uvx", nil, Unpinned, "mcp-server-time@latest"},
		{[]string{"uvx", "--from", "mcp-server-time>=2026", "mcp-server-time"}, "uvx", nil, Unpinned, "mcp-server-time>=2026"},
		{[]string{"uvx", "--with", "other", timeVer}, "", nil, NotALauncher, ""},
		{[]string{"uvx", "--python", "3.12", timeVer}, "", nil, NotALauncher, ""},
		{[]string{"uvx", "--from", "mcp-server-time[extra]==2026.10.19", "x"}, "uvx", nil, NotALauncher, ""},
		{[]string{"uvx", "--from", "git+https://example.invalid/x", "x"}, "uvx", nil, NotALauncher, ""},
		{[]string{"pipx", "install", "x"}, "", nil, NotALauncher, ""},
		{[]string{"python", "-m", "mcp_server_time"}, "", nil, NotALauncher, ""},
	} {
		if l := Launcher(c.argv); l != c.launcher {
			t.Errorf("Launcher(%q) = %q, want %q", c.argv, l, c.launcher)
		}
		r := Resolve(c.argv, t.TempDir())
		if !reflect.DeepEqual(r.Package, c.pkg) || r.Reason != c.reason || r.Package == nil && r.Spec != c.spec {
			t.Errorf("%q: %+v (package %+v), want %+v %s %q", c.argv, r, r.Package, c.pkg, c.reason, c.spec)
		}
	}
}

// The observed member of each kind, as the core reads it.
func TestObservedKinds(t *testing.T) {
	for _, c := range []struct {
		r    Resolution
		want string
	}{
		{Resolution{Package: &Package{Ecosystem: "oci", Name: "mcp/time", Digest: digest}}, `{"package":{"digest":"` + digest + `","ecosystem":"oci","name":"mcp/time"}}`},
		{Resolution{Package: &Package{Ecosystem: "pypi", Name: "mcp-server-time", Version: "2026.10.19", Hashes: []string{sdistH, wheelH}}}, `{"package":{"ecosystem":"pypi","hashes":["` + sdistH + `","` + wheelH + `"],"name":"mcp-server-time","version":"2026.10.19"}}`},
		{Resolution{Reason: Unpinned, Spec: "mcp/time:latest"}, `{"not_resolved":"unpinned","spec":"mcp/time:latest"}`},
	} {
		if got := string(c.r.Observed()); got != c.want {
			t.Errorf("Observed: %s, want %s", got, c.want)
		}
	}
}

// uv's answer is read strictly: its one distribution, each hash a sha256
// of 64 hex, sorted and each once; anything else is no answer.
func TestParseHashes(t *testing.T) {
	ok := "mcp-server-time==2026.10.19 \\\n    --hash=sha256:" + wheelH[7:] + " \\\n    --hash=sha256:" + sdistH[7:] + "\n"
	if h, good := parseHashes(ok, "MCP_Server.Time", "2026.10.19"); !good || !reflect.DeepEqual(h, []string{sdistH, wheelH}) {
		t.Errorf("parseHashes: %v %v", h, good)
	}
	for _, bad := range []string{
		"",
		"mcp-server-time==2026.10.19\n",
		"other==2026.10.19 \\\n    --hash=sha256:" + wheelH[7:] + "\n",
		"mcp-server-time==2026.10.20 \\\n    --hash=sha256:" + wheelH[7:] + "\n",
		"mcp-server-time==2026.10.19 \\\n    --hash=md5:0123\n",
		"mcp-server-time==2026.10.19 \\\n    --hash=sha256:" + strings.ToUpper(wheelH[7:]) + "\n",
		"mcp-server-time==2026.10.19 \\\n    --hash=sha256:" + wheelH[7:] + "\nanother==1.0\n",
	} {
		if h, good := parseHashes(bad, "mcp-server-time", "2026.10.19"); good {
			t.Errorf("parseHashes(%q) = %v", bad, h)
		}
	}
}
