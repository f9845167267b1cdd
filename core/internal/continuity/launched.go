package continuity

import (
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/endpoint"
	"github.com/crawlcheck/verifier/core/internal/lock"
	"github.com/crawlcheck/verifier/core/internal/policy"
)

// Why a host resolved no launched package (internal/launched): the
// command is not a launcher it reads, the spec names no exact version, the
// package is not installed, or its install does not say what was asked.
var LaunchedReasons = []string{"not_a_launcher", "unpinned", "not_installed", "unreadable"}

// ObservedLaunched is what the host read of the package a stdio command
// line launches: the package, or why none (one of LaunchedReasons).
type ObservedLaunched struct {
	Package *lock.Launched
	Reason  string
	// Spec is, with a Reason, the package spec the command line names
	// (name@version as written), "" when the host read none: a version
	// npm has not installed yet is still another version than the pin's.
	Spec string
}

// The record's server.launched.identity.
const (
	// LaunchedMatch: the lockfile's package and the observed one are the
	// same release and tarball, and the command lines pass it the same
	// arguments: the server is the approved one whatever path or working
	// directory launched it.
	LaunchedMatch = "match"
	// LaunchedChanged: another package, version or integrity
	// (launched_package_changed).
	LaunchedChanged = "changed"
	// LaunchedNotCompared: the lockfile pins no package, or the host
	// resolved none, or a command line names no spec word: the command
	// line is compared as before.
	LaunchedNotCompared = "not_compared"
)

// judgeLaunched compares the launched package when the lockfile pins one
// and the host resolved one. It answers whether it judged the server's
// identity (judgeServer then compares no command line). Two launches of
// one package are one server when what the command lines pass it (the
// words after its spec) is the same: the launcher before the spec (another
// path to npx, -y or --yes) may differ, the server's own arguments
// (server-filesystem's directories) may not.
func (c *check) judgeLaunched() bool {
	c.launched = LaunchedNotCompared
	l := c.in.Lock.Crawlcheck
	obs := c.in.Observed.Launched
	if l == nil || l.Launched == nil || c.base.URL == "" || c.in.Observed.Endpoint == "" {
		return false
	}
	if obs.Package == nil {
		return c.judgeSpec(l.Launched, obs.Spec, obs.Reason)
	}
	if !l.Launched.Same(obs.Package) {
		c.launched = LaunchedChanged
		c.identity = IdentityMismatch
		c.add(policy.LaunchedPackageChanged, "", "", "", canon.Obj(
			canon.M("approved", l.Launched.Value()),
			canon.M("observed", obs.Package.Value()),
		))
		return true
	}
	a, okA := lock.LaunchTail(endpoint.Canonical(c.base.URL), l.Launched)
	b, okB := lock.LaunchTail(endpoint.Canonical(c.in.Observed.Endpoint), obs.Package)
	if !okA || !okB || a != b {
		return false
	}
	c.launched = LaunchedMatch
	c.identity = IdentityMatch
	return true
}

// judgeSpec compares the spec of a command line whose package the host
// could not resolve (npm has not installed it yet: the server was not
// started) with the pin: the pinned package named at another exact
// version is launched_package_changed, before anything runs. So is the
// pinned npm package named by a dist-tag (`npx -y pkg`, `pkg@latest`)
// that the host could not resolve (not_installed: no registry answered,
// or it has no such tag): npx asks the registry for a tag on every run,
// so nothing says the release it would run is the approved one, and a
// pin that passed whenever the registry is unreachable would be no pin
// (fail closed). Anything else (a range, unpinned) is left to the
// command-line rule.
func (c *check) judgeSpec(pin *lock.Launched, spec, reason string) bool {
	var name, version string
	ok := false
	switch pin.Ecosystem {
	case lock.EcosystemNPM:
		name, version, ok = lock.SplitSpec(spec)
		if !ok && reason == "not_installed" && lock.SpecName(spec) == pin.Name {
			name, version, ok = pin.Name, "", true
		}
	case lock.EcosystemPyPI:
		name, version, ok = lock.SplitPyPISpec(spec)
	}
	// An image's spec is never unresolved with a digest (the digest is
	// read from the command line), so an oci pin judges no spec.
	if !ok || name != pin.Name || version == pin.Version {
		return false
	}
	c.launched = LaunchedChanged
	c.identity = IdentityMismatch
	c.add(policy.LaunchedPackageChanged, "", "", "", canon.Obj(
		canon.M("approved", pin.Value()),
		canon.M("observed", canon.Obj(canon.M("spec", canon.Str(spec)))),
	))
	return true
}

// launchedValue is the record's server.launched: null when neither the
// lockfile pins a package nor the host names one (a package, or a spec it
// could not resolve), else what each side said and whether the package
// stood in for the command line.
func (c *check) launchedValue() canon.Value {
	var pinned *lock.Launched
	if l := c.in.Lock.Crawlcheck; l != nil {
		pinned = l.Launched
	}
	obs := c.in.Observed.Launched
	if pinned == nil && obs.Package == nil && obs.Spec == "" {
		// No package on either side (an HTTP server, a command that is not
		// a launcher, against a lockfile that pins none): the record is the
		// one every host writes, whether or not it resolves packages.
		return canon.NullValue()
	}
	pkg := func(p *lock.Launched) canon.Value {
		if p == nil {
			return canon.NullValue()
		}
		return p.Value()
	}
	return canon.Obj(
		canon.M("approved", pkg(pinned)),
		canon.M("observed", pkg(obs.Package)),
		canon.M("not_resolved", optStr(obs.Reason)),
		canon.M("spec", optStr(obs.Spec)),
		canon.M("identity", canon.Str(c.launched)),
	)
}
