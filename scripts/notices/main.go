// Command notices writes notices/, the third-party notices of each artifact
// this repository releases: which Go modules are compiled into it (from
// go.mod, through `go list -deps` for every platform the artifact is built
// for), the licence each is under, and the licence texts themselves, which
// the licences of those modules require to travel with the binaries.
//
//	go run ./scripts/notices          (rewrites notices/)
//	go run ./scripts/notices -check   (exits 1 when notices/ is not current)
//
// It also reads the npm package's package-lock.json and the Python
// package's pyproject.toml: neither package has runtime dependencies today,
// and the day one gains some this command fails, so that the notices of that
// artifact are extended before it ships rather than after.
//
// A licence it cannot name, or one outside the permissive set the project's
// own Apache-2.0 licence can be distributed with, is an error: that is how a
// dependency that would rule Apache-2.0 out is caught when it is added.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// artifact is one released binary: the package built and the platforms it
// is built for (their module sets differ: golang.org/x/sys/windows, ...).
type artifact struct {
	file  string // the notices file's name under notices/
	title string
	pkg   string
	cgo   bool
	plats []string // GOOS/GOARCH
}

// desktop is every platform the CLI, the issuer and the C library ship for.
var desktop = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

var artifacts = []artifact{
	{"crawlcheck.txt", "crawlcheck (the CLI and gateway)", "./cmd/crawlcheck", false, desktop},
	{"crawlcheck-issuer.txt", "crawlcheck-issuer (the issuer service)", "./cmd/crawlcheck-issuer", false, desktop},
	{"libcrawlcheck.txt", "libcrawlcheck (the C library; the Python wheels carry it)", "./cshared", true, desktop},
	{"crawlcheck.wasm.txt", "crawlcheck.wasm (the WebAssembly core; the npm package @crawlcheck/sdk carries it)", "./wasm", false, []string{"wasip1/wasm"}},
}

// allowed are the licences a module compiled into an Apache-2.0 artifact may
// be under here: permissive ones, and MPL-2.0 (file-level copyleft, which
// leaves the rest of the work free) for the day one arrives.
var allowed = []string{"Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "ISC", "MIT", "MPL-2.0"}

// classify names the licences a licence text is, by the sentences that
// define each; nil when it recognises none.
func classify(text string) []string {
	t := strings.Join(strings.Fields(text), " ")
	var ids []string
	if strings.Contains(t, "Apache License") && strings.Contains(t, "Version 2.0") {
		ids = append(ids, "Apache-2.0")
	}
	if strings.Contains(t, "Redistribution and use in source and binary forms") {
		if strings.Contains(t, "Neither the name") || strings.Contains(t, "names of its contributors may be used") || strings.Contains(t, "name of the copyright holder nor") {
			ids = append(ids, "BSD-3-Clause")
		} else {
			ids = append(ids, "BSD-2-Clause")
		}
	}
	if strings.Contains(t, "Permission is hereby granted, free of charge") {
		ids = append(ids, "MIT")
	}
	if strings.Contains(t, "Permission to use, copy, modify, and/or distribute this software for any purpose") ||
		strings.Contains(t, "Permission to use, copy, modify, and distribute this software for any purpose with or without fee") {
		ids = append(ids, "ISC")
	}
	if strings.Contains(t, "Mozilla Public License Version 2.0") {
		ids = append(ids, "MPL-2.0")
	}
	return ids
}

// licenceFile names the files of a module's root that carry its licence
// and notices (LICENSE, LICENSE-3RD-PARTY.md, NOTICE, PATENTS, COPYING...).
var licenceFile = regexp.MustCompile(`(?i)^(licen[cs]e|copying|notice|patents)([-._].*)?$`)

type module struct {
	Path, Version, Dir string
	Main               bool
}

func goList(root, plat string, cgo bool, pkg string) ([]module, error) {
	goos, goarch, _ := strings.Cut(plat, "/")
	cmd := exec.Command("go", "list", "-deps", "-json=Module", pkg)
	cmd.Dir = root
	c := "0"
	if cgo {
		c = "1"
	}
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED="+c, "GOFLAGS=-mod=readonly")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s for %s: %v: %s", pkg, plat, err, stderr.Bytes())
	}
	var mods []module
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct{ Module *module }
		if err := dec.Decode(&p); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		if p.Module != nil && !p.Module.Main {
			mods = append(mods, *p.Module)
		}
	}
	return mods, nil
}

// licenceTexts reads a directory's licence files, in name order.
func licenceTexts(dir string) (names []string, texts []string, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range ents {
		if e.IsDir() || !licenceFile.MatchString(e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, nil, err
		}
		names = append(names, e.Name())
		texts = append(texts, strings.TrimRight(string(b), "\n \t"))
	}
	return names, texts, nil
}

// section is one component's entry: its name, licence and texts.
func section(b *strings.Builder, name, dir string) error {
	names, texts, err := licenceTexts(dir)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("%s: no licence file in %s", name, dir)
	}
	ids := classify(texts[0])
	if len(ids) == 0 {
		return fmt.Errorf("%s: cannot name the licence in %s/%s: read it, and teach classify() its defining sentence if it is one the project may ship", name, dir, names[0])
	}
	for _, id := range ids {
		if !slices.Contains(allowed, id) {
			return fmt.Errorf("%s is under %s, which an Apache-2.0 release cannot carry as is", name, id)
		}
	}
	fmt.Fprintf(b, "================================================================================\n%s\nLicence: %s\n", name, strings.Join(ids, " AND "))
	for i, n := range names {
		fmt.Fprintf(b, "\n--- %s ---\n\n%s\n", n, texts[i])
	}
	b.WriteString("\n")
	return nil
}

// render gives one artifact's notices file.
func render(root string, a artifact, goroot, goversion string) (string, error) {
	seen := map[string]module{}
	for _, p := range a.plats {
		mods, err := goList(root, p, a.cgo, a.pkg)
		if err != nil {
			return "", err
		}
		for _, m := range mods {
			seen[m.Path+"@"+m.Version] = m
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "Third-party notices for %s\n\n", a.title)
	fmt.Fprintf(&b, "This artifact is CrawlCheck's own code (Apache-2.0, LICENSE) compiled with the Go\n")
	fmt.Fprintf(&b, "standard library and runtime and the modules below, for %s.\n", strings.Join(a.plats, ", "))
	fmt.Fprintf(&b, "Generated by scripts/notices from go.mod; do not edit.\n\n")
	b.WriteString("Components:\n")
	fmt.Fprintf(&b, "  Go standard library and runtime (%s)\n", goversion)
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s %s\n", seen[k].Path, seen[k].Version)
	}
	b.WriteString("\n")
	if err := section(&b, "Go standard library and runtime "+goversion, goroot); err != nil {
		return "", err
	}
	for _, k := range keys {
		m := seen[k]
		if err := section(&b, m.Path+" "+m.Version, m.Dir); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// noRuntimeDeps fails when the npm or the Python package has gained a
// runtime dependency: its licence would have to ship in that package's
// notices, which this command does not write yet.
func noRuntimeDeps(root string) error {
	var lock struct {
		Packages map[string]struct {
			Dependencies map[string]string `json:"dependencies"`
		} `json:"packages"`
	}
	b, err := os.ReadFile(filepath.Join(root, "bindings", "js", "package-lock.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		return fmt.Errorf("bindings/js/package-lock.json: %v", err)
	}
	if d := lock.Packages[""].Dependencies; len(d) > 0 {
		return fmt.Errorf("@crawlcheck/sdk has runtime dependencies now (%v): their licences must go into its NOTICES.txt; extend scripts/notices", d)
	}
	py, err := os.ReadFile(filepath.Join(root, "bindings", "python", "pyproject.toml"))
	if err != nil {
		return err
	}
	if !regexp.MustCompile(`(?m)^dependencies = \[\]$`).Match(py) {
		return errors.New("the crawlcheck Python package has runtime dependencies now: their licences must go into its wheels' notices; extend scripts/notices")
	}
	return nil
}

// generate gives notices/'s files by name.
func generate(root string) (map[string]string, error) {
	if err := noRuntimeDeps(root); err != nil {
		return nil, err
	}
	env, err := exec.Command("go", "env", "GOROOT", "GOVERSION").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %v", err)
	}
	f := strings.Fields(string(env))
	if len(f) != 2 {
		return nil, fmt.Errorf("go env GOROOT GOVERSION: %q", env)
	}
	out := map[string]string{}
	for _, a := range artifacts {
		s, err := render(root, a, f[0], f[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.file, err)
		}
		out[a.file] = s
	}
	return out, nil
}

// stale names the files of dir that differ from want (or are missing or
// left over).
func stale(dir string, want map[string]string) []string {
	var bad []string
	for name, s := range want {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != s {
			bad = append(bad, name)
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if _, ok := want[e.Name()]; !ok {
			bad = append(bad, e.Name()+" (not generated)")
		}
	}
	sort.Strings(bad)
	return bad
}

func main() {
	check := flag.Bool("check", false, "report whether notices/ is current instead of writing it")
	flag.Parse()
	want, err := generate(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "notices:", err)
		os.Exit(1)
	}
	if *check {
		if bad := stale("notices", want); len(bad) > 0 {
			fmt.Fprintf(os.Stderr, "notices: not current: %s (run go run ./scripts/notices)\n", strings.Join(bad, ", "))
			os.Exit(1)
		}
		return
	}
	if err := os.MkdirAll("notices", 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "notices:", err)
		os.Exit(1)
	}
	for name, s := range want {
		if err := os.WriteFile(filepath.Join("notices", name), []byte(s), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "notices:", err)
			os.Exit(1)
		}
	}
}
