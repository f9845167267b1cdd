package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/internal/gateway"
	"github.com/crawlcheck/verifier/internal/preflight"
)

// exitCodeError ends a command with the exit status it carries: run's is
// its server's (the gateway stands where the server stood, and a client
// reads the server's exit).
type exitCodeError struct{ code int }

func (e *exitCodeError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// cmdRun is the gateway (internal/gateway, docs/gateway.md): an MCP server
// on stdin/stdout that starts the server after "--" as its child, or
// reaches the remote one --url names, and checks the session it bridges.
// Everything before "--" is run's flags, everything after it the server's
// argv, exactly.
func cmdRun(c *cli, args []string) error {
	leaveSignals()
	fs := c.flagSet("run")
	lockPath := fs.String("lock", "", "the approved lockfile `FILE` (required); watched, and checked against again when rewritten")
	logPath := fs.String("log", "", "append every record to the JSON-lines log `FILE`, chained (several gateways may share it)")
	var sf settingsFlags
	sf.register(fs)
	poll := fs.Duration("lock-poll", 250*time.Millisecond, "how often the lockfile is looked at")
	grace := fs.Duration("grace", 5*time.Second, "how long the server has to exit after its stdin is closed, and again after SIGTERM, before SIGKILL")
	remote := fs.String("url", "", "the remote server at `URL` (streamable HTTP), in place of a command after --")
	sse := fs.Bool("sse", false, "with --url: URL is the event stream of the legacy HTTP+SSE transport (protocol 2024-11-05)")
	var hf headerFlags
	hf.register(fs)
	split := slices.Index(args, "--")
	flags, command := args, []string(nil)
	if split >= 0 {
		flags, command = args[:split], args[split+1:]
	}
	if _, err := c.parse(fs, flags, 0); err != nil {
		return err
	}
	if *lockPath == "" {
		return usagef("--lock is required")
	}
	switch {
	case *remote != "" && len(command) > 0:
		return usagef("--url and a command after -- name two servers: give one")
	case *remote == "" && len(command) == 0:
		return usagef("the server's command goes after --: crawlcheck run --lock FILE -- CMD ARGS... (or crawlcheck run --lock FILE --url URL)")
	case *remote == "" && (*sse || hf.given()):
		return usagef("--sse, --header, --header-env, --bearer-env and --header-file go with --url")
	}
	var rem gateway.Remote
	if *remote != "" {
		var err error
		if rem, err = remoteOf(c, *remote, *sse, &hf); err != nil {
			return err
		}
	}
	if sf.mode != "" && !slices.Contains(preflight.Modes(), sf.mode) {
		return usagef("--mode %q: one of %s", sf.mode, strings.Join(preflight.Modes(), ", "))
	}
	if *poll <= 0 || *grace <= 0 {
		return usagef("--lock-poll and --grace must be positive")
	}
	settings, err := sf.settings()
	if err != nil {
		return err
	}
	// A gateway lives as long as its client's session: the collector's
	// default comes back once the first check is made (Started), so its
	// memory stays near what is live. Until then the start is what one
	// check's invocation is, and keeps raiseGC's setting while its inputs
	// are small (inputRead: the lockfile, the first listing's pages): at
	// the default it collected several times on the way, some 4 of a
	// 1,000-tool start's 30 ms of CPU (docs/gateway.md, Speed).
	settle := func() {
		if gc.raised {
			debug.SetGCPercent(100)
			gc.raised = false
		}
	}
	now, err := c.clockFunc()
	if err != nil {
		return err
	}
	if len(command) > 0 {
		if err := runLaunchedGate(*lockPath, command, settings, now(), c.timeout); err != nil {
			return err
		}
	}
	var launchedNow func(context.Context) json.RawMessage
	if len(command) > 0 {
		// Resolved again at each of the gateway's checks, once the server
		// has started: npx installs an approved version not yet in its
		// cache as it starts, so what ran is compared after the start too;
		// within each check's deadline.
		launchedNow = target{args: command}.launched
	}
	code, err := gateway.Run(context.Background(), gateway.Config{
		Launched: launchedNow,
		LockPath: *lockPath, LogPath: *logPath, Settings: settings, Command: command, Remote: rem,
		Timeout: c.timeout, PageCap: c.pageCap, MaxLine: int(c.maxInput), LockPoll: *poll, Grace: *grace, Now: now,
		InputRead: inputRead, Started: settle,
		Stdin: c.stdin, Stdout: c.stdout, Stderr: c.stderr,
	})
	if err != nil {
		return err
	}
	if code != 0 {
		return &exitCodeError{code: code}
	}
	return nil
}

// remoteOf is the remote server of run --url: its headers, and unless
// they carry an Authorization, the login kept for its endpoint (crawlcheck
// login), read before each request so that a token about to expire is
// refreshed (under the store's lock: several gateways may share it) and
// sent to that endpoint alone.
func remoteOf(c *cli, rawURL string, sse bool, hf *headerFlags) (gateway.Remote, error) {
	key, store, err := loginKey(rawURL)
	if err != nil && key == "" {
		return gateway.Remote{}, err // not a URL
	}
	login := err == nil // else no token store: no login to use
	kvs, err := hf.resolve()
	if err != nil {
		return gateway.Remote{}, err
	}
	r := gateway.Remote{URL: rawURL, SSE: sse, Header: http.Header{}}
	for _, kv := range kvs {
		name, value, _ := strings.Cut(kv, "=")
		r.Header.Set(name, value)
	}
	if login && r.Header.Get("Authorization") == "" {
		refresh := &http.Client{Timeout: c.timeout}
		r.Authorization = func(ctx context.Context) (string, error) {
			tok, err := store.AccessToken(ctx, key, refresh, time.Now)
			if err != nil || tok == "" {
				return "", err
			}
			return "Bearer " + tok, nil
		}
	}
	return r, nil
}
