package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/crawlcheck/verifier/internal/preflight"
)

// mcpConfig is an MCP client configuration: Claude Desktop's and Cursor's
// "mcpServers", or VS Code's "servers". Each entry is a stdio command
// (command, args, env) or a remote server (url, with an optional type).
type mcpConfig struct {
	MCPServers map[string]configEntry `json:"mcpServers"`
	Servers    map[string]configEntry `json:"servers"`
}

type configEntry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
}

// target returns where the entry's server is reached.
func (e configEntry) target() (target, error) {
	switch {
	case e.Type == "sse":
		return target{}, fmt.Errorf("type sse: the legacy HTTP+SSE transport is not supported (streamable HTTP and stdio are)")
	case e.URL != "":
		return target{url: e.URL}, nil
	case e.Command != "":
		t := target{args: append([]string{e.Command}, e.Args...)}
		for _, k := range sortedKeys(e.Env) {
			t.env = append(t.env, k+"="+e.Env[k])
		}
		return t, nil
	}
	return target{}, fmt.Errorf("neither command nor url")
}

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
	info, err := preflight.ReadLock(lock, now, preflight.Settings{})
	if err != nil {
		return fmt.Errorf("lockfile %s: %w", *lockPath, err)
	}
	var cfg mcpConfig
	if *configPath != "" {
		data, err := readInput("the MCP config", *configPath)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, &cfg); err != nil {
			return fmt.Errorf("the MCP config %s: %w", *configPath, err)
		}
	}
	configured := cfg.MCPServers
	if configured == nil {
		configured = cfg.Servers
	}

	type job struct {
		name string // the agentgate server name; "" for a crawlcheck lockfile
		tg   target
	}
	var jobs []job
	var unlocked []string
	if info.Format == preflight.FormatAgentgate {
		if configured == nil {
			return usagef("an agentgate.lock names servers, not endpoints: give --config with their mcpServers")
		}
		for _, name := range info.Servers {
			e, ok := configured[name]
			if !ok {
				return fmt.Errorf("server %q of the lockfile is not in %s", name, *configPath)
			}
			tg, err := e.target()
			if err != nil {
				return fmt.Errorf("server %q in %s: %w", name, *configPath, err)
			}
			jobs = append(jobs, job{name, tg})
		}
		for name := range configured {
			if !slices.Contains(info.Servers, name) {
				unlocked = append(unlocked, name)
			}
		}
		slices.Sort(unlocked)
	} else {
		if info.URL == "" {
			return usagef("the lockfile pins no endpoint; use check with --server or --url")
		}
		tg, err := targetOf(info.URL)
		if err != nil {
			return err
		}
		jobs = append(jobs, job{"", tg})
	}

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
