package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/crawlcheck/verifier/internal/boundedread"
	"github.com/crawlcheck/verifier/internal/gateway"
	"github.com/crawlcheck/verifier/internal/preflight"
	"github.com/crawlcheck/verifier/internal/proxy"
)

// cmdProxy is crawlcheck proxy (internal/proxy, docs/gateway.md): a local
// streamable HTTP endpoint for clients that speak HTTP only, each of its
// sessions a gateway in front of the remote server --upstream names.
func cmdProxy(c *cli, args []string) error {
	leaveSignals()
	fs := c.flagSet("proxy")
	listen := fs.String("listen", "127.0.0.1:0", "the loopback `HOST:PORT` to listen on (127.0.0.1, ::1 or localhost; port 0 for any)")
	upstream := fs.String("upstream", "", "the remote server at `URL` (streamable HTTP; required)")
	sse := fs.Bool("sse", false, "the upstream URL is the event stream of the legacy HTTP+SSE transport (protocol 2024-11-05)")
	lockPath := fs.String("lock", "", "the approved lockfile `FILE` (required); watched, and checked against again when rewritten")
	logPath := fs.String("log", "", "append every record to the JSON-lines log `FILE`, chained")
	tokenPath := fs.String("token-file", "", "the proxy's bearer token `FILE`, made once, mode 0600 (default: crawlcheck/proxy-token in your config directory)")
	var sf settingsFlags
	sf.register(fs)
	var hf headerFlags
	hf.register(fs)
	poll := fs.Duration("lock-poll", 250*time.Millisecond, "how often the lockfile is looked at")
	idle := fs.Duration("idle", 30*time.Minute, "end a client session nothing has used for this long (its upstream session with it)")
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
	switch {
	case *lockPath == "":
		return usagef("--lock is required")
	case *upstream == "":
		return usagef("--upstream is required: the remote server's URL")
	case sf.mode != "" && !slices.Contains(preflight.Modes(), sf.mode):
		return usagef("--mode %q: one of %s", sf.mode, strings.Join(preflight.Modes(), ", "))
	case *poll <= 0 || *idle <= 0:
		return usagef("--lock-poll and --idle must be positive")
	}
	settings, err := sf.settings()
	if err != nil {
		return err
	}
	rem, err := remoteOf(c, *upstream, *sse, &hf)
	if err != nil {
		return err
	}
	if *tokenPath == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return fmt.Errorf("no config directory for the proxy's token (give --token-file): %w", err)
		}
		*tokenPath = filepath.Join(dir, "crawlcheck", "proxy-token")
	}
	token, made, err := proxyToken(*tokenPath)
	if err != nil {
		return err
	}
	if gc.raised {
		debug.SetGCPercent(100)
		gc.raised = false
	}
	now, err := c.clockFunc()
	if err != nil {
		return err
	}
	p, err := proxy.Listen(proxy.Config{Listen: *listen, Token: token, Idle: *idle, Gateway: gateway.Config{
		LockPath: *lockPath, LogPath: *logPath, Settings: settings, Remote: rem,
		Timeout: c.timeout, PageCap: c.pageCap, MaxLine: int(c.maxInput), LockPoll: *poll, Now: now, Stderr: c.stderr,
	}})
	if err != nil {
		return usagef("%v", err)
	}
	if made {
		say(c.stderr, "crawlcheck proxy: made the proxy's token in %s (mode 0600: only you can read it)\n", *tokenPath)
	}
	// The URL alone on stdout, for a script; how to connect on stderr.
	say(c.stdout, "%s\n", p.URL())
	say(c.stderr, "crawlcheck proxy: %s in front of %s; clients send Authorization: Bearer followed by the token in %s (e.g. $(cat %s)), which is never sent upstream\n",
		p.URL(), *upstream, *tokenPath, shellQuote(*tokenPath))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return p.Serve(ctx)
}

// shellQuote is a path as a POSIX shell reads it.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// proxyToken reads the proxy's token from path, or makes it there once
// (32 random bytes, hex; the file created 0600, never replaced). A file
// that others can read is refused: anyone who reads it reaches the
// server with the proxy's credentials.
func proxyToken(path string) (token string, made bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, err
	}
	var b [32]byte
	rand.Read(b[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		token = hex.EncodeToString(b[:])
		_, werr := f.WriteString(token + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(path)
			return "", false, fmt.Errorf("writing the proxy's token: %w", werr)
		}
		return token, true, nil
	}
	if !errors.Is(err, iofs.ErrExist) {
		return "", false, fmt.Errorf("the proxy's token: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", false, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", false, fmt.Errorf("the proxy's token %s can be read by others (mode %04o): chmod 600 it, or remove it for a new one", path, fi.Mode().Perm())
	}
	data, err := boundedread.ReadFile(path, 4096, inputs.timeout)
	if err != nil {
		return "", false, fmt.Errorf("reading the proxy's token: %w", err)
	}
	if token = strings.TrimSpace(string(data)); len(token) < 32 {
		return "", false, fmt.Errorf("the proxy's token %s is shorter than 32 characters: remove it for a new one", path)
	}
	return token, false, nil
}
