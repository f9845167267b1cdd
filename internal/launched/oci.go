package launched

import (
	"path/filepath"
	"regexp"
	"strings"
)

// dockerBool and dockerValue are the `docker run` options this package
// reads past to find the image: options with no value, and options whose
// value is the next word (or follows =). Any other option makes the
// command line one it does not read: the image might be its value.
var (
	dockerBool = map[string]bool{
		"-i": true, "--interactive": true, "--rm": true, "--init": true, "--read-only": true,
		"-t": true, "--tty": true, "-it": true, "-ti": true, "--privileged": true, "--no-healthcheck": true,
	}
	dockerValue = map[string]bool{
		"-e": true, "--env": true, "--env-file": true, "-v": true, "--volume": true, "--mount": true,
		"--name": true, "--network": true, "--net": true, "-w": true, "--workdir": true, "-u": true,
		"--user": true, "--platform": true, "--entrypoint": true, "--cap-add": true, "--cap-drop": true,
		"-m": true, "--memory": true, "--cpus": true, "-l": true, "--label": true, "--add-host": true,
		"--dns": true, "--tmpfs": true, "--pull": true, "-h": true, "--hostname": true,
	}
	// imageDigest is name[:tag]@sha256:<hex>, the name lowercase as docker
	// requires it.
	imageDigest = regexp.MustCompile(`^([a-z0-9][a-z0-9._/:-]*)@(sha256:[0-9a-f]{64})$`)
)

// dockerImage is the image word of a `docker run` command line; ok is
// false for any other command or an option not read.
func dockerImage(argv []string) (string, bool) {
	if len(argv) < 3 {
		return "", false
	}
	base := strings.TrimSuffix(strings.ToLower(filepath.Base(argv[0])), ".exe")
	if base != "docker" || argv[1] != "run" {
		return "", false
	}
	for i := 2; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "-") {
			return a, true
		}
		if name, _, hasValue := strings.Cut(a, "="); hasValue && dockerValue[name] {
			continue
		}
		switch {
		case dockerBool[a]:
		case dockerValue[a] && i+1 < len(argv):
			i++
		default:
			return "", false
		}
	}
	return "", false
}

// resolveImage pins an image named by digest from the command line: the
// digest is what docker runs, whatever the tag beside it says. An image
// named by tag alone is Unpinned: what the tag names is the registry's
// (or the local daemon's) answer of the day, read by no resolver here.
func resolveImage(image string) Resolution {
	m := imageDigest.FindStringSubmatch(image)
	if m == nil {
		return Resolution{Reason: Unpinned, Spec: image}
	}
	name := m[1]
	if i := strings.LastIndexByte(name, ':'); i >= 0 && !strings.Contains(name[i:], "/") {
		name = name[:i] // name:tag@digest: the digest is what runs
	}
	return Resolution{Package: &Package{Ecosystem: "oci", Name: name, Digest: m[2]}, Spec: image}
}
