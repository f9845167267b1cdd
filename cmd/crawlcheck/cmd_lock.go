package main

import (
	"errors"
	"fmt"
	iofs "io/fs"

	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/preflight"
)

// cmdLock pins a tool list: from a file, or from a live server (the whole
// list, every page, as received).
func cmdLock(c *cli, args []string) error {
	fs := c.flagSet("lock")
	var src sourceFlags
	src.register(fs)
	format := fs.String("format", "crawlcheck", "lockfile format: crawlcheck or agentgate")
	name := fs.String("name", "", "the server's name in an agentgate.lock (required with --format agentgate)")
	signKey := fs.String("sign-key", "", "sign the lockfile with the operator key in `KEYFILE` (crawlcheck format)")
	out := fs.String("o", "", "write the lockfile to `FILE` (atomically; - for stdout) instead of stdout; an existing agentgate.lock gains or replaces the server")
	features := fs.Bool("features", true, "pin the server's prompts, resources, resource templates and the ui:// templates its tools name (false: a lockfile as before they were pinned, against which they are not compared)")
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
	if err := checkOut(*out); err != nil {
		return err
	}
	tg, ok, err := src.target()
	tg.noFeatures = !*features
	if err != nil {
		return err
	}
	if !ok {
		return usagef("give --tools, --server, --url or --sse")
	}
	if *format != "crawlcheck" && *format != "agentgate" {
		return usagef("--format %q: crawlcheck or agentgate", *format)
	}
	if *format == "agentgate" && *name == "" {
		return usagef("--format agentgate needs --name: the server's name in the lockfile")
	}
	now, err := c.clock()
	if err != nil {
		return err
	}
	opts := preflight.LockOptions{Format: *format, Name: *name, Now: now}
	if *signKey != "" {
		if opts.SigningKey, err = readSigningKey(*signKey); err != nil {
			return err
		}
	}
	if *format == "agentgate" && *out != "" && *out != "-" {
		into, err := readInput("the agentgate.lock to add to", *out)
		switch {
		case err == nil:
			if info, err := preflight.ReadLock(into, now, preflight.Settings{}); err != nil {
				return fmt.Errorf("%s: %w", *out, err)
			} else if info.Format != preflight.FormatAgentgate {
				return usagef("%s is a %s, not an agentgate.lock to add the server to", *out, info.Format)
			}
			opts.Into = into
		case !errors.Is(err, iofs.ErrNotExist):
			return fmt.Errorf("reading %s: %w", *out, err)
		}
	}
	obs, err := tg.observe(c)
	if err != nil {
		return err
	}
	lock, err := preflight.MakeLock(obs, opts)
	if err != nil {
		return lockRefused(tg, err)
	}
	// The findings the lockfile pins, shown to whoever pins it (on stderr:
	// stdout may be the lockfile itself); an agentgate.lock pins none, so
	// the list is scanned for it.
	if s, ok := preflight.PinnedScan(lock); ok {
		printScan(c.stderr, "scan", s)
	} else if s, err := preflight.ScanTools(obs, nil); err == nil {
		printScan(c.stderr, "scan", s)
	}
	return writeOut(c, *out, lock)
}

// lockRefused classifies a refusal to make a lockfile. The key and any
// lockfile to add to were checked before the server was asked, so from a
// live server the refusal is about its list, which could not be read whole:
// the server's state, exit 1. From a file it is an input error, exit 2.
func lockRefused(tg target, err error) error {
	var ce *corecall.Error
	if tg.live() && (errors.Is(err, preflight.ErrIncomplete) || errors.As(err, &ce)) {
		return blocked("cannot pin this server's tools: %v", err)
	}
	return err
}

// readSigningKey reads an operator's private key file and has the core
// decode it, so that a bad key is refused before any server is asked.
func readSigningKey(path string) (string, error) {
	key, err := readKey("the signing key", path)
	if err != nil {
		return "", err
	}
	if _, err := corecall.Call("public_key", map[string]string{"private_key": key}); err != nil {
		return "", fmt.Errorf("signing key %s: %w", path, err)
	}
	return key, nil
}
