package launched

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// uvFlags and pipxFlags are the options of `uvx` and `pipx run` that take
// no value and do not change what is run; --from (uvx) and --spec (pipx)
// name the distribution. Any other option (--with, --python, --index, an
// extra) makes the command line one this package does not read.
var (
	uvFlags   = map[string]bool{"-q": true, "--quiet": true}
	pipxFlags = map[string]bool{"-q": true, "--quiet": true}
)

// pypiName is a distribution name as PEP 508 allows it; pep440Exact is one
// release (no specifier, no wildcard), as uvx's name==version or
// name@version names it.
var (
	pypiName    = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)
	pep440Exact = regexp.MustCompile(`^([0-9]+!)?[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?(\+[a-z0-9]+(\.[a-z0-9]+)*)?$`)
	pypiSep     = regexp.MustCompile(`[-_.]+`)
)

// Limits of asking uv: its answer (one distribution's hash lines) read to
// maxUVAnswer bytes, within registryTimeout.
const maxUVAnswer = 1 << 20

// pypiLaunch reads a uvx, `uv tool run` or `pipx run` command line: the
// distribution spec it runs, and whether it is pipx (whose indexes are
// pip's). ok is false for any other command or an option not read.
func pypiLaunch(argv []string) (spec string, pipx, ok bool) {
	if len(argv) < 2 {
		return "", false, false
	}
	base := strings.ToLower(filepath.Base(argv[0]))
	base = strings.TrimSuffix(base, ".exe")
	var args []string
	flags, from := uvFlags, "--from"
	switch {
	case base == "uvx":
		args = argv[1:]
	case base == "uv" && len(argv) > 2 && argv[1] == "tool" && argv[2] == "run":
		args = argv[3:]
	case base == "pipx" && argv[1] == "run":
		args, flags, from, pipx = argv[2:], pipxFlags, "--spec", true
	default:
		return "", false, false
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == from && i+1 < len(args):
			spec = args[i+1]
			i++
		case strings.HasPrefix(a, from+"="):
			spec = strings.TrimPrefix(a, from+"=")
		case strings.HasPrefix(a, "-"):
			if !flags[a] {
				return "", false, false
			}
		default:
			// The command: the distribution itself unless --from named it.
			if spec == "" {
				spec = a
			}
			return spec, pipx, spec != ""
		}
	}
	return "", false, false
}

// splitPyPISpec splits name==version or name@version. pinned is false for
// a name alone, @latest or a specifier; ok is false for what this package
// does not read (extras, a URL, a path).
func splitPyPISpec(spec string) (name, version string, pinned, ok bool) {
	name, version, found := strings.Cut(spec, "==")
	if !found {
		name, version, found = strings.Cut(spec, "@")
	}
	if !found {
		// A name alone, or with a specifier (>=, ~=): no one release.
		n := spec
		if i := strings.IndexAny(spec, "<>=!~ "); i >= 0 {
			n = spec[:i]
		}
		return "", "", false, pypiName.MatchString(n)
	}
	if !pypiName.MatchString(name) {
		return "", "", false, false
	}
	return name, version, pep440Exact.MatchString(version), true
}

// normalizePyPI is a name as PEP 503 compares it.
func normalizePyPI(name string) string { return strings.ToLower(pypiSep.ReplaceAllString(name, "-")) }

// resolvePyPI resolves a uvx or pipx spec through the index the launcher
// would install from, asked by uv (o.UV): the sha256 of every file of that
// release the index lists.
func resolvePyPI(ctx context.Context, spec string, pipx bool, o Options) Resolution {
	name, version, pinned, ok := splitPyPISpec(spec)
	switch {
	case !ok:
		return Resolution{Reason: NotALauncher}
	case !pinned:
		return Resolution{Reason: Unpinned, Spec: spec}
	case o.UV == "":
		return Resolution{Reason: NotInstalled, Spec: spec}
	}
	hashes, ok := indexHashes(ctx, o, pipx, name, version)
	p := &Package{Ecosystem: "pypi", Name: normalizePyPI(name), Version: version, Hashes: hashes}
	if !ok || !p.readable() {
		// An index listing more files than a pin holds (or a version the
		// core does not read as exact) is read as no answer.
		return Resolution{Reason: NotInstalled, Spec: spec}
	}
	return Resolution{Package: p, Spec: spec}
}

// indexHashes asks uv for the hashes of name==version on the index: `uv
// pip compile --no-deps --generate-hashes --no-cache`, run with the
// server's environment and working directory, so the indexes are the ones
// uvx reads there (UV_INDEX, UV_DEFAULT_INDEX, uv.toml) and nothing is
// taken from a cache. For pipx the indexes are pip's (PIP_INDEX_URL,
// PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS, any of them for any package, as pip
// chooses); pip's configuration files are not read.
func indexHashes(ctx context.Context, o Options, pipx bool, name, version string) ([]string, bool) {
	ctx, cancel := context.WithTimeout(ctx, registryTimeout)
	defer cancel()
	args := []string{"pip", "compile", "-", "--no-deps", "--generate-hashes", "--no-cache", "--no-header", "--no-annotate", "--quiet"}
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	if pipx {
		get := func(k string) string {
			for i := len(env) - 1; i >= 0; i-- {
				if n, v, ok := strings.Cut(env[i], "="); ok && n == k {
					return v
				}
			}
			return ""
		}
		if u := get("PIP_INDEX_URL"); u != "" {
			args = append(args, "--index-url", u)
		}
		for _, u := range strings.Fields(get("PIP_EXTRA_INDEX_URL")) {
			args = append(args, "--extra-index-url", u)
		}
		for _, u := range strings.Fields(get("PIP_FIND_LINKS")) {
			args = append(args, "--find-links", u)
		}
		args = append(args, "--index-strategy", "unsafe-best-match")
	}
	cmd := exec.CommandContext(ctx, o.UV, args...)
	cmd.Dir, cmd.Env = o.Dir, env
	cmd.Stdin = strings.NewReader(name + "==" + version + "\n")
	out, ok := output(cmd, maxUVAnswer)
	if !ok {
		return nil, false
	}
	return parseHashes(string(out), name, version)
}

// parseHashes reads uv's answer: "name==version \" and then one
// "--hash=sha256:<hex>" a line; the hashes sorted, each once.
func parseHashes(out, name, version string) ([]string, bool) {
	sc := bufio.NewScanner(strings.NewReader(out))
	var hashes []string
	seen := map[string]bool{}
	head := false
	for sc.Scan() {
		line := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(sc.Text()), `\`))
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case !head:
			n, v, ok := strings.Cut(line, "==")
			if !ok || normalizePyPI(n) != normalizePyPI(name) || strings.TrimSpace(v) != version {
				return nil, false
			}
			head = true
		case strings.HasPrefix(line, "--hash=sha256:"):
			h := strings.TrimPrefix(line, "--hash=")
			if len(h) != len("sha256:")+64 || strings.Trim(h[7:], "0123456789abcdef") != "" {
				return nil, false
			}
			if !seen[h] {
				seen[h] = true
				hashes = append(hashes, h)
			}
		default:
			return nil, false
		}
	}
	if !head || len(hashes) == 0 {
		return nil, false
	}
	sort.Strings(hashes)
	return hashes, true
}

// UVFor is the uv that reads the index for a uvx command line: the uv
// beside the uvx it names (one install), else the uv on PATH; "" when
// there is none.
func UVFor(argv []string) string {
	if len(argv) > 0 && strings.ContainsRune(argv[0], filepath.Separator) {
		beside := filepath.Join(filepath.Dir(argv[0]), "uv")
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() {
			return beside
		}
	}
	if p, err := exec.LookPath("uv"); err == nil {
		return p
	}
	return ""
}
