package core_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// The launched extension's fixtures (docs/continuity.md, "The launched
// package"): server-memory launched with npx, as internal/launched reads
// it from the npx cache.

const (
	memorySpec      = "@modelcontextprotocol/server-memory@2026.8.31"
	memoryIntegrity = "sha512-ljj/3S4aGjxdNSQWw6gucKKGnTLdBPWxzapyY/MT2tOVyZwvxChvevXSLPwx59nKJAlVpUVW+cOlnVRXRwiqMQ=="
)

func memoryPackage(version, integrity string) obj {
	return obj{"ecosystem": "npm", "name": "@modelcontextprotocol/server-memory", "version": version, "integrity": integrity}
}

// launchedObserved is what a host observed of a stdio server launched by
// the command line, with what it resolved of the launched package.
func launchedObserved(t testing.TB, command string, launched obj) obj {
	return obj{
		"endpoint":         "stdio:" + command,
		"protocol_version": "2025-06-18",
		"server_info":      obj{"name": "memory-server", "version": "0.6.3"},
		"handshake":        "initialize",
		"pages":            []string{page(t, baseTools(), "")},
		"launched":         launched,
	}
}

// The pypi and oci fixtures: mcp-server-time launched with uvx (its
// release's two files, the wheel and the sdist), and the image of it
// launched with docker run by digest.
const (
	timeSpec    = "mcp-server-time==2025.9.25"
	timeWheel   = "sha256:41427e33cafba09ef0e0f197a9dc33f2bc7238947fa319e0ec7d6500e2f97421"
	timeSdist   = "sha256:5cc559709887db33bf77546c2efb0a9352c13870cc2bfaeffab1a6bd6390419b"
	timeImage   = "mcp/time"
	timeDigest  = "sha256:0f3a5b8c2d9e4f1a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c"
	otherDigest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
)

// launchedNotStarted is what a host observed of a stdio server it did not
// start because the launched package it resolved before the start is
// compared first: the package, no pages, no handshake, the failure saying
// why.
func launchedNotStarted(t testing.TB, command string, launched obj) obj {
	o := launchedObserved(t, command, launched)
	for _, k := range []string{"pages", "server_info", "protocol_version", "handshake"} {
		delete(o, k)
	}
	o["failure"] = "server_unavailable"
	o["failure_detail"] = "not started: its launched package is compared first"
	return o
}

func timePackage(version string, hashes ...string) obj {
	return obj{"ecosystem": "pypi", "name": "mcp-server-time", "version": version, "hashes": hashes}
}

func timeImagePackage(digest string) obj {
	return obj{"ecosystem": "oci", "name": timeImage, "digest": digest}
}

// makeLaunchedLock is the lockfile make_lock writes of a server launched
// by command, with what the host resolved of its package.
func makeLaunchedLock(t testing.TB, command string, launched obj) obj {
	res := call(t, "make_lock", obj{"approved_at": approvedAt, "observed": launchedObserved(t, command, launched)})
	var doc obj
	json.Unmarshal([]byte(resultField(t, res, "lock")), &doc)
	return doc
}

// launchedKindsCases are the pypi and oci cases: a distribution launched
// by uvx stands in for its command line as an npm package does; an image
// by digest is compared, and then its command line, since docker's options
// before the image change what runs.
func launchedKindsCases(t testing.TB) []goldenCase {
	var cs []goldenCase
	add := func(name string, lock obj, observed obj) {
		cs = append(cs, goldenCase{name, obj{"now": checkNow, "mode": "enforce", "lock": lock, "observed": observed}})
	}
	same := obj{"package": timePackage("2025.9.25", timeWheel, timeSdist)}
	py := makeLaunchedLock(t, "uvx "+timeSpec, same)
	add("launched pypi: the approved distribution", py, launchedObserved(t, "uvx "+timeSpec, same))
	add("launched pypi: the same distribution through another uvx, its name as written otherwise", py,
		launchedObserved(t, "/opt/uv/bin/uvx --quiet Mcp_Server.Time@2025.9.25", same))
	add("launched pypi: the same distribution passed other arguments", py, launchedObserved(t, "uvx "+timeSpec+" --local-timezone UTC", same))
	add("launched pypi: another file under the same version", py, launchedObserved(t, "uvx "+timeSpec,
		obj{"package": timePackage("2025.9.25", timeSdist, "sha256:"+strings.Repeat("ab", 32))}))
	add("launched pypi: another file denied before the server starts", py, launchedNotStarted(t, "uvx "+timeSpec,
		obj{"package": timePackage("2025.9.25", "sha256:"+strings.Repeat("ab", 32))}))
	add("launched pypi: another version not on the index yet denied before the server starts", py,
		launchedNotStarted(t, "uvx mcp-server-time==2026.1.1", obj{"not_resolved": "not_installed", "spec": "mcp-server-time==2026.1.1"}))
	add("launched pypi: unpinned keeps the command-line rule", py, launchedObserved(t, "uvx mcp-server-time",
		obj{"not_resolved": "unpinned", "spec": "mcp-server-time"}))

	// A command the resolver does not read, against a lockfile that pins a
	// package: the command-line rule, the record saying why no package was
	// compared.
	add("launched pypi: a command that is not a launcher against the pin keeps the command-line rule", py,
		launchedObserved(t, "python -m mcp_server_time", obj{"not_resolved": "not_a_launcher"}))

	img := obj{"package": timeImagePackage(timeDigest)}
	dockerRun := "docker run -i --rm " + timeImage + "@" + timeDigest
	oci := makeLaunchedLock(t, dockerRun, img)
	add("launched oci: the approved image", oci, launchedObserved(t, dockerRun, img))
	add("launched oci: the same image with other docker options keeps the command-line rule", oci,
		launchedObserved(t, "docker run -i --rm -v /:/host "+timeImage+"@"+timeDigest, img))
	add("launched oci: another digest denied before the server starts", oci,
		launchedNotStarted(t, "docker run -i --rm "+timeImage+"@"+otherDigest, obj{"package": timeImagePackage(otherDigest)}))
	add("launched oci: a tag keeps the command-line rule", oci,
		launchedObserved(t, "docker run -i --rm "+timeImage+":latest", obj{"not_resolved": "unpinned", "spec": timeImage + ":latest"}))
	return cs
}

// launchedLock is the lockfile make_lock writes of server-memory launched
// with `npx -y`: it pins the package.
func launchedLock(t testing.TB) obj {
	o := launchedObserved(t, "npx -y "+memorySpec, obj{"package": memoryPackage("2026.8.31", memoryIntegrity)})
	res := call(t, "make_lock", obj{"approved_at": approvedAt, "observed": o})
	var doc obj
	json.Unmarshal([]byte(resultField(t, res, "lock")), &doc)
	return doc
}

func launchedCases(t testing.TB) []goldenCase {
	lock := launchedLock(t)
	var cs []goldenCase
	add := func(name, command string, launched obj) {
		cs = append(cs, goldenCase{name, obj{"now": checkNow, "mode": "enforce", "lock": lock, "observed": launchedObserved(t, command, launched)}})
	}
	same := obj{"package": memoryPackage("2026.8.31", memoryIntegrity)}
	add("launched: the approved package", "npx -y "+memorySpec, same)
	add("launched: the same package through another path to npx", "/usr/local/bin/npx --yes "+memorySpec, same)
	add("launched: another tarball under the same version", "npx -y "+memorySpec,
		obj{"package": memoryPackage("2026.8.31", "sha512-AAAASeJm8op2Cx736ck9MO8SdbFR+Of04KC/uchXnxvCTI68dJCRaxWuUBf8cv5RKNqGK98vHjRAmadapfnuRg==")})
	add("launched: another version", "npx -y @modelcontextprotocol/server-memory@2026.9.1",
		obj{"package": memoryPackage("2026.9.1", "sha512-BBBBSeJm8op2Cx736ck9MO8SdbFR+Of04KC/uchXnxvCTI68dJCRaxWuUBf8cv5RKNqGK98vHjRAmadapfnuRg==")})
	add("launched: the same package passed other arguments", "npx -y "+memorySpec+" --memory-path /tmp/other.json", same)
	add("launched: not installed keeps the command-line rule", "/usr/local/bin/npx -y "+memorySpec, obj{"not_resolved": "not_installed", "spec": memorySpec})
	add("launched: unpinned spec keeps the command-line rule", "npx -y @modelcontextprotocol/server-memory", obj{"not_resolved": "unpinned", "spec": "@modelcontextprotocol/server-memory"})
	// Before the server is started: the host hands the package it resolved
	// and no pages (launchedNotStarted); another package is denied without
	// running it.
	cs = append(cs, goldenCase{"launched: another version denied before the server starts", obj{"now": checkNow, "mode": "enforce", "lock": lock,
		"observed": launchedNotStarted(t, "npx -y @modelcontextprotocol/server-memory@2026.9.1", obj{"package": memoryPackage("2026.9.1", "sha512-BBBBSeJm8op2Cx736ck9MO8SdbFR+Of04KC/uchXnxvCTI68dJCRaxWuUBf8cv5RKNqGK98vHjRAmadapfnuRg==")})}})
	cs = append(cs, goldenCase{"launched: another version not installed yet denied before the server starts", obj{"now": checkNow, "mode": "enforce", "lock": lock,
		"observed": launchedNotStarted(t, "npx -y @modelcontextprotocol/server-memory@2026.9.1", obj{"not_resolved": "not_installed", "spec": "@modelcontextprotocol/server-memory@2026.9.1"})}})
	cs = append(cs, goldenCase{"launched: the approved version not installed yet is not judged before the start", obj{"now": checkNow, "mode": "enforce", "lock": lock,
		"observed": launchedNotStarted(t, "npx -y "+memorySpec, obj{"not_resolved": "not_installed", "spec": memorySpec})}})
	// A lockfile from before the extension: the command line is compared
	// as before, and the record says what the host resolved.
	old := deepCopy(lock)
	delete(old, "launched")
	delete(old, "sha256")
	cs = append(cs, goldenCase{"launched: a lockfile without the pin compares the command line", obj{"now": checkNow, "mode": "enforce", "lock": old,
		"observed": launchedObserved(t, "/usr/local/bin/npx -y "+memorySpec, same)}})
	// A command that is not a launcher, against a lockfile that pins no
	// package: the record every host writes, with no server.launched.
	node := launchedObserved(t, "node dist/index.js", obj{"not_resolved": "not_a_launcher"})
	res := call(t, "make_lock", obj{"approved_at": approvedAt, "observed": node})
	var nodeLock obj
	json.Unmarshal([]byte(resultField(t, res, "lock")), &nodeLock)
	cs = append(cs, goldenCase{"launched: not a launcher against a lockfile without the pin records nothing of it", obj{"now": checkNow, "mode": "enforce", "lock": nodeLock, "observed": node}})
	return cs
}

// launchedOpVectors are make_lock's vectors with a launched package, and
// the observed launched members it refuses.
func launchedOpVectors(t testing.TB) []opVector {
	var vs []opVector
	add := func(op, name string, request any) { vs = append(vs, opVector{Op: op, Name: name, Request: request}) }
	pkg := obj{"package": memoryPackage("2026.8.31", memoryIntegrity)}
	add("make_lock", "with a launched package", obj{"approved_at": approvedAt, "observed": launchedObserved(t, "npx -y "+memorySpec, pkg)})
	add("make_lock", "launched not resolved pins nothing", obj{"approved_at": approvedAt, "observed": launchedObserved(t, "npx -y "+memorySpec, obj{"not_resolved": "not_installed"})})
	add("make_lock", "launched with a range refused", obj{"approved_at": approvedAt, "observed": launchedObserved(t, "npx -y "+memorySpec, obj{"package": memoryPackage("^2026.8.31", memoryIntegrity)})})
	add("make_lock", "launched with both members refused", obj{"approved_at": approvedAt, "observed": launchedObserved(t, "npx -y "+memorySpec, obj{"package": memoryPackage("2026.8.31", memoryIntegrity), "not_resolved": "unpinned"})})
	add("make_lock", "launched spec beside a package refused", obj{"approved_at": approvedAt, "observed": launchedObserved(t, "npx -y "+memorySpec, obj{"package": memoryPackage("2026.8.31", memoryIntegrity), "spec": memorySpec})})
	pyObs := func(p obj) obj { return launchedObserved(t, "uvx "+timeSpec, obj{"package": p}) }
	add("make_lock", "with a pypi distribution", obj{"approved_at": approvedAt, "observed": pyObs(timePackage("2025.9.25", timeWheel, timeSdist))})
	add("make_lock", "pypi hashes unsorted refused", obj{"approved_at": approvedAt, "observed": pyObs(timePackage("2025.9.25", timeSdist, timeWheel))})
	add("make_lock", "pypi with a specifier refused", obj{"approved_at": approvedAt, "observed": pyObs(timePackage(">=2025.9.25", timeWheel))})
	add("make_lock", "pypi name not normalized refused", obj{"approved_at": approvedAt, "observed": pyObs(obj{"ecosystem": "pypi", "name": "MCP_server_time", "version": "2025.9.25", "hashes": []string{timeWheel}})})
	add("make_lock", "pypi with an integrity refused", obj{"approved_at": approvedAt, "observed": pyObs(obj{"ecosystem": "pypi", "name": "mcp-server-time", "version": "2025.9.25", "integrity": memoryIntegrity})})
	ociObs := func(p obj) obj {
		return launchedObserved(t, "docker run -i --rm "+timeImage+"@"+timeDigest, obj{"package": p})
	}
	add("make_lock", "with an oci image", obj{"approved_at": approvedAt, "observed": ociObs(timeImagePackage(timeDigest))})
	add("make_lock", "oci name with a tag refused", obj{"approved_at": approvedAt, "observed": ociObs(obj{"ecosystem": "oci", "name": timeImage + ":latest", "digest": timeDigest})})
	add("make_lock", "oci digest not sha256 refused", obj{"approved_at": approvedAt, "observed": ociObs(timeImagePackage("md5:0123"))})
	add("make_lock", "launched of an unknown ecosystem refused", obj{"approved_at": approvedAt, "observed": ociObs(obj{"ecosystem": "cargo", "name": "x", "version": "1.0.0", "integrity": memoryIntegrity})})
	add("make_lock", "with a package a dist-tag resolved", obj{"approved_at": approvedAt, "observed": launchedObserved(t, "npx -y @modelcontextprotocol/server-memory@latest", pkg)})
	add("make_lock", "launched with an unknown reason refused", obj{"approved_at": approvedAt, "observed": launchedObserved(t, "npx -y "+memorySpec, obj{"not_resolved": "offline"})})
	// approve keeps the pin of the old lockfile, and refuses a record
	// whose package changed.
	lock := launchedLock(t)
	updated := launchedObserved(t, "npx -y "+memorySpec, pkg)
	updated["pages"] = []string{page(t, descriptionUpdate(baseTools()), "")}
	rec := call(t, "continuity_check", obj{"now": checkNow, "lock": lock, "observed": updated})
	add("approve", "keeps the launched package of the old lockfile", obj{"record": string(rec), "lock": lock, "observed": updated, "names": []string{"list_issues"}, "approved_at": checkNow})
	other := launchedObserved(t, "npx -y @modelcontextprotocol/server-memory@2026.9.1",
		obj{"package": memoryPackage("2026.9.1", "sha512-BBBBSeJm8op2Cx736ck9MO8SdbFR+Of04KC/uchXnxvCTI68dJCRaxWuUBf8cv5RKNqGK98vHjRAmadapfnuRg==")})
	other["pages"] = updated["pages"]
	rec = call(t, "continuity_check", obj{"now": checkNow, "lock": lock, "observed": other})
	add("approve", "a changed launched package is not approvable", obj{"record": string(rec), "lock": lock, "observed": other, "names": []string{"list_issues"}, "approved_at": checkNow})
	return vs
}

// launchedTagCases are the cases of a package an npm dist-tag names:
// `npx -y pkg` (latest) is pinned as the release the registry's dist-tags
// named at lock time, and every check compares the release it names now
// (the host resolves the tag again). A moved tag, another tarball, and a
// tag no registry resolved are denied before the server starts.
func launchedTagCases(t testing.TB) []goldenCase {
	const bare = "@modelcontextprotocol/server-memory"
	moved := obj{"package": memoryPackage("2026.9.1", "sha512-BBBBSeJm8op2Cx736ck9MO8SdbFR+Of04KC/uchXnxvCTI68dJCRaxWuUBf8cv5RKNqGK98vHjRAmadapfnuRg==")}
	same := obj{"package": memoryPackage("2026.8.31", memoryIntegrity)}
	tagged := makeLaunchedLock(t, "npx -y "+bare, same)
	var cs []goldenCase
	add := func(name string, lock, observed obj) {
		cs = append(cs, goldenCase{name, obj{"now": checkNow, "mode": "enforce", "lock": lock, "observed": observed}})
	}
	add("launched tag: latest still names the approved release", tagged, launchedObserved(t, "npx -y "+bare, same))
	add("launched tag: latest moved to another release denied before the server starts", tagged, launchedNotStarted(t, "npx -y "+bare, moved))
	add("launched tag: another tarball under the tagged release denied before the server starts", tagged, launchedNotStarted(t, "npx -y "+bare,
		obj{"package": memoryPackage("2026.8.31", "sha512-AAAASeJm8op2Cx736ck9MO8SdbFR+Of04KC/uchXnxvCTI68dJCRaxWuUBf8cv5RKNqGK98vHjRAmadapfnuRg==")}))
	add("launched tag: a tag no registry resolved denied before the server starts", tagged,
		launchedNotStarted(t, "npx -y "+bare, obj{"not_resolved": "not_installed", "spec": bare}))
	add("launched tag: a range keeps the command-line rule", tagged,
		launchedObserved(t, "npx -y "+bare+"@^2026.8.31", obj{"not_resolved": "unpinned", "spec": bare + "@^2026.8.31"}))
	add("launched tag: @latest unresolved against an exact pin denied before the server starts", launchedLock(t),
		launchedNotStarted(t, "npx -y "+bare+"@latest", obj{"not_resolved": "not_installed", "spec": bare + "@latest"}))
	add("launched tag: another package's tag unresolved keeps the command-line rule", tagged,
		launchedNotStarted(t, "npx -y @modelcontextprotocol/server-everything@latest", obj{"not_resolved": "not_installed", "spec": "@modelcontextprotocol/server-everything@latest"}))
	return cs
}
