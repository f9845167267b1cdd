package core_test

import (
	"encoding/json"
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
	// and no pages; another package is denied without running it.
	notStarted := func(command string, launched obj) obj {
		o := launchedObserved(t, command, launched)
		delete(o, "pages")
		delete(o, "server_info")
		delete(o, "protocol_version")
		delete(o, "handshake")
		o["failure"] = "server_unavailable"
		o["failure_detail"] = "not started: its launched package is compared first"
		return o
	}
	cs = append(cs, goldenCase{"launched: another version denied before the server starts", obj{"now": checkNow, "mode": "enforce", "lock": lock,
		"observed": notStarted("npx -y @modelcontextprotocol/server-memory@2026.9.1", obj{"package": memoryPackage("2026.9.1", "sha512-BBBBSeJm8op2Cx736ck9MO8SdbFR+Of04KC/uchXnxvCTI68dJCRaxWuUBf8cv5RKNqGK98vHjRAmadapfnuRg==")})}})
	cs = append(cs, goldenCase{"launched: another version not installed yet denied before the server starts", obj{"now": checkNow, "mode": "enforce", "lock": lock,
		"observed": notStarted("npx -y @modelcontextprotocol/server-memory@2026.9.1", obj{"not_resolved": "not_installed", "spec": "@modelcontextprotocol/server-memory@2026.9.1"})}})
	cs = append(cs, goldenCase{"launched: the approved version not installed yet is not judged before the start", obj{"now": checkNow, "mode": "enforce", "lock": lock,
		"observed": notStarted("npx -y "+memorySpec, obj{"not_resolved": "not_installed", "spec": memorySpec})}})
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
