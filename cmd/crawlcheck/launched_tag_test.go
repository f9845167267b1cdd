package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLaunchedMovedTag moves a dist-tag in a local npm registry
// (verdaccio, on loopback) that serves two real releases of server-memory:
// `npx -y pkg` and `npx -y pkg@latest`, locked on machine a while latest
// names the first, pin that release and the integrity the registry gives
// it, and pass on machine b. Once latest names the second, the same
// command lines are refused by check and run before the server starts
// (deny, launched_package_changed, the record naming both versions), also
// on machine b whose npx cache holds the approved install (npx asks the
// registry for a tag on every run); a machine whose registry does not
// answer is refused as well (fail closed). Locking again approves the new
// release.
func TestLaunchedMovedTag(t *testing.T) {
	needNpx(t)
	// Two real releases from the public registry, v1 older than v2.
	const name, v1, v2 = "@modelcontextprotocol/server-memory", "2026.7.4", "2026.8.31"
	ms := newLaunchedMachines(t)
	tmp := ms.tmp
	mirror := startNPMMirror(t, ms, name)
	reg := mirror.url
	npm := func(args ...string) {
		t.Helper()
		mirror.npm(t, args...)
	}
	// v1 published first takes latest; v2 is published under next, so
	// latest names v1 until the tag is moved.
	for _, v := range []string{v1, v2} {
		npm("pack", name+"@"+v, "--registry", mirror.upstream, "--pack-destination", tmp)
	}
	npm("publish", filepath.Join(tmp, "modelcontextprotocol-server-memory-"+v1+".tgz"), "--registry", reg)
	npm("publish", filepath.Join(tmp, "modelcontextprotocol-server-memory-"+v2+".tgz"), "--tag", "next", "--registry", reg)
	// The integrity the registry gives each release: what a pin must say.
	integrity := map[string]string{}
	resp, err := http.Get(reg + url.PathEscape(name))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		DistTags map[string]string `json:"dist-tags"`
		Versions map[string]struct {
			Dist struct{ Integrity string } `json:"dist"`
		} `json:"versions"`
	}
	err = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if err != nil || doc.DistTags["latest"] != v1 || doc.DistTags["next"] != v2 {
		t.Fatalf("the mirror's packument: %v %+v", err, doc.DistTags)
	}
	for _, v := range []string{v1, v2} {
		integrity[v] = doc.Versions[v].Dist.Integrity
	}
	if integrity[v1] == "" || integrity[v1] == integrity[v2] {
		t.Fatalf("the mirror's integrities: %v", integrity)
	}

	crawlcheck := func(t *testing.T, m, registry string, want int, args ...string) []byte {
		t.Helper()
		return ms.crawlcheck(t, m, mirror.machine(m, registry), "120s", want, args...)
	}
	type pkg struct{ Version, Integrity string }
	type record struct {
		Effect       string             `json:"effect"`
		Observations recordObservations `json:"observations"`
		Server       struct {
			Launched struct {
				Approved    pkg    `json:"approved"`
				Observed    *pkg   `json:"observed"`
				NotResolved string `json:"not_resolved"`
				Spec        string `json:"spec"`
				Identity    string `json:"identity"`
			} `json:"launched"`
		} `json:"server"`
	}
	check := func(t *testing.T, m, registry string, want int, lock, command string) record {
		t.Helper()
		return decodeRecord[record](t, crawlcheck(t, m, registry, want, "check", "--json", "--lock", lock, "--server", command))
	}
	changed := func(r record) bool {
		return r.Observations.has("launched_package_changed") && r.Effect == "deny" && r.Server.Launched.Identity == "changed"
	}
	installs := func(m string) []string { return ms.npxInstalls(m, name) }

	specs := []string{name, name + "@latest"}
	locks := map[string]string{}
	for i, spec := range specs {
		lock := filepath.Join(tmp, []string{"bare.lock", "latest.lock"}[i])
		crawlcheck(t, "a", reg, 0, "lock", "--server", "npx -y "+spec, "-o", lock)
		if pinned := readLaunchedPin(t, lock); pinned.Name != name || pinned.Version != v1 || pinned.Integrity != integrity[v1] {
			t.Fatalf("npx -y %s pins %+v, want %s %s", spec, pinned, v1, integrity[v1])
		}
		locks[spec] = lock
		// Machine b, while latest names the approved release.
		r := check(t, "b", reg, 0, lock, "npx -y "+spec)
		if r.Effect != "proceed" || r.Server.Launched.Observed == nil || r.Server.Launched.Observed.Version != v1 || r.Server.Launched.Approved.Version != v1 {
			t.Fatalf("machine b, npx -y %s, before the tag moved: %+v", spec, r)
		}
	}
	if len(installs("b")) == 0 {
		t.Fatal("check on machine b installed nothing: the server was not started")
	}

	npm("dist-tag", "add", name+"@"+v2, "latest", "--registry", reg)

	// A registry that does not answer: a port nothing listens on.
	dead := fmt.Sprintf("http://127.0.0.1:%d/", freePort(t))
	for _, spec := range specs {
		lock, command := locks[spec], "npx -y "+spec
		// Machine c has installed nothing: refused before the start, the
		// record naming both releases.
		r := check(t, "c", reg, 1, lock, command)
		if !changed(r) || r.Server.Launched.Approved.Version != v1 || r.Server.Launched.Approved.Integrity != integrity[v1] ||
			r.Server.Launched.Observed == nil || r.Server.Launched.Observed.Version != v2 || r.Server.Launched.Observed.Integrity != integrity[v2] {
			t.Errorf("machine c, %s, after the tag moved: %+v", command, r)
		}
		out := crawlcheck(t, "c", reg, 1, "run", "--lock", lock, "--", "npx", "-y", spec)
		if !strings.Contains(string(out), "launched_package_changed") || !strings.Contains(string(out), "the server was not started") {
			t.Errorf("run on machine c, %s:\n%s", command, out)
		}
		// Machine b's npx cache holds v1, but npx asks the registry for a
		// tag and would install and run v2: refused the same way.
		if r := check(t, "b", reg, 1, lock, command); !changed(r) || r.Server.Launched.Observed == nil || r.Server.Launched.Observed.Version != v2 {
			t.Errorf("machine b, %s, after the tag moved: %+v", command, r)
		}
		// Machine d's registry does not answer: what the tag names is
		// unknown, and refused before the start.
		if r := check(t, "d", dead, 1, lock, command); !changed(r) || r.Server.Launched.NotResolved != "not_installed" || r.Server.Launched.Spec != spec {
			t.Errorf("machine d, %s, no registry: %+v", command, r)
		}
	}
	if n := installs("c"); len(n) != 0 {
		t.Errorf("machine c installed %v: a server was started", n)
	}
	if n := installs("d"); len(n) != 0 {
		t.Errorf("machine d installed %v: a server was started", n)
	}

	// approve re-approves tools, never another package: whatever it
	// answers, a lockfile it writes still pins the approved release (the
	// core's approve keeps the old lockfile's launched member).
	approved := filepath.Join(tmp, "approved.lock")
	cmd := exec.Command(ms.bin, "--timeout", "120s", "approve", "--yes", "--lock", locks[name], "-o", approved)
	cmd.Dir = ms.dir("e", "work")
	cmd.Env = append(os.Environ(), mirror.machine("e", reg)...)
	out, _ := cmd.CombinedOutput()
	if raw, err := os.ReadFile(approved); err == nil {
		var pinned struct {
			Launched struct{ Version string } `json:"launched"`
		}
		if json.Unmarshal(raw, &pinned) != nil || pinned.Launched.Version != v1 {
			t.Errorf("approve after the tag moved pins %q, want %s still\n%s", pinned.Launched.Version, v1, out)
		}
	}
	// Re-approving is locking again: the new lockfile pins v2, and
	// machine c passes with it.
	relock := filepath.Join(tmp, "relock.lock")
	crawlcheck(t, "a", reg, 0, "lock", "--server", "npx -y "+name, "-o", relock)
	if r := check(t, "c", reg, 0, relock, "npx -y "+name); r.Effect != "proceed" || r.Server.Launched.Approved.Version != v2 {
		t.Errorf("machine c with the new lockfile: %+v", r)
	}
}
