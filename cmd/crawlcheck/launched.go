package main

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/internal/launched"
	"github.com/crawlcheck/verifier/internal/preflight"
)

// resolveLaunched resolves the package a stdio target's command line
// launches (internal/launched.ResolveCommand): what npx installed for it,
// else what its registry serves under that version; the files a uvx or
// pipx release has on its index; the digest a docker run names. The
// environment is the server's: the target's own env (an MCP client
// config's) wins over ours, as it does for the launcher the target starts.
// ok is false for an HTTP server or a file. What it asks npm, a registry
// or uv ends with ctx: the caller's deadline, never more than a check's.
func (t target) resolveLaunched(ctx context.Context) (launched.Resolution, bool) {
	if t.args == nil {
		return launched.Resolution{}, false
	}
	return launched.ResolveCommand(ctx, t.args, t.env, t.dir), true
}

// launched is the observed.launched member of the target; nil for an HTTP
// server or a file.
func (t target) launched(ctx context.Context) json.RawMessage {
	if r, ok := t.resolveLaunched(ctx); ok {
		return r.Observed()
	}
	return nil
}

// launchedBeforeStart is check's comparison of the launched package
// before the server is started: the core is handed what npm installed for
// the command line and no tool list (server_unavailable, "not started"),
// and when its record says the package is not the one the lockfile pins
// (server.launched.identity "changed": launched_package_changed, deny)
// and the session does not proceed, that record is the check's and the server is never run. nil when the package
// could not be resolved yet (the command-line rule, and the comparison
// after the start, apply) or is the approved one. The record comes from an
// engine of its own: the real check that follows is not a check_again.
func launchedBeforeStart(ctx context.Context, tg target, req preflight.Request) (*preflight.Record, error) {
	res, ok := tg.resolveLaunched(ctx)
	if !ok || res.Reason == launched.NotALauncher {
		// Nothing to compare before the start: a command that is not a
		// launcher is judged on its command line once it answered.
		return nil, nil
	}
	l := res.Observed()
	ep, err := preflight.StdioEndpoint(tg.args)
	if err != nil {
		return nil, err
	}
	req.Observation = preflight.Observation{
		Endpoint: ep, Launched: l,
		Failure: "server_unavailable", FailureDetail: "not started: its launched package is compared first",
	}
	var engine preflight.Engine
	st, err := engine.Check(req, 0)
	if err != nil {
		return nil, err
	}
	var r struct {
		Server struct {
			Launched *struct {
				Identity string `json:"identity"`
			} `json:"launched"`
		} `json:"server"`
	}
	if err := json.Unmarshal(st.Record.Raw, &r); err != nil {
		return nil, err
	}
	// In observe mode (or under a policy that lets it proceed) the server
	// is started and checked as ever: only a session the core stops is
	// stopped before it runs.
	h := st.Record.Handoff
	if r.Server.Launched == nil || r.Server.Launched.Identity != "changed" || h != nil && h.Session == preflight.SessionProceed {
		return nil, nil
	}
	return st.Record, nil
}

// runLaunchedGate is run's comparison of the launched package before the
// gateway starts the server: a package the core says is not the approved
// one (and whose session it stops) is refused with the core's words, and
// the server never runs. The gateway's own checks after the start compare
// the command line as before (they do not resolve the package).
func runLaunchedGate(lockPath string, command []string, settings preflight.Settings, now time.Time, timeout time.Duration) error {
	lock, err := readInput("the lockfile", lockPath)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	pre, err := launchedBeforeStart(ctx, target{args: command}, preflight.Request{Settings: settings, Lock: lock, Now: now, HandsNoTools: true})
	if err != nil || pre == nil {
		return err
	}
	why := (&preflight.RefusedError{Effect: pre.Effect, Record: *pre}).Error()
	return blocked("%s: %s (the server was not started)", pre.Effect, strings.TrimPrefix(why, "crawlcheck: "))
}
