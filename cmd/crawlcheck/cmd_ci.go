package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/preflight"
)

// cmdCI is the drift gate over every server a lockfile pins: exit 0 only
// when each one answers with exactly the pinned tools.
func cmdCI(c *cli, args []string) error {
	fs := c.flagSet("ci")
	lockPath := fs.String("lock", "", "the lockfile `FILE` (crawlcheck or agentgate; required)")
	configPath := fs.String("config", "", "an MCP client config `FILE` (mcpServers or servers) naming each server's endpoint; required for an agentgate.lock")
	asJSON := fs.Bool("json", false, `print one JSON line per server: {"server":…,"answer":<lock check>}`)
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
	if *lockPath == "" {
		return usagef("--lock is required")
	}
	now, err := c.clock()
	if err != nil {
		return err
	}
	lock, err := readInput("the lockfile", *lockPath)
	if err != nil {
		return err
	}
	if _, err := preflight.ReadLock(lock, now, preflight.Settings{}); err != nil {
		return fmt.Errorf("lockfile %s: %w", *lockPath, err)
	}
	// Which servers to check, and where each is reached, is the core's
	// reading of the lockfile and the MCP config (ci_plan).
	req := map[string]any{"lock": corecall.Text(lock)}
	if *configPath != "" {
		data, err := readInput("the MCP config", *configPath)
		if err != nil {
			return err
		}
		req["config"] = corecall.Text(data)
	}
	var plan struct {
		Servers []struct {
			ServerName *string  `json:"server_name"`
			Endpoint   *string  `json:"endpoint"`
			URL        *string  `json:"url"`
			Command    []string `json:"command"`
			Env        []string `json:"env"`
		} `json:"servers"`
		Unlocked []string `json:"unlocked"`
	}
	if err := corecall.Into("ci_plan", req, &plan); err != nil {
		if *configPath == "" {
			return usagef("%v (give --config with the MCP client config)", err)
		}
		return fmt.Errorf("the MCP config %s: %w", *configPath, err)
	}
	type job struct {
		name string // the agentgate server name; "" for a crawlcheck lockfile
		tg   target
	}
	var jobs []job
	for _, s := range plan.Servers {
		var j job
		switch {
		case s.Endpoint != nil:
			tg, err := targetOf(*s.Endpoint)
			if err != nil {
				return err
			}
			j.tg = tg
		case s.URL != nil:
			j.tg = target{url: *s.URL}
		default:
			j.tg = target{args: s.Command, env: s.Env}
		}
		if s.ServerName != nil {
			j.name = *s.ServerName
		}
		jobs = append(jobs, j)
	}
	unlocked := plan.Unlocked

	drift := 0
	for _, j := range jobs {
		obs, err := j.tg.observe(c)
		if err != nil {
			return err
		}
		a, err := preflight.CheckLock(lock, j.name, obs)
		if err != nil {
			return err
		}
		if a.Decision != "connect" {
			drift++
		}
		label := j.name
		if label == "" {
			label = obs.Endpoint
		}
		if *asJSON {
			line, _ := json.Marshal(map[string]any{"server": label, "answer": a.Raw})
			machine(c.stdout, line)
			continue
		}
		printLockCheck(c, label, a)
	}
	for _, name := range unlocked {
		drift++
		if *asJSON {
			line, _ := json.Marshal(map[string]any{"server": name, "answer": nil, "unlocked": true})
			machine(c.stdout, line)
			continue
		}
		say(c.stdout, "%-20s block    not in the lockfile: its tools were never approved\n", name)
	}
	if drift > 0 {
		return blocked("%d of %d server(s) drifted", drift, len(jobs)+len(unlocked))
	}
	return nil
}

// printLockCheck writes one server's lock check on a line, and the text that
// moved under it.
func printLockCheck(c *cli, label string, a preflight.LockCheck) {
	var what string
	switch {
	case a.Unreachable != nil:
		what = fmt.Sprintf("unreachable: %s: %s", a.Unreachable.Reason, a.Unreachable.Detail)
	case a.Verdict == "unchanged":
		what = "unchanged"
	default:
		var parts []string
		if len(a.Added) > 0 {
			parts = append(parts, "added "+strings.Join(a.Added, ", "))
		}
		if len(a.Removed) > 0 {
			parts = append(parts, "removed "+strings.Join(a.Removed, ", "))
		}
		for _, m := range a.ModifiedDetail {
			parts = append(parts, fmt.Sprintf("modified %s (%s)", m.Name, strings.Join(m.Parts, ", ")))
		}
		what = "changed: " + strings.Join(parts, "; ")
	}
	say(c.stdout, "%-20s %-8s %s\n", label, a.Decision, what)
	for _, m := range a.ModifiedDetail {
		var ops []diffOp
		if json.Unmarshal(m.DescriptionDiff, &ops) == nil && ops != nil {
			say(c.stdout, "    %s description:\n", m.Name)
			printTextDiff(c.stdout, ops)
		}
	}
}
