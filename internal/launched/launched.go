// Package launched resolves the package a stdio server's command line
// launches: `npx [-y] pkg@version …` to what npm installed for it (the
// package's name, version and registry integrity, read from the npx cache,
// <npm cache>/_npx/<hash>/) or, not installed yet, to what its registry
// serves under that version; `npx -y pkg` and `pkg@tag` to the release
// the registry's dist-tag names now (what npx, which asks the registry for
// a tag on every run, would install); `uvx pkg==1.2.3` and `pipx run` to the files
// the index lists for that release (asked through uv); `docker run
// image@sha256:…` to that digest, read from the command line.
//
// A stdio server's identity in a lockfile is otherwise its command line:
// `npx -y pkg@1.2.3` may run another tarball under the same words (a
// republished or tampered cache, another registry), and the same package
// launched through /usr/bin/npx instead of npx is another command line. The
// package npm installed is what actually runs; the core pins and compares
// it (the lockfile's launched extension). This package only reads the host's
// files, its registries and the command line: what is the same package is
// the core's rule.
//
// Every read is bounded: the number of npx cache entries looked at, the
// size of each file and each answer read, the time a registry or uv is
// given. A command this package does not know, a range, or a package
// neither installed nor served yet resolves to nothing and says why; the
// core then keeps the command-line rule (but refuses a dist-tag of the
// pinned package that no registry resolved: it cannot say what would run).
package launched

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/internal/boundedread"
)

// Package is the package a command line launches, as npm installed it,
// as the index lists a PyPI release, or as docker run names an image.
type Package struct {
	Ecosystem string // "npm", "pypi" or "oci"
	Name      string // npm: scoped names with their scope; pypi: PEP 503 normalized; oci: the repository
	Version   string // npm, pypi: the version, exact; oci: ""
	Integrity string // npm: the registry's integrity (an SRI string, sha512-…) from the install's package-lock
	// Hashes (pypi): "sha256:<hex>" of every file of the release on the
	// index, sorted.
	Hashes []string
	Digest string // oci: sha256:<hex>, from the command line
}

// Why a command line resolves to no package.
const (
	// NotALauncher: the command is not one this package knows (npx, uvx,
	// uv tool run, pipx run, docker run), or names an option it does not
	// read; its identity stays its command line.
	NotALauncher = "not_a_launcher"
	// Unpinned: the command line names no one release and no tag that
	// resolves to one (`pkg@^1`; `uvx pkg`, `pkg>=1`; an image by tag):
	// the launcher may run any release the range allows, so there is no
	// one package to pin. An npm dist-tag (`npx -y pkg`, `pkg@latest`) is
	// pinned as the release the registry's dist-tags name (ResolveWith).
	Unpinned = "unpinned"
	// NotInstalled: the npx cache holds no install of that exact spec (npx
	// has not run it on this machine, or the cache was cleared), or the
	// spec is an npm dist-tag, and no registry was asked, it did not
	// answer, or it has no such version or tag; for uvx and pipx, no uv
	// was found or the index does not list that release.
	NotInstalled = "not_installed"
	// Unreadable: the install is there but its package.json or
	// package-lock does not say the name, version or integrity asked for
	// (too large, not JSON, another version installed, no integrity).
	Unreadable = "unreadable"
)

// Resolution is what Resolve found: a package, or why none.
type Resolution struct {
	Package *Package // nil when Reason says why not
	Reason  string   // "" when Package is set
	Spec    string   // the package spec read from the command line ("" for NotALauncher)
}

// Limits of the reads: a cache with more entries than maxEntries is read
// only that far (the entry is then NotInstalled), and each file is refused
// past its limit. The lockfile of a server package is a few kB; 8 MiB is
// far past any real one.
const (
	maxEntries      = 4096
	maxManifest     = 1 << 20
	maxPackageLock  = 8 << 20
	maxNpxPkgJSON   = 64 << 10
	readTimeoutNone = 0
)

// exactVersion is a semver version without range operators or tags
// (build metadata allowed): the only spec npx resolves to one release.
var exactVersion = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// distTag is a dist-tag as npm reads a spec's version part: a word of the
// characters a tag may have that does not start as a range does (a digit,
// an operator, v and a digit, x or *). npm refuses to set a tag that reads
// as a range, so a word this rejects is a range (or nothing npm installs).
var distTag = regexp.MustCompile(`^[A-Za-z][0-9A-Za-z._-]*$`)
var rangeLike = regexp.MustCompile(`^([vV][0-9]|[xX]([.]|$))`)

// isDistTag says whether version, a spec's part after its @, names a
// dist-tag: "" (a bare name, which npm reads as latest) or a tag such as
// latest or next; not an exact version, not a range.
func isDistTag(version string) bool {
	return version == "" || distTag.MatchString(version) && !rangeLike.MatchString(version)
}

// npxFlags are the npx options that take no value and do not change what is
// run; any other option makes the command line one this package does not
// read (NotALauncher), rather than one it might misread (`-p other`,
// `--package=other`, `-c 'script'`).
var npxFlags = map[string]bool{"-y": true, "--yes": true, "-q": true, "--quiet": true}

// CacheDir is npm's cache directory for an environment: npm_config_cache
// when set, else ~/.npm (npm's default on every platform but Windows, where
// it is %LocalAppData%/npm-cache).
func CacheDir(getenv func(string) string) string {
	if d := getenv("npm_config_cache"); d != "" {
		return d
	}
	if d := getenv("LocalAppData"); d != "" && filepath.Separator == '\\' {
		return filepath.Join(d, "npm-cache")
	}
	return filepath.Join(getenv("HOME"), ".npm")
}

// Launcher names the launcher argv starts a package with, as this
// package reads it: "npx", "uvx" (uvx and uv tool run), "pipx" (pipx
// run), "docker" (docker run), or "" for any other command line or one
// with an option it does not read.
func Launcher(argv []string) string {
	if _, ok := dockerImage(argv); ok {
		return "docker"
	}
	if _, pipx, ok := pypiLaunch(argv); ok {
		if pipx {
			return "pipx"
		}
		return "uvx"
	}
	if _, ok := npxSpec(argv); ok {
		return "npx"
	}
	return ""
}

// Resolve reads the package argv launches from the npm cache at cacheDir;
// an image docker run names by digest is read from the command line. An
// npm dist-tag (a bare name, `pkg@latest`) is NotInstalled with its spec:
// npx asks the registry for it on every run, so only the registry
// resolves it (ResolveWith). A
// uvx or pipx release is resolved only by ResolveWith, which asks its
// index: here it is NotInstalled, with its spec (the core still judges
// another exact version against a pin).
func Resolve(argv []string, cacheDir string) Resolution {
	if image, ok := dockerImage(argv); ok {
		return resolveImage(image)
	}
	if spec, pipx, ok := pypiLaunch(argv); ok {
		return resolvePyPI(context.Background(), spec, pipx, Options{}) // no uv: never asks
	}
	spec, ok := npxSpec(argv)
	if !ok {
		return Resolution{Reason: NotALauncher}
	}
	name, version := splitSpec(spec)
	if name == "" {
		return Resolution{Reason: Unpinned, Spec: spec}
	}
	if !exactVersion.MatchString(version) {
		if isDistTag(version) {
			// npx asks the registry what a tag names on every run (its
			// cache does not decide it): only the registry resolves it
			// (ResolveWith).
			return Resolution{Reason: NotInstalled, Spec: spec}
		}
		return Resolution{Reason: Unpinned, Spec: spec}
	}
	dir, found := npxInstall(filepath.Join(cacheDir, "_npx"), name+"@"+version)
	if !found {
		return Resolution{Reason: NotInstalled, Spec: spec}
	}
	p, ok := readInstall(dir, name, version)
	if !ok || !p.readable() {
		return Resolution{Reason: Unreadable, Spec: spec}
	}
	return Resolution{Package: p, Spec: spec}
}

// npxSpec is the package spec of an npx command line: the first argument
// after npx's own flags. ok is false for any other command, or an npx
// option this package does not read.
func npxSpec(argv []string) (string, bool) {
	if len(argv) < 2 {
		return "", false
	}
	base := strings.ToLower(filepath.Base(argv[0]))
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".cmd"), ".exe")
	if base != "npx" {
		return "", false
	}
	for _, a := range argv[1:] {
		if !strings.HasPrefix(a, "-") {
			return a, true
		}
		if !npxFlags[a] {
			return "", false
		}
	}
	return "", false
}

// splitSpec splits name@version; a scoped name keeps its leading @.
func splitSpec(spec string) (name, version string) {
	at := strings.LastIndex(spec, "@")
	if at <= 0 {
		return spec, ""
	}
	name, version = spec[:at], spec[at+1:]
	if strings.HasPrefix(name, "@") && !strings.Contains(name, "/") {
		return "", ""
	}
	return name, version
}

// npxInstall finds the npx cache entry made for exactly this one spec: its
// package.json lists it alone under _npx.packages (npx's own record of what
// it installed there). The entries are read in name order, at most
// maxEntries of them.
func npxInstall(npxDir, spec string) (string, bool) {
	f, err := os.Open(npxDir)
	if err != nil {
		return "", false
	}
	names, _ := f.Readdirnames(maxEntries)
	f.Close()
	sort.Strings(names)
	for _, n := range names {
		dir := filepath.Join(npxDir, n)
		b, err := boundedread.ReadFile(filepath.Join(dir, "package.json"), maxNpxPkgJSON, readTimeoutNone)
		if err != nil {
			continue
		}
		var pj struct {
			Npx struct {
				Packages []string `json:"packages"`
			} `json:"_npx"`
		}
		if json.Unmarshal(b, &pj) == nil && len(pj.Npx.Packages) == 1 && pj.Npx.Packages[0] == spec {
			return dir, true
		}
	}
	return "", false
}

// readInstall reads the installed package's own package.json (name and
// version as installed) and the install's package-lock (the registry
// integrity npm verified the tarball against).
func readInstall(dir, name, version string) (*Package, bool) {
	b, err := boundedread.ReadFile(filepath.Join(dir, "node_modules", filepath.FromSlash(name), "package.json"), maxManifest, readTimeoutNone)
	if err != nil {
		return nil, false
	}
	var man struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &man) != nil || man.Name != name || man.Version != version {
		return nil, false
	}
	b, err = boundedread.ReadFile(filepath.Join(dir, "package-lock.json"), maxPackageLock, readTimeoutNone)
	if err != nil {
		return nil, false
	}
	var lk struct {
		Packages map[string]struct {
			Version   string `json:"version"`
			Integrity string `json:"integrity"`
		} `json:"packages"`
	}
	if json.Unmarshal(b, &lk) != nil {
		return nil, false
	}
	e, ok := lk.Packages["node_modules/"+name]
	if !ok || e.Version != version || e.Integrity == "" {
		return nil, false
	}
	return &Package{Ecosystem: "npm", Name: name, Version: version, Integrity: e.Integrity}, true
}

// Observed is the continuity_check request's observed.launched member of
// a resolution (docs/abi.md): {"package": {...}} or {"not_resolved": why}.
func (r Resolution) Observed() json.RawMessage {
	var v any
	if p := r.Package; p != nil {
		v = map[string]json.RawMessage{"package": p.json()}
	} else if r.Spec != "" {
		v = map[string]string{"not_resolved": r.Reason, "spec": r.Spec}
	} else {
		v = map[string]string{"not_resolved": r.Reason}
	}
	b, _ := json.Marshal(v) // maps of strings and string slices always marshal
	return b
}

// json is the package as observed.launched.package writes it.
func (p *Package) json() json.RawMessage {
	pkg := map[string]any{"ecosystem": p.Ecosystem, "name": p.Name}
	switch p.Ecosystem {
	case "npm":
		pkg["version"], pkg["integrity"] = p.Version, p.Integrity
	case "pypi":
		pkg["version"], pkg["hashes"] = p.Version, p.Hashes
	case "oci":
		pkg["digest"] = p.Digest
	}
	b, _ := json.Marshal(pkg) // a map of strings and a string slice always marshals
	return b
}

// readable says whether the core reads p as a package
// (core.LaunchedPackageValid). What a registry, an index or an npx cache
// says is not the host's to vouch for: an integrity that is not an SRI
// string, or more files than a pin holds, would make the core refuse the
// whole check. Such a package is resolved as the registry or the cache
// giving no answer (NotInstalled, Unreadable), which the core judges.
func (p *Package) readable() bool { return core.LaunchedPackageValid(p.json()) }
