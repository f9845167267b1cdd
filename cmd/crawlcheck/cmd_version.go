package main

import (
	"runtime"
	"runtime/debug"

	"github.com/crawlcheck/verifier/internal/corecall"
)

// cmdVersion prints what a bug report needs: the module version, the
// commit it was built from (vcs.revision, when the build had it: go build
// in a clone does, go test and go run -trimpath from a tarball do not),
// and the core's engine and ABI, which decide every byte of a record.
func cmdVersion(c *cli, args []string) error {
	fs := c.flagSet("version")
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
	printVersion(c)
	return nil
}

// releaseVersion and releaseCommit are stamped by make release with
// -ldflags=-X (the CHANGELOG's version, git rev-parse HEAD). A release is
// built with -buildvcs=false, so that its bytes do not depend on the state of
// a clone (vcs.modified, vcs.time): these two are then the only source of
// the version and commit, and they win over the build info when set.
var releaseVersion, releaseCommit string

// printVersion writes the version lines (crawlcheck version, --version).
func printVersion(c *cli) {
	version, commit, modified, when := "(unknown)", "", false, ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			case "vcs.time":
				when = s.Value
			}
		}
	}
	if version == "" {
		version = "(devel)"
	}
	if releaseVersion != "" {
		version = releaseVersion
	}
	if releaseCommit != "" {
		commit, modified, when = releaseCommit, false, ""
	}
	say(c.stdout, "crawlcheck %s\n", version)
	switch {
	case commit == "":
		say(c.stdout, "commit  unknown (built without version control information)\n")
	case modified:
		say(c.stdout, "commit  %s (with uncommitted changes)\n", commit)
	default:
		say(c.stdout, "commit  %s\n", commit)
	}
	if when != "" {
		say(c.stdout, "date    %s\n", when)
	}
	var v struct {
		Engine string `json:"engine"`
		ABI    int    `json:"abi"`
	}
	if err := corecall.Into("version", map[string]any{}, &v); err == nil {
		say(c.stdout, "engine  %s (ABI %d)\n", v.Engine, v.ABI)
	}
	say(c.stdout, "go      %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
