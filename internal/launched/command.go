package launched

import (
	"context"
	"os"
	"strings"
)

// ResolveCommand resolves what a stdio server's command line launches, as
// the server itself would find it: env is the server's own environment
// over ours (an MCP client config's env; its entries win) and dir its
// working directory ("" for ours). It reads the npx cache the server's npx
// uses first; a spec npx has not installed is asked of the registry npm
// would use there, and a uvx or pipx release of its index through the uv
// beside the uvx (or on PATH). Every host that starts a stdio server (the
// CLI's check and run, the gateway) resolves through this one function.
// What it asks npm, a registry or uv ends with ctx (the caller's check
// deadline) or within registryTimeout, whichever comes first.
func ResolveCommand(ctx context.Context, argv, env []string, dir string) Resolution {
	getenv := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if name, v, ok := strings.Cut(env[i], "="); ok && name == k {
				return v
			}
		}
		return os.Getenv(k)
	}
	cache := CacheDir(getenv)
	r := Resolve(argv, cache)
	if r.Reason != NotInstalled {
		return r
	}
	// Not installed yet (npx), or a release only its index tells (uvx,
	// pipx run): what would be fetched is the registry's, the one npm or
	// uv reads from the server's environment and working directory.
	full := append(os.Environ(), env...)
	o := Options{NpmCache: cache, Env: full, Dir: dir}
	switch Launcher(argv) {
	case "npx":
		o.NpmRegistry = NpmRegistry(ctx, getenv, full, dir)
	case "uvx", "pipx":
		o.UV = UVFor(argv)
	}
	return ResolveWith(ctx, argv, o)
}
