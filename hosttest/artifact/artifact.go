// Package artifact builds what hosttest loads: crawlcheck.wasm,
// libcrawlcheck.so and the C harness that drives the library.
//
// Tests build their own copies instead of trusting build/, which may be
// missing or older than the source: a byte-identity test of a stale artifact
// proves nothing. The flags are the Makefile's, so the bytes are the same
// (-trimpath makes the build reproducible), and Go's build cache keeps a
// rebuild of unchanged source to the link step.
package artifact

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Set is one build of the artifacts.
type Set struct {
	WASM    string // crawlcheck.wasm
	Lib     string // libcrawlcheck.so
	Harness string // the C harness (hosttest/c/harness.c)
}

// Build builds the three artifacts into dir with the given build tags
// (none for a release build). The wasm and the library build concurrently.
func Build(dir string, tags ...string) (Set, error) {
	root, err := ModuleRoot()
	if err != nil {
		return Set{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Set{}, fmt.Errorf("artifact: %w", err)
	}
	s := Set{
		WASM:    filepath.Join(dir, "crawlcheck.wasm"),
		Lib:     filepath.Join(dir, "libcrawlcheck.so"),
		Harness: filepath.Join(dir, "harness"),
	}
	goBuild := func(out, pkg string, env ...string) error {
		args := []string{"build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w"}
		if len(tags) > 0 {
			args = append(args, "-tags="+strings.Join(tags, ","))
		}
		return run(root, env, "go", append(args, "-o", out, pkg)...)
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	wg.Go(func() { errs[0] = goBuild(s.WASM, "./wasm", "GOOS=wasip1", "GOARCH=wasm") })
	wg.Go(func() { errs[1] = goBuild(s.Lib, "./cshared", "CGO_ENABLED=1") })
	wg.Go(func() {
		errs[2] = run(root, nil, "gcc", "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", "-pthread",
			"-Icshared", "-o", s.Harness, "hosttest/c/harness.c", "-ldl")
	})
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return Set{}, err
		}
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
