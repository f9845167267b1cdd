package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/internal/atomicfile"
	"github.com/crawlcheck/verifier/internal/clientconfig"
	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/preflight"
)

// cmdInstall puts `crawlcheck run` between a client and each of its stdio
// servers: every entry is wrapped in place (its command becomes this
// binary, its args `run --lock L --log G -- COMMAND ARGS…`), after a
// person has read the tools the server lists now and approved them, which
// become the entry's lockfile beside the config. Nothing else in the file
// changes: comments, key order, variables, env and the server's name stay.
func cmdInstall(c *cli, args []string) error {
	fs := c.flagSet("install")
	clientName := fs.String("client", "", "the client: "+strings.Join(clientconfig.Names(), ", ")+" (required)")
	configPath := fs.String("config", "", "the client's config `FILE` (default: the first of its default paths that exists; docs/clients.md)")
	dryRun := fs.Bool("dry-run", false, "show the change to the config; start no server, write nothing")
	yes := fs.Bool("yes", false, "approve each server's tools without asking (for scripts: the person approved elsewhere)")
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
	client, path, err := installTarget(*clientName, *configPath)
	if err != nil {
		return err
	}
	if !*yes && !*dryRun && !isTerminal(os.Stdin) {
		return usagef("stdin is not a terminal: pass --yes to approve each server's tools without asking")
	}
	now, err := c.clock()
	if err != nil {
		return err
	}
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("the path of this crawlcheck binary, which the config will launch: %w", err)
	}
	orig, state, err := readInstalled(client, path)
	if err != nil {
		return err
	}
	ctx := expandContext(path)
	cur := orig
	in := bufio.NewReader(c.stdin)
	wrapped := 0
	for _, e := range orig.Entries {
		if _, _, ok := clientconfig.Wrapped(e); ok {
			say(c.stdout, "%s: already installed\n", e.Name)
			continue
		}
		if e.Disabled != "" {
			say(c.stdout, "%s: left as it is: disabled in the config (%s)\n", e.Name, e.Disabled)
			continue
		}
		tg, refused := orig.Expand(e, ctx)
		if refused != nil {
			say(c.stdout, "%s: left as it is: cannot start it as %s does: %s\n", e.Name, client.Title, strings.Join(refused, "; "))
			continue
		}
		lock, log := clientconfig.Paths(path, e.Name)
		if !*dryRun {
			approved, err := approveServer(c, in, e.Name, tg, lock, now, *yes)
			if err != nil {
				return err
			}
			if !approved {
				continue
			}
		}
		next, saved, err := cur.Wrap(e.Name, clientconfig.Gateway{Binary: bin, Lock: lock, Log: log})
		if err != nil {
			say(c.stdout, "%s: left as it is: %v\n", e.Name, err)
			continue
		}
		if cur, err = clientconfig.Read(client, path, next); err != nil {
			return fmt.Errorf("the wrapped config does not read back (nothing written): %w", err)
		}
		state.Servers[e.Name] = saved
		wrapped++
	}
	if wrapped == 0 {
		say(c.stdout, "nothing to change in %s\n", path)
		return nil
	}
	printLineDiff(c.stdout, path, orig.Data, cur.Data)
	if *dryRun {
		say(c.stdout, "dry run: nothing written\n")
		return nil
	}
	backup := path + ".crawlcheck.bak"
	if err := atomicfile.Write(backup, orig.Data, 0o600); err != nil {
		return err
	}
	// The record before the config: a config written without its record
	// could not be uninstalled, a record without its config is harmless
	// (uninstall finds the entries as they were and leaves them).
	if err := writeInstallState(path, state); err != nil {
		return err
	}
	if err := atomicfile.Write(path, cur.Data, 0o644); err != nil {
		return err
	}
	say(c.stdout, "installed crawlcheck in front of %d server(s) in %s (the file as it was: %s); restart %s to use it\n", wrapped, path, backup, client.Title)
	return nil
}

// approveServer starts the server once as the client would (tg: the entry
// with its variables expanded as the client expands them), shows the
// tools it lists as approve shows them (the core's diff against no tools,
// then the approval scan) and, once a person answers y (or --yes), writes
// them as the server's lockfile. A server that cannot be started or read
// is left unwrapped, with the reason: never is an entry wrapped whose
// tools nobody approved.
func approveServer(c *cli, in *bufio.Reader, name string, tg clientconfig.Target, lock string, now time.Time, yes bool) (bool, error) {
	t := target{args: append([]string{tg.Command}, tg.Args...), dir: tg.Cwd}
	for _, kv := range tg.Env {
		t.env = append(t.env, kv.Key+"="+kv.Value)
	}
	shown := strings.Join(t.args, " ")
	if tg.URL != "" {
		// A remote server is reached as the gateway will reach it: its
		// headers, and the login kept for it.
		t = target{url: tg.URL, sse: tg.SSE}
		for _, kv := range tg.Headers {
			t.headers = append(t.headers, kv.Key+"="+kv.Value)
		}
		shown = tg.URL
	}
	obs, err := t.observe(c)
	if err != nil {
		return false, err
	}
	if err := obs.FailureError(); err != nil {
		say(c.stdout, "%s: left as it is: its tools could not be read: %v\n", name, err)
		return false, nil
	}
	var d diffResult
	if err := corecall.Into("diff", map[string]any{"old": []any{}, "new": map[string]any{"pages": pageTexts(obs)}}, &d); err != nil {
		say(c.stdout, "%s: left as it is: %v\n", name, err)
		return false, nil
	}
	say(c.stdout, "\nserver %s: %s\n", name, shown)
	printDiff(c.stdout, d)
	printScanOf(c.stdout, "\nscan of the tools to approve", obs, d.Added)
	if !yes {
		say(c.stderr, "Approve these tools for %s? [y/N] ", name)
		answer, _ := in.ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			say(c.stdout, "%s: not approved; left as it is\n", name)
			return false, nil
		}
	}
	made, err := preflight.MakeLock(obs, preflight.LockOptions{Format: "crawlcheck", Now: now})
	if err != nil {
		say(c.stdout, "%s: left as it is: cannot pin its tools: %v\n", name, err)
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		return false, err
	}
	if err := atomicfile.Write(lock, made, 0o644); err != nil {
		return false, err
	}
	say(c.stdout, "%s: approved %d tool(s): wrote %s\n", name, len(d.Added), lock)
	return true, nil
}

// cmdUninstall gives each entry install wrapped back the bytes it had,
// from the install record beside the config. An entry edited since is
// left as it is, with the backup named. Lockfiles and logs are kept.
func cmdUninstall(c *cli, args []string) error {
	fs := c.flagSet("uninstall")
	clientName := fs.String("client", "", "the client: "+strings.Join(clientconfig.Names(), ", ")+" (required)")
	configPath := fs.String("config", "", "the client's config `FILE` (default: the first of its default paths that exists)")
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
	client, path, err := installTarget(*clientName, *configPath)
	if err != nil {
		return err
	}
	orig, state, err := readInstalled(client, path)
	if err != nil {
		return err
	}
	if len(state.Servers) == 0 {
		say(c.stdout, "nothing installed in %s (no record at %s)\n", path, clientconfig.StatePath(path))
		return nil
	}
	cur := orig
	restored := 0
	for _, e := range orig.Entries {
		saved := state.Servers[e.Name]
		if saved == nil {
			continue
		}
		next, err := cur.Unwrap(e.Name, saved)
		if err != nil {
			say(c.stdout, "%s: left as it is: %v (%s.crawlcheck.bak holds the file as it was before install)\n", e.Name, err, path)
			continue
		}
		if cur, err = clientconfig.Read(client, path, next); err != nil {
			return fmt.Errorf("the restored config does not read back (nothing written): %w", err)
		}
		delete(state.Servers, e.Name)
		restored++
	}
	for name := range state.Servers {
		if !hasEntry(cur, name) {
			say(c.stdout, "%s: no longer in the config\n", name)
		}
	}
	if restored == 0 {
		return blocked("nothing restored in %s", path)
	}
	printLineDiff(c.stdout, path, orig.Data, cur.Data)
	if err := atomicfile.Write(path, cur.Data, 0o644); err != nil {
		return err
	}
	if err := writeInstallState(path, state); err != nil {
		return err
	}
	say(c.stdout, "restored %d server(s) in %s; their lockfiles and logs are kept in %s\n", restored, path, filepath.Join(filepath.Dir(path), "crawlcheck"))
	return nil
}

func hasEntry(f *clientconfig.File, name string) bool {
	for _, e := range f.Entries {
		if e.Name == name {
			return true
		}
	}
	return false
}

// installTarget is the client and its config file: --config, or the first
// of the client's default paths that exists.
func installTarget(clientName, configPath string) (*clientconfig.Client, string, error) {
	if clientName == "" {
		return nil, "", usagef("--client is required: %s", strings.Join(clientconfig.Names(), ", "))
	}
	client, err := clientconfig.Lookup(clientName)
	if err != nil {
		return nil, "", usagef("--client: %v", err)
	}
	if configPath == "" {
		home, _ := os.UserHomeDir()
		cwd, _ := os.Getwd()
		tried := client.DefaultPaths(runtime.GOOS, home, cwd, os.Getenv)
		for _, p := range tried {
			if _, err := os.Stat(p); err == nil {
				configPath = p
				break
			}
		}
		if configPath == "" {
			return nil, "", usagef("no %s config at %s: give --config", client.Title, strings.Join(tried, " or "))
		}
	}
	abs, err := filepath.Abs(configPath)
	if err != nil {
		return nil, "", err
	}
	return client, abs, nil
}

// readInstalled reads the client's config at path and the install
// record beside it (empty when there is none): what install and uninstall
// both start from.
func readInstalled(client *clientconfig.Client, path string) (*clientconfig.File, *clientconfig.State, error) {
	data, err := readInput("the config", path)
	if err != nil {
		return nil, nil, err
	}
	orig, err := clientconfig.Read(client, path, data)
	if err != nil {
		return nil, nil, err
	}
	state, err := readInstallState(path)
	if err != nil {
		return nil, nil, err
	}
	return orig, state, nil
}

// readInstallState reads the install record beside a config, or an empty
// one.
func readInstallState(config string) (*clientconfig.State, error) {
	p := clientconfig.StatePath(config)
	data, err := readInput("the install record", p)
	if errors.Is(err, iofs.ErrNotExist) {
		return &clientconfig.State{Version: 1, Config: config, Servers: map[string]*clientconfig.Saved{}}, nil
	}
	if err != nil {
		return nil, err
	}
	s, err := clientconfig.ReadState(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return s, nil
}

func writeInstallState(config string, s *clientconfig.State) error {
	p := clientconfig.StatePath(config)
	if len(s.Servers) == 0 {
		if err := os.Remove(p); err != nil && !errors.Is(err, iofs.ErrNotExist) {
			return err
		}
		return nil
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(p, append(data, '\n'), 0o644)
}

// printLineDiff writes the lines that changed between old and new, as a
// unified diff with no context: the lines common to both ends are trimmed,
// and the rest compared line by line by their longest common subsequence
// (or shown whole when too long to compare).
func printLineDiff(w io.Writer, path string, old, new []byte) {
	a, b := strings.SplitAfter(string(old), "\n"), strings.SplitAfter(string(new), "\n")
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	a, b = a[pre:len(a)-suf], b[pre:len(b)-suf]
	say(w, "--- %s\n+++ %s\n", path, path)
	line := func(mark, s string) { say(w, "%s%s\n", mark, strings.TrimRight(s, "\r\n")) }
	if len(a)*len(b) > 4_000_000 {
		say(w, "@@ -%d,%d +%d,%d @@\n", pre+1, len(a), pre+1, len(b))
		for _, s := range a {
			line("-", s)
		}
		for _, s := range b {
			line("+", s)
		}
		return
	}
	// lcs[i][j]: the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j, inHunk := 0, 0, false
	hunk := func() {
		if !inHunk {
			say(w, "@@ -%d +%d @@\n", pre+i+1, pre+j+1)
			inHunk = true
		}
	}
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			i++
			j++
			inHunk = false
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			hunk()
			line("-", a[i])
			i++
		default:
			hunk()
			line("+", b[j])
			j++
		}
	}
}
