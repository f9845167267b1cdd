// Package artifact builds what hosttest loads: crawlcheck.wasm,
// libcrawlcheck.so and the C harness that drives the library.
//
// Tests build their own copies instead of trusting build/, which may be
// missing or older than the source: a byte-identity test of a stale artifact
// proves nothing. They build through the Makefile's targets (make wasm
// cshared harness BUILD=dir TAGS=...), the one place the flags live, so the
// bytes are the release's (-trimpath makes the build reproducible), and Go's
// build cache keeps a rebuild of unchanged source to the link step.
package artifact

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Set is one build of the artifacts.
type Set struct {
	WASM    string // crawlcheck.wasm
	Lib     string // libcrawlcheck.so
	Harness string // the C harness (hosttest/c/harness.c)
}

// Build builds the three artifacts into dir with the given build tags
// (none for a release build), concurrently.
func Build(dir string, tags ...string) (Set, error) {
	root, err := ModuleRoot()
	if err != nil {
		return Set{}, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return Set{}, fmt.Errorf("artifact: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Set{}, fmt.Errorf("artifact: %w", err)
	}
	s := Set{
		WASM:    filepath.Join(dir, "crawlcheck.wasm"),
		Lib:     filepath.Join(dir, "libcrawlcheck.so"),
		Harness: filepath.Join(dir, "harness"),
	}
	args := []string{"-C", root, "-j3", "--no-print-directory", "wasm", "cshared", "harness", "BUILD=" + dir}
	if len(tags) > 0 {
		args = append(args, "TAGS="+strings.Join(tags, ","))
	}
	if err := run(root, nil, "make", args...); err != nil {
		return Set{}, err
	}
	return s, nil
}

// ModuleRoot is the directory of the verifier's go.mod.
func ModuleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("artifact: go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("artifact: not inside the module (go env GOMOD is %q)", mod)
	}
	return filepath.Dir(mod), nil
}

func run(dir string, env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("artifact: %s %s %s: %w\n%s", strings.Join(env, " "), name, strings.Join(args, " "), err, out.Bytes())
	}
	return nil
}
