package main

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/crawlcheck/verifier/internal/preflight"
)

// launchedPackageChanged is the core's observation that the package a stdio
// command line launches is not the one the lockfile pins.
const launchedPackageChanged = "launched_package_changed"

// launchedSide is one side of a launched_package_changed detail: a package
// (npm: name, version and registry integrity; PyPI: name, version and file
// hashes; an image: name and digest) or the spec a host could not resolve.
// Each is said whole, since the same version with another tarball is a
// change too.
type launchedSide struct {
	Name      string   `json:"name"`
	Version   string   `json:"version"`
	Integrity string   `json:"integrity"`
	Hashes    []string `json:"hashes"`
	Digest    string   `json:"digest"`
	Spec      string   `json:"spec"`
}

func (s launchedSide) String() string {
	switch {
	case s.Spec != "":
		return s.Spec + " (not resolved)"
	case s.Digest != "":
		return s.Name + "@" + s.Digest
	case s.Integrity != "":
		return s.Name + " " + s.Version + ", integrity " + s.Integrity
	case s.Hashes != nil:
		return s.Name + " " + s.Version + ", files " + strings.Join(s.Hashes, " ")
	}
	return s.Name + " " + s.Version
}

// printLaunchedChange says, in the record's terms, that the package the
// command line launches is not the one approved, and what re-approves it:
// the core's approve re-approves tools and keeps the old lockfile's launched
// pin (a session observation no name approves), so the lockfile approve
// writes still pins the old package and the next check denies again; only
// locking again (relock, crawlcheck lock) pins the new one. Without it,
// approve said "no change" and wrote that lockfile silently. Prints
// nothing when the record has no such change.
func printLaunchedChange(w io.Writer, rec preflight.Record, relock string) {
	for _, f := range rec.Observations {
		if f.Observation != launchedPackageChanged || f.Tool != "" {
			continue
		}
		var d struct {
			Approved launchedSide `json:"approved"`
			Observed launchedSide `json:"observed"`
		}
		say(w, "%s (%s): the package the command line launches is not the one approved\n", f.Observation, f.Effect)
		if json.Unmarshal(f.Detail, &d) == nil {
			say(w, "  approved  %s\n  launched  %s\n", d.Approved, d.Observed)
		} else {
			printDetail(w, f.Detail)
		}
		say(w, "approve re-approves tools and keeps the approved package pinned, so the next check denies again; `%s` pins the new one\n", relock)
	}
}

// launchedChanged reports whether rec has launched_package_changed.
func launchedChanged(rec preflight.Record) bool {
	for _, f := range rec.Observations {
		if f.Observation == launchedPackageChanged && f.Tool == "" {
			return true
		}
	}
	return false
}
