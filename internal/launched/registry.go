package launched

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/internal/boundedread"
)

// Options says where a resolution reads: the npm cache (what npx already
// installed, and so runs), and the registry npx would fetch a spec it has
// not installed from (what it would run).
type Options struct {
	// NpmCache is npm's cache directory (CacheDir).
	NpmCache string
	// NpmRegistry is the registry npx fetches from (NpmRegistry); "" asks
	// no registry: a spec not in the cache is then NotInstalled.
	NpmRegistry string
	// Client makes the registry's requests; nil is a client of its own
	// with registryTimeout.
	Client *http.Client
	// UV is the uv program that asks a uvx or pipx release's index (UVFor);
	// "" asks none: such a spec is then NotInstalled.
	UV string
	// Env and Dir are the server's environment and working directory, in
	// which uv reads its configuration; nil Env is ours.
	Env []string
	Dir string
}

// Limits of a registry lookup: one request, its answer read to
// maxPackument bytes (the abbreviated metadata of a package with
// thousands of versions is a few MiB), within registryTimeout.
const (
	maxPackument    = 32 << 20
	registryTimeout = 20 * time.Second
	maxConfigAnswer = 4 << 10
)

// ResolveWith is Resolve reading where o says. A uvx or pipx release is
// what its index lists (indexHashes). For npx: the npx cache first (what
// npx runs without asking the registry again: an exact version it has
// installed), then, for a spec it has not installed, the registry's own
// metadata of that version (the integrity npm will verify the tarball it
// downloads against). A dist-tag (`pkg`, meaning latest, or `pkg@next`)
// is the version the registry's dist-tags name now and that version's
// integrity: npx asks the registry for a tag on every run, so its answer
// is what runs. A version or tag the registry does not have, or a
// registry that does not answer, is NotInstalled. The registry and uv
// are given until ctx ends, and registryTimeout at most.
func ResolveWith(ctx context.Context, argv []string, o Options) Resolution {
	if spec, pipx, ok := pypiLaunch(argv); ok {
		return resolvePyPI(ctx, spec, pipx, o)
	}
	r := Resolve(argv, o.NpmCache)
	if r.Reason != NotInstalled || o.NpmRegistry == "" {
		return r
	}
	name, want := splitSpec(r.Spec)
	version, integrity, ok := registryRelease(ctx, o.Client, o.NpmRegistry, name, want)
	p := &Package{Ecosystem: "npm", Name: name, Version: version, Integrity: integrity}
	if !ok || !p.readable() {
		return r // an answer the core would not read is no answer
	}
	return Resolution{Package: p, Spec: r.Spec}
}

// registryRelease reads the release want names from the registry's
// abbreviated metadata (the document npm install reads): want is an exact
// version, or a dist-tag ("" is latest, as npm reads a bare name) that
// the document's dist-tags map to one. It answers the version and its
// dist.integrity.
func registryRelease(ctx context.Context, c *http.Client, registry, name, want string) (version, integrity string, ok bool) {
	if c == nil {
		c = &http.Client{Timeout: registryTimeout}
	}
	// One path segment, a scoped name's slash escaped as npm sends it
	// (@scope%2Fname).
	u := strings.TrimRight(registry, "/") + "/" + url.PathEscape(name)
	ctx, cancel := context.WithTimeout(ctx, registryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", "", false
	}
	req.Header.Set("Accept", "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8")
	resp, err := c.Do(req)
	if err != nil {
		return "", "", false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", "", false
	}
	b, err := boundedread.Read(resp.Body, maxPackument)
	if err != nil {
		return "", "", false
	}
	var doc struct {
		Name     string            `json:"name"`
		DistTags map[string]string `json:"dist-tags"`
		Versions map[string]struct {
			Name    string `json:"name"`
			Version string `json:"version"`
			Dist    struct {
				Integrity string `json:"integrity"`
			} `json:"dist"`
		} `json:"versions"`
	}
	if json.Unmarshal(b, &doc) != nil || doc.Name != name {
		return "", "", false
	}
	version = want
	if !exactVersion.MatchString(want) {
		if want == "" {
			want = "latest"
		}
		// The tag must name an exact version the same document lists: a
		// registry answering a range or a missing version names no release.
		if version = doc.DistTags[want]; !exactVersion.MatchString(version) {
			return "", "", false
		}
	}
	v, ok := doc.Versions[version]
	if !ok || v.Name != name || v.Version != version || v.Dist.Integrity == "" {
		return "", "", false
	}
	return version, v.Dist.Integrity, true
}

// NpmRegistry is the registry npx would fetch from for a command started
// with that environment in dir: npm_config_registry when the environment
// sets it, else npm's own answer (`npm config get registry`, which reads
// the project's, the user's and the global .npmrc and npm's default).
// "" when npm does not answer before ctx ends or within registryTimeout.
func NpmRegistry(ctx context.Context, getenv func(string) string, env []string, dir string) string {
	for _, k := range []string{"npm_config_registry", "NPM_CONFIG_REGISTRY"} {
		if v := getenv(k); v != "" {
			return v
		}
	}
	ctx, cancel := context.WithTimeout(ctx, registryTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "config", "get", "registry")
	cmd.Dir = dir
	cmd.Env = env
	out, ok := output(cmd, maxConfigAnswer)
	if !ok {
		return ""
	}
	reg := strings.TrimSpace(string(out))
	if u, err := url.Parse(reg); err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return ""
	}
	return reg
}
