package lock

import (
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
	Ecosystem string // "npm", the one ecosystem a host resolves today
	Name      string
	Version   string
	Integrity string // an SRI string (sha512-…), as npm's package-lock records it
}

// LaunchedMember is the lockfile's member name of the extension.
const LaunchedMember = "launched"

// EcosystemNPM is the ecosystem of an npx-launched package.
const EcosystemNPM = "npm"

// launchedFields are its members, in the order written.
var launchedFields = []string{"ecosystem", "name", "version", "integrity"}

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
	if v.Kind() != canon.Object || len(v.Members()) != len(launchedFields) {
		return bad(" must be an object of exactly %s", strings.Join(launchedFields, ", "))
	}
	s := make([]string, len(launchedFields))
	for i, f := range launchedFields {
		x, _ := v.Get(f)
		var ok bool
		if s[i], ok = x.Str(); !ok || s[i] == "" {
			return bad(".%s must be a non-empty string", f)
		}
	}
	l := &Launched{Ecosystem: s[0], Name: s[1], Version: s[2], Integrity: s[3]}
	switch {
	case l.Ecosystem != EcosystemNPM:
		return bad(".ecosystem %q is not one the core knows (npm)", l.Ecosystem)
	case !isExactVersion(l.Version):
		return bad(".version %q is not an exact version", l.Version)
	case !isSRI(l.Integrity):
		return bad(".integrity is not an SRI integrity string (sha512-…)")
	}
	return l, nil
}

// Value is the extension as written.
func (l *Launched) Value() canon.Value {
	return canon.Obj(
		canon.M("ecosystem", canon.Str(l.Ecosystem)),
		canon.M("name", canon.Str(l.Name)),
		canon.M("version", canon.Str(l.Version)),
		canon.M("integrity", canon.Str(l.Integrity)),
	)
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

// Same says whether two launched packages are one release of one package
// with one tarball.
func (l *Launched) Same(o *Launched) bool { return *l == *o }

// LaunchTail is what a stdio endpoint's command line passes to the
// package it launches: the text after the package's spec (name@version,
// a word of its own), trimmed. ok is false when the command line names no
// such word: the package identity then cannot stand in for it. Two
// launches of one package are one server only when their tails are equal
// (server-filesystem's directories are its tail): the launcher before the
// spec (which npx, which flags) is what may differ.
func LaunchTail(endpoint string, l *Launched) (string, bool) {
	cmd, ok := strings.CutPrefix(strings.TrimSpace(endpoint), "stdio:")
	if !ok {
		return "", false
	}
	spec := l.Name + "@" + l.Version
	for i := 0; i+len(spec) <= len(cmd); {
		j := strings.Index(cmd[i:], spec)
		if j < 0 {
			return "", false
		}
		start, end := i+j, i+j+len(spec)
		if (start == 0 || isSpace(cmd[start-1])) && (end == len(cmd) || isSpace(cmd[end])) {
			return strings.TrimSpace(cmd[end:]), true
		}
		i = end
	}
	return "", false
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }
