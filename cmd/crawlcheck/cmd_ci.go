package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/crawlcheck/verifier/internal/clientconfig"

	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/preflight"
)

// cmdCI is the drift gate over every server a lockfile pins and every
// server a client's config starts: exit 0 only when each one was checked
// and answered exactly its pinned tools (a disabled one is skipped, and
// said). The host reads the config's format and reaches the servers; what
// is checked against what, and the verdict, are the core's.
func cmdCI(c *cli, args []string) error {
	fs := c.flagSet("ci")
	lockPath := fs.String("lock", "", "the lockfile `FILE` of every server (crawlcheck or agentgate); without it, each server of a --config crawlcheck install wrapped is checked against its own lockfile")
	configPath := fs.String("config", "", "an MCP client's config `FILE` (any of the clients of --client): every server it configures is checked, skipped (disabled) or refused by name; required for an agentgate.lock")
	clientName := fs.String("client", "", "the client whose config --config is: "+strings.Join(clientconfig.Names(), ", ")+" (default: told by the file's name)")
	asJSON := fs.Bool("json", false, `print one JSON line per server: {"server":…,"answer":<lock check>}`)
	var hf headerFlags // credentials for the one HTTP server of the plan
	hf.register(fs)
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
	if *lockPath == "" && *configPath == "" {
		return usagef("--lock is required (or --config with a config crawlcheck install wrapped: each server's own lockfile)")
	}
	now, err := c.clock()
	if err != nil {
		return err
	}
	// Which servers to check, and where each is reached, is the core's
	// reading of the lockfile and the MCP config (ci_plan).
	req := map[string]any{}
	if *lockPath != "" {
		lock, err := readInput("the lockfile", *lockPath)
		if err != nil {
			return err
		}
		if _, err := preflight.ReadLock(lock, now, preflight.Settings{}); err != nil {
			return fmt.Errorf("lockfile %s: %w", *lockPath, err)
		}
		req["lock"] = corecall.Text(lock)
	}
	if *configPath != "" {
		config, locks, err := readClientConfig(*clientName, *configPath)
		if err != nil {
			return err
		}
		req["config"] = config
		if *lockPath == "" {
			if len(locks) == 0 {
				return usagef("--lock is required: no server of %s runs with a lockfile of its own (crawlcheck install wraps them)", *configPath)
			}
			req["locks"] = locks
		}
	} else if *clientName != "" {
		return usagef("--client names the client of --config")
	}
	var plan struct {
		Servers []struct {
			URL     *string  `json:"url"`
			SSE     bool     `json:"sse"`
			Headers []string `json:"headers"`
			Command []string `json:"command"`
			Env     []string `json:"env"`
			Cwd     *string  `json:"cwd"`
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
	extra, err := hf.resolve()
	if err != nil {
		return err
	}
	if len(extra) > 0 {
		// A credential given on the command line names no server: it goes
		// to a plan of one HTTP server only, never to whichever servers a
		// config lists (a config's own headers name theirs).
		n := 0
		for _, s := range plan.Servers {
			if s.URL != nil {
				n++
			}
		}
		if n != 1 {
			return usagef("--header, --header-env, --bearer-env and --header-file go with a plan of one HTTP server; this one has %d (give each its headers in the MCP config)", n)
		}
	}
	checks := make([]map[string]any, 0, len(plan.Servers))
	for _, s := range plan.Servers {
		tg := target{args: s.Command, env: s.Env}
		if s.Cwd != nil {
			tg.dir = *s.Cwd
		}
		if s.URL != nil {
			tg = target{url: *s.URL, sse: s.SSE, headers: append(s.Headers, extra...)}
		}
		obs, err := tg.observe(c)
		if err != nil {
			return err
		}
		checks = append(checks, preflight.LockCheckFacts(obs))
	}
	req["checks"] = checks
	var verdict struct {
		Servers     []json.RawMessage `json:"servers"`
		Checked     int               `json:"checked"`
		Drifted     int               `json:"drifted"`
		Unreachable int               `json:"unreachable"`
		Refused     int               `json:"refused"`
		Passes      bool              `json:"passes"`
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
		var parts []string
		for _, p := range []struct {
			n    int
			what string
		}{{verdict.Drifted, "drifted"}, {verdict.Unreachable, "unreachable"}, {verdict.Refused, "not checked"}} {
			if p.n > 0 {
				parts = append(parts, fmt.Sprintf("%d of %d server(s) %s", p.n, verdict.Checked, p.what))
			}
		}
		return blocked("%s", strings.Join(parts, "; "))
	}
	return nil
}

// readClientConfig reads a client's config file into the MCP config the
// core's ci_plan reads: each entry as its client starts it (variables
// expanded as that client expands them; an entry install wrapped, as the
// server it wraps), "disabled" when the client does not start it, and
// "refused" naming what could not be expanded; and the lockfile each
// wrapped entry runs with (ci_plan's locks).
func readClientConfig(clientName, path string) (config map[string]any, locks []map[string]any, err error) {
	client, err := pickClient(clientName, path)
	if err != nil {
		return nil, nil, err
	}
	data, err := readInput("the MCP config", path)
	if err != nil {
		return nil, nil, err
	}
	f, err := clientconfig.Read(client, path, data)
	if err != nil {
		return nil, nil, err
	}
	ctx := expandContext(path)
	servers := map[string]any{}
	for _, e := range f.Entries {
		// An entry install wrapped names the lockfile it runs with.
		if _, lockPath, ok := clientconfig.Wrapped(e); ok && lockPath != "" {
			lock, err := readInput("the lockfile of "+e.Name, lockPath)
			if err != nil {
				return nil, nil, err
			}
			locks = append(locks, map[string]any{"server": e.Name, "lock": corecall.Text(lock)})
		}
		tg, refused := f.Expand(clientconfig.Unwrapped(e), ctx)
		entry := map[string]any{}
		if tg.URL != "" {
			entry["url"] = tg.URL
			entry["type"] = "http"
			if tg.SSE {
				entry["type"] = "sse"
			}
			if tg.Headers != nil {
				entry["headers"] = kvs(tg.Headers)
			}
		} else {
			entry["command"] = tg.Command
			entry["args"] = append([]string{}, tg.Args...)
			entry["env"] = kvs(tg.Env)
			if tg.Cwd != "" {
				cwd := tg.Cwd
				if !filepath.IsAbs(cwd) {
					cwd = filepath.Join(ctx.Workspace, cwd)
				}
				entry["cwd"] = cwd
			}
		}
		if e.Disabled != "" {
			entry["disabled"] = true
		}
		if refused != nil {
			entry["refused"] = refused
		}
		servers[e.Name] = entry
	}
	return map[string]any{"mcpServers": servers}, locks, nil
}

// pickClient is the client --client names, or the one the config's file
// name tells.
func pickClient(name, path string) (*clientconfig.Client, error) {
	if name != "" {
		c, err := clientconfig.Lookup(name)
		if err != nil {
			return nil, usagef("--client: %v", err)
		}
		return c, nil
	}
	return clientconfig.Guess(path)
}

// expandContext is what a config's variables can name: this process's
// environment, the home directory, and the workspace: the folder holding
// a project's .vscode/, .cursor/, .gemini/ or .zed/, else the current one.
func expandContext(path string) clientconfig.Context {
	home, _ := os.UserHomeDir()
	ws, _ := os.Getwd()
	if abs, err := filepath.Abs(path); err == nil {
		if dir := filepath.Dir(abs); strings.HasPrefix(filepath.Base(dir), ".") {
			ws = filepath.Dir(dir)
		}
	}
	return clientconfig.Context{Env: os.LookupEnv, Home: home, Workspace: ws}
}

func kvs(list []clientconfig.KV) map[string]string {
	out := map[string]string{}
	for _, kv := range list {
		out[kv.Key] = kv.Value
	}
	return out
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
