package lock

import (
	"slices"
	"strings"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
)

// Launched is the additive, signed extension of crawlcheck-mcp-lock v1
// that pins the package a stdio server's command line launches (issue 35
// item 4): `npx -y pkg@1.2.3` is pinned as the npm package pkg, version
// 1.2.3, with the integrity the registry gave its tarball. A command line
// alone is not what runs: the same words may fetch another tarball, and
// the same package launched through another path to npx is another
// command line. A lockfile without it is read and compared as before.
//
// It is written before provenance and is part of the signed digest: it is
// made by lock with the rest, never added to a lockfile after signing.
type Launched struct {
	Ecosystem string // "npm", "pypi" or "oci"
	Name      string // npm: as written (a scope with its @); pypi: PEP 503 normalized; oci: the image's repository
	Version   string // npm, pypi: one release, exact; oci: ""
	Integrity string // npm: an SRI string (sha512-…), as npm's package-lock records it; else ""
	// Hashes (pypi) are the files of the release on the index, each
	// "sha256:<hex>", sorted: every wheel and sdist, so the pin is the
	// same whichever platform's wheel a machine installs.
	Hashes []string
	Digest string // oci: the image's digest, sha256:<hex>; else ""
}

// LaunchedMember is the lockfile's member name of the extension.
const LaunchedMember = "launched"

// The ecosystems of a launched package: npx's npm packages, uvx's and
// pipx's PyPI distributions, docker's OCI images.
const (
	EcosystemNPM  = "npm"
	EcosystemPyPI = "pypi"
	EcosystemOCI  = "oci"
)

// launchedFields are each ecosystem's members, in the order written.
var launchedFields = map[string][]string{
	EcosystemNPM:  {"ecosystem", "name", "version", "integrity"},
	EcosystemPyPI: {"ecosystem", "name", "version", "hashes"},
	EcosystemOCI:  {"ecosystem", "name", "digest"},
}

// maxHashes bounds a release's files: a release with wheels for every
// platform has a few dozen.
const maxHashes = 256

// isExactVersion says whether v is a semver version with no range or tag
// (major.minor.patch, an optional -prerelease and +build of
// [0-9A-Za-z.-]): a pin names one release. Written out rather than with
// regexp, which the core does not import.
func isExactVersion(v string) bool {
	core, build, hasBuild := strings.Cut(v, "+")
	core, pre, hasPre := strings.Cut(core, "-")
	nums := strings.Split(core, ".")
	if len(nums) != 3 || hasBuild && !isIdent(build) || hasPre && !isIdent(pre) {
		return false
	}
	for _, n := range nums {
		if n == "" || strings.Trim(n, "0123456789") != "" {
			return false
		}
	}
	return true
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// isSRI says whether s is an SRI integrity string of an algorithm npm
// writes: sha1-, sha256-, sha384- or sha512- and base64.
func isSRI(s string) bool {
	alg, b64, ok := strings.Cut(s, "-")
	if !ok || alg != "sha1" && alg != "sha256" && alg != "sha384" && alg != "sha512" {
		return false
	}
	body := strings.TrimRight(b64, "=")
	if body == "" || len(b64)-len(body) > 2 {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '+' || c == '/') {
			return false
		}
	}
	return true
}

// ParseLaunched reads a launched package (a lockfile's extension, or what
// a host observed); where names it in an error.
func ParseLaunched(v canon.Value, where string) (*Launched, error) {
	bad := func(format string, args ...any) (*Launched, error) {
		return nil, cerr.New(cerr.LockInvalid, where+format, args...)
	}
	if v.Kind() != canon.Object {
		return bad(" must be an object")
	}
	ev, _ := v.Get("ecosystem")
	eco, _ := ev.Str()
	fields, ok := launchedFields[eco]
	if !ok {
		return bad(".ecosystem %q is not one the core knows (npm, pypi, oci)", eco)
	}
	if len(v.Members()) != len(fields) {
		return bad(" of ecosystem %s must be an object of exactly %s", eco, strings.Join(fields, ", "))
	}
	l := &Launched{Ecosystem: eco}
	for _, f := range fields[1:] {
		x, ok := v.Get(f)
		if !ok {
			return bad(" of ecosystem %s must be an object of exactly %s", eco, strings.Join(fields, ", "))
		}
		if f == "hashes" {
			if l.Hashes, ok = fileHashes(x); !ok {
				return bad(".hashes must be 1 to %d strings sha256:<64 lowercase hex>, sorted, each once", maxHashes)
			}
			continue
		}
		s, ok := x.Str()
		if !ok || s == "" {
			return bad(".%s must be a non-empty string", f)
		}
		switch f {
		case "name":
			l.Name = s
		case "version":
			l.Version = s
		case "integrity":
			l.Integrity = s
		case "digest":
			l.Digest = s
		}
	}
	switch {
	case eco == EcosystemNPM && !isExactVersion(l.Version):
		return bad(".version %q is not an exact version", l.Version)
	case eco == EcosystemNPM && !isSRI(l.Integrity):
		return bad(".integrity is not an SRI integrity string (sha512-…)")
	case eco == EcosystemPyPI && NormalizePyPIName(l.Name) != l.Name:
		return bad(".name %q is not a PEP 503 normalized name", l.Name)
	case eco == EcosystemPyPI && !isPEP440Exact(l.Version):
		return bad(".version %q is not an exact version", l.Version)
	case eco == EcosystemOCI && !isImageName(l.Name):
		return bad(".name %q is not an image repository (no tag, digest or space)", l.Name)
	case eco == EcosystemOCI && !isSHA256Digest(l.Digest, ":"):
		return bad(".digest is not sha256:<64 lowercase hex>")
	}
	return l, nil
}

// fileHashes reads a pypi package's hashes: sorted, each once, so two
// hosts that read one release write one pin.
func fileHashes(v canon.Value) ([]string, bool) {
	es := v.Elems()
	if v.Kind() != canon.Array || len(es) == 0 || len(es) > maxHashes {
		return nil, false
	}
	out := make([]string, len(es))
	for i := range out {
		s, ok := es[i].Str()
		if !ok || !isSHA256Digest(s, ":") || i > 0 && s <= out[i-1] {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

// isSHA256Digest says whether s is "sha256" sep and 64 lowercase hex
// digits.
func isSHA256Digest(s, sep string) bool {
	hex, ok := strings.CutPrefix(s, "sha256"+sep)
	if !ok || len(hex) != 64 {
		return false
	}
	return strings.Trim(hex, "0123456789abcdef") == ""
}

// isImageName says whether s is an image repository as docker writes it
// (an optional registry host and port, path components): no tag or digest
// (the digest is pinned beside it), no space or control character.
func isImageName(s string) bool {
	if s == "" || strings.ContainsAny(s, "@") {
		return false
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 && !strings.Contains(s[i:], "/") {
		return false // name:tag
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '/' || c == ':') {
			return false
		}
	}
	return true
}

// NormalizePyPIName is a distribution name as PEP 503 compares it:
// lowercased, each run of -, _ and . one -.
func NormalizePyPIName(s string) string {
	var b strings.Builder
	sep := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '-' || c == '_' || c == '.' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// isPEP440Exact says whether v is one release as PEP 440 normalizes it:
// [N!]N(.N)*[{a|b|rc}N][.postN][.devN][+local], lowercase. A specifier
// (>=, ~=, a wildcard) names no one release.
func isPEP440Exact(v string) bool {
	v, local, hasLocal := strings.Cut(v, "+")
	if hasLocal {
		for _, part := range strings.Split(local, ".") {
			if part == "" || strings.Trim(part, "0123456789abcdefghijklmnopqrstuvwxyz") != "" {
				return false
			}
		}
	}
	if i := strings.IndexByte(v, '!'); i >= 0 {
		if !isDigits(v[:i]) {
			return false
		}
		v = v[i+1:]
	}
	for _, suffix := range []string{".dev", ".post"} {
		if i := strings.LastIndex(v, suffix); i >= 0 {
			if !isDigits(v[i+len(suffix):]) {
				return false
			}
			v = v[:i]
		}
	}
	for _, pre := range []string{"rc", "a", "b"} {
		if i := strings.LastIndex(v, pre); i >= 0 {
			if !isDigits(v[i+len(pre):]) {
				return false
			}
			v = v[:i]
			break
		}
	}
	nums := strings.Split(v, ".")
	for _, n := range nums {
		if !isDigits(n) {
			return false
		}
	}
	return true
}

func isDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// Value is the extension as written.
func (l *Launched) Value() canon.Value {
	ms := []canon.Member{canon.M("ecosystem", canon.Str(l.Ecosystem)), canon.M("name", canon.Str(l.Name))}
	switch l.Ecosystem {
	case EcosystemNPM:
		ms = append(ms, canon.M("version", canon.Str(l.Version)), canon.M("integrity", canon.Str(l.Integrity)))
	case EcosystemPyPI:
		hs := make([]canon.Value, len(l.Hashes))
		for i, h := range l.Hashes {
			hs[i] = canon.Str(h)
		}
		ms = append(ms, canon.M("version", canon.Str(l.Version)), canon.M("hashes", canon.Arr(hs...)))
	case EcosystemOCI:
		ms = append(ms, canon.M("digest", canon.Str(l.Digest)))
	}
	return canon.Obj(ms...)
}

// SplitSpec splits an npm package spec name@version (a scoped name keeps
// its leading @); ok is false unless version is an exact version.
func SplitSpec(spec string) (name, version string, ok bool) {
	at := strings.LastIndexByte(spec, '@')
	if at <= 0 {
		return "", "", false
	}
	name, version = spec[:at], spec[at+1:]
	if strings.HasPrefix(name, "@") && !strings.Contains(name, "/") || !isExactVersion(version) {
		return "", "", false
	}
	return name, version, true
}

// SpecName is the package name of an npm spec as npx reads it: the text
// before its last @ (a scoped name keeps its leading @), or the whole
// spec when it names no version or tag (a bare name, which npm reads as
// name@latest).
func SpecName(spec string) string {
	if at := strings.LastIndexByte(spec, '@'); at > 0 {
		return spec[:at]
	}
	return spec
}

// Same says whether two launched packages are one release of one package
// with one tarball (npm), the same files (pypi) or one image (oci).
func (l *Launched) Same(o *Launched) bool {
	return l.Ecosystem == o.Ecosystem && l.Name == o.Name && l.Version == o.Version &&
		l.Integrity == o.Integrity && l.Digest == o.Digest && slices.Equal(l.Hashes, o.Hashes)
}

// SplitPyPISpec splits a PyPI spec as uvx and pipx name it, name==version
// or name@version, into the normalized name and the version; ok is false
// unless version is one exact release.
func SplitPyPISpec(spec string) (name, version string, ok bool) {
	name, version, ok = strings.Cut(spec, "==")
	if !ok {
		name, version, ok = strings.Cut(spec, "@")
	}
	if !ok || name == "" || !isPEP440Exact(version) {
		return "", "", false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return "", "", false
		}
	}
	return NormalizePyPIName(name), version, true
}

// LaunchTail is what a stdio endpoint's command line passes to the
// package it launches: the text after the package's spec (a word of its
// own: name@version for npm; name==version or name@version for pypi, the
// name compared as PEP 503 does), trimmed. ok is false when the command
// line names no such word, and for an image: the package identity then
// cannot stand in for it. Two launches of one package are one server only
// when their tails are equal (server-filesystem's directories are its
// tail): the launcher before the spec (which npx or uvx, which flags) is
// what may differ. docker's options before the image (mounts, the
// environment, privileges) change what runs, so an image never stands in
// for its command line: its digest is compared, and then the command line.
func LaunchTail(endpoint string, l *Launched) (string, bool) {
	cmd, ok := strings.CutPrefix(strings.TrimSpace(endpoint), "stdio:")
	if !ok || l.Ecosystem == EcosystemOCI {
		return "", false
	}
	isSpec := func(w string) bool { return w == l.Name+"@"+l.Version }
	if l.Ecosystem == EcosystemPyPI {
		isSpec = func(w string) bool {
			name, version, ok := SplitPyPISpec(w)
			return ok && name == l.Name && version == l.Version
		}
	}
	for i := 0; i < len(cmd); {
		for i < len(cmd) && isSpace(cmd[i]) {
			i++
		}
		j := i
		for j < len(cmd) && !isSpace(cmd[j]) {
			j++
		}
		if i < j && isSpec(cmd[i:j]) {
			return strings.TrimSpace(cmd[j:]), true
		}
		i = j
	}
	return "", false
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }
