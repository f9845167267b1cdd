package main

import (
	"encoding/json"
	"fmt"

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
			URL     *string  `json:"url"`
			SSE     bool     `json:"sse"`
			Command []string `json:"command"`
			Env     []string `json:"env"`
		} `json:"servers"`
	}
	if err := corecall.Into("ci_plan", req, &plan); err != nil {
		if *configPath == "" {
			return usagef("%v (give --config with the MCP client config)", err)
		}
		return fmt.Errorf("the MCP config %s: %w", *configPath, err)
	}
	// The host reaches each server the plan names; what each answered, and
	// whether the gate passes, is the core's verdict (ci_verdict).
	checks := make([]map[string]any, 0, len(plan.Servers))
	for _, s := range plan.Servers {
		tg := target{args: s.Command, env: s.Env}
		if s.URL != nil {
			tg = target{url: *s.URL, sse: s.SSE}
		}
		obs, err := tg.observe(c)
		if err != nil {
			return err
		}
		checks = append(checks, preflight.LockCheckFacts(obs))
	}
	req["checks"] = checks
	var verdict struct {
		Servers []json.RawMessage `json:"servers"`
		Checked int               `json:"checked"`
		Drifted int               `json:"drifted"`
		Passes  bool              `json:"passes"`
	}
	if err := corecall.Into("ci_verdict", req, &verdict); err != nil {
		return err
	}
	for _, raw := range verdict.Servers {
		if *asJSON {
			machine(c.stdout, raw)
			continue
		}
		if err := printVerdict(c, raw); err != nil {
			return err
		}
	}
	if !verdict.Passes {
		return blocked("%d of %d server(s) drifted", verdict.Drifted, verdict.Checked)
	}
	return nil
}

// printVerdict writes one server of the verdict on a line, as the core
// worded it, and the description text that moved under it.
func printVerdict(c *cli, raw json.RawMessage) error {
	var s struct {
		Server   string `json:"server"`
		Decision string `json:"decision"`
		Summary  string `json:"summary"`
		Answer   *struct {
			ModifiedDetail []struct {
				Name            string          `json:"name"`
				DescriptionDiff json.RawMessage `json:"description_diff"`
			} `json:"modified_detail"`
		} `json:"answer"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("ci_verdict: decoding a server: %w", err)
	}
	say(c.stdout, "%-20s %-8s %s\n", s.Server, s.Decision, s.Summary)
	if s.Answer == nil {
		return nil
	}
	for _, m := range s.Answer.ModifiedDetail {
		var ops []diffOp
		if json.Unmarshal(m.DescriptionDiff, &ops) == nil && ops != nil {
			say(c.stdout, "    %s description:\n", m.Name)
			printTextDiff(c.stdout, ops)
		}
	}
	return nil
}
