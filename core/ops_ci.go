package core

import (
	"strings"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/endpoint"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/sorting"
)

// opCIPlan answers which servers `crawlcheck ci` checks and where each is
// reached: for an agentgate.lock, each server it pins, found by name in an
// MCP client config (Claude Desktop's and Cursor's "mcpServers", VS Code's
// "servers"), and the config's servers the lockfile does not pin, which
// drift (their tools were never approved); for a crawlcheck lockfile, its
// own endpoint. The config is read by the strict parser, members by their
// exact names: a host's decoder that matches names case-insensitively would
// let "MCPServers" or "Command" decide where a check connects.
func opCIPlan(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	f := parseLockShared(rd, "lock")
	config, hasConfig := rd.Doc("config")
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	if f.Agentgate == nil {
		url := f.Crawlcheck.Server.URL
		if url == "" {
			return canon.Value{}, cerr.New(cerr.BadRequest, "%s pins no endpoint: check it with a server named", rd.Field("lock"))
		}
		where, err := lockTarget(url, rd.Field("lock")+".server.url")
		if err != nil {
			return canon.Value{}, err
		}
		return canon.Obj(
			canon.M("servers", canon.Arr(canon.Obj(append([]canon.Member{canon.M("server_name", canon.NullValue()), canon.M("endpoint", canon.Str(url))}, where...)...))),
			canon.M("unlocked", canon.Arr()),
		), nil
	}
	if !hasConfig {
		return canon.Value{}, cerr.New(cerr.BadRequest, "an agentgate.lock names servers, not endpoints: %s is required (an MCP client config with their mcpServers)", rd.Field("config"))
	}
	entries, at, err := configServers(config, rd.Field("config"))
	if err != nil {
		return canon.Value{}, err
	}
	pinned := map[string]bool{}
	var servers []canon.Value
	for _, s := range f.Agentgate.Servers {
		pinned[s.Name] = true
		e, ok := entries[s.Name]
		if !ok {
			return canon.Value{}, cerr.New(cerr.BadRequest, "server %s of the lockfile is not in %s", canon.Str(s.Name), at)
		}
		where, err := configTarget(e, at+"."+s.Name)
		if err != nil {
			return canon.Value{}, err
		}
		servers = append(servers, canon.Obj(append([]canon.Member{canon.M("server_name", canon.Str(s.Name)), canon.M("endpoint", canon.NullValue())}, where...)...))
	}
	var unlocked []string
	for name := range entries {
		if !pinned[name] {
			unlocked = append(unlocked, name)
		}
	}
	sorting.Strings(unlocked)
	names := make([]canon.Value, len(unlocked))
	for i, n := range unlocked {
		names[i] = canon.Str(n)
	}
	return canon.Obj(canon.M("servers", canon.Arr(servers...)), canon.M("unlocked", canon.Arr(names...))), nil
}

// lockTarget is where a crawlcheck lockfile's endpoint is reached, as the
// members {url, sse, command, env} of a ci_plan server (a lockfile does not
// say which HTTP transport it was made over: streamable HTTP): its URL, or the argv its
// "stdio:" command line names (endpoint.Split, the rule the endpoint op
// answers by).
func lockTarget(ep, path string) ([]canon.Member, error) {
	url, argv, err := endpoint.Split(ep)
	if err != nil {
		return nil, cerr.New(cerr.BadRequest, "%s %s %v", path, canon.Str(clipText(ep)), err)
	}
	null := canon.NullValue()
	if argv == nil {
		return []canon.Member{canon.M("url", canon.Str(url)), canon.M("sse", canon.BoolOf(false)), canon.M("command", null), canon.M("env", null)}, nil
	}
	return []canon.Member{canon.M("url", null), canon.M("sse", canon.BoolOf(false)), canon.M("command", canon.Strs(argv)), canon.M("env", canon.Arr())}, nil
}

// ciCheckFields are the members of one ci_verdict check: what a host
// observed of one ci_plan server, as lock_check takes it.
var ciCheckFields = []string{"tools", "pages", "page_cap_reached", "failure", "failure_detail", "failure_at", "failure_page", "timeout_ms", "failure_command", "exit_status", "stderr_tail"}

// opCIVerdict is the verdict of `crawlcheck ci`: the request is ci_plan's
// (lock, config) and what the host observed of each server the plan named,
// in its order; the answer is each server's lock check, whether it drifted
// (any answer but connect, and every configured server the lockfile does
// not pin), the line a person reads, and whether the gate passes. No host
// counts drift or compares a verdict itself.
func opCIVerdict(r req.Obj) (canon.Value, error) {
	plan, err := opCIPlan(r)
	if err != nil {
		return canon.Value{}, err
	}
	rd := r.Read()
	f := parseLockShared(rd, "lock")
	if !rd.Failed() {
		rd.Fail(checkSealed(f))
	}
	servers, _ := plan.Get("servers")
	planned := servers.Elems()
	var entries []canon.Value
	drifted := 0
	n := 0
	rd.Objects("checks", "observations", ciCheckFields, func(i int, o *req.Reader) {
		n++
		if i >= len(planned) {
			o.Fail(cerr.New(cerr.BadRequest, "%s: ci_plan names %d server(s), one check each", o.O.Path, len(planned)))
			return
		}
		s := planned[i]
		nameV, _ := s.Get("server_name")
		name, _ := nameV.Str()
		label := name
		if nameV.IsNull() {
			ep, _ := s.Get("endpoint")
			label, _ = ep.Str()
		}
		base, err := baselineOf(f, name)
		if !o.Fail(err) {
			return
		}
		answer, err := lockCheckOf(o, base)
		if !o.Fail(err) {
			return
		}
		decision, _ := answer.Get("decision")
		d, _ := decision.Str()
		drift := d != "connect"
		if drift {
			drifted++
		}
		entries = append(entries, ciEntry(label, answer, drift, false, ciSummary(answer)))
	})
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	if !rd.Has("checks") || n != len(planned) {
		return canon.Value{}, cerr.New(cerr.BadRequest, "%s must hold one check per server ci_plan names (%d), got %d", rd.Field("checks"), len(planned), n)
	}
	unlocked, _ := plan.Get("unlocked")
	for _, u := range unlocked.Elems() {
		name, _ := u.Str()
		drifted++
		entries = append(entries, ciEntry(name, canon.NullValue(), true, true, "not in the lockfile: its tools were never approved"))
	}
	return canon.Obj(
		canon.M("servers", canon.Arr(entries...)),
		canon.M("checked", canon.Int(int64(len(entries)))),
		canon.M("drifted", canon.Int(int64(drifted))),
		canon.M("passes", canon.BoolOf(drifted == 0)),
	), nil
}

// ciEntry is one server of a ci_verdict: its label (the agentgate server's
// name, or the crawlcheck lockfile's endpoint), its lock check (null when
// the lockfile does not pin it) and the line a person reads.
func ciEntry(label string, answer canon.Value, drifted, unlocked bool, summary string) canon.Value {
	decision := canon.Str("block")
	if !answer.IsNull() {
		decision, _ = answer.Get("decision")
	}
	return canon.Obj(
		canon.M("server", canon.Str(label)),
		canon.M("decision", decision),
		canon.M("drifted", canon.BoolOf(drifted)),
		canon.M("unlocked", canon.BoolOf(unlocked)),
		canon.M("summary", canon.Str(summary)),
		canon.M("answer", answer),
	)
}

// ciSummary words a lock check on one line: unchanged; unreachable, with
// its reason and detail; or what changed (added, removed, and each modified
// tool with the parts that moved).
func ciSummary(a canon.Value) string {
	str := func(v canon.Value, name string) string {
		m, _ := v.Get(name)
		s, _ := m.Str()
		return s
	}
	names := func(name string) string {
		v, _ := a.Get(name)
		var out []string
		for _, e := range v.Elems() {
			s, _ := e.Str()
			out = append(out, s)
		}
		return strings.Join(out, ", ")
	}
	if u, _ := a.Get("unreachable"); !u.IsNull() {
		return "unreachable: " + str(u, "reason") + ": " + str(u, "detail")
	}
	if str(a, "verdict") == "unchanged" {
		return "unchanged"
	}
	var parts []string
	if s := names("added"); s != "" {
		parts = append(parts, "added "+s)
	}
	if s := names("removed"); s != "" {
		parts = append(parts, "removed "+s)
	}
	detail, _ := a.Get("modified_detail")
	for _, m := range detail.Elems() {
		p, _ := m.Get("parts")
		var ps []string
		for _, e := range p.Elems() {
			s, _ := e.Str()
			ps = append(ps, s)
		}
		parts = append(parts, "modified "+str(m, "name")+" ("+strings.Join(ps, ", ")+")")
	}
	return "changed: " + strings.Join(parts, "; ")
}

// configServers reads an MCP client config's servers: "mcpServers", or
// "servers" when it has none; at is the member's path, for messages.
func configServers(config canon.Value, path string) (entries map[string]canon.Value, at string, err error) {
	if config.Kind() != canon.Object {
		return nil, "", cerr.New(cerr.BadRequest, "%s must be an MCP client config, a JSON object", path)
	}
	key := "mcpServers"
	list, ok := config.Get(key)
	if !ok {
		key = "servers"
		list, ok = config.Get(key)
	}
	if !ok || list.Kind() != canon.Object {
		return nil, "", cerr.New(cerr.BadRequest, "%s has no mcpServers (or servers) object", path)
	}
	out := map[string]canon.Value{}
	for _, m := range list.Members() {
		out[m.Key] = m.Value
	}
	return out, path + "." + key, nil
}

// configTarget is where a config entry's server is reached: a stdio command
// (command, args, env), a streamable HTTP URL (url, with an optional type),
// or the event stream URL of the legacy HTTP+SSE transport (url, type
// "sse"), as the members {url, sse, command, env} of a ci_plan server.
func configTarget(e canon.Value, path string) ([]canon.Member, error) {
	if e.Kind() != canon.Object {
		return nil, cerr.New(cerr.BadRequest, "%s must be an object", path)
	}
	str := func(name string) (string, error) {
		v, ok := e.Get(name)
		if !ok || v.IsNull() {
			return "", nil
		}
		s, isStr := v.Str()
		if !isStr {
			return "", cerr.New(cerr.BadRequest, "%s.%s must be a string", path, name)
		}
		return s, nil
	}
	typ, err := str("type")
	if err != nil {
		return nil, err
	}
	url, err := str("url")
	if err != nil {
		return nil, err
	}
	command, err := str("command")
	if err != nil {
		return nil, err
	}
	null := canon.NullValue()
	switch {
	case typ == "sse" && url == "":
		return nil, cerr.New(cerr.BadRequest, "%s: type sse, the legacy HTTP+SSE transport, needs the url of its event stream", path)
	case url != "":
		return []canon.Member{canon.M("url", canon.Str(url)), canon.M("sse", canon.BoolOf(typ == "sse")), canon.M("command", null), canon.M("env", null)}, nil
	case command == "":
		return nil, cerr.New(cerr.BadRequest, "%s has neither command nor url", path)
	}
	argv := []canon.Value{canon.Str(command)}
	if args, ok := e.Get("args"); ok && !args.IsNull() {
		if args.Kind() != canon.Array {
			return nil, cerr.New(cerr.BadRequest, "%s.args must be an array of strings", path)
		}
		for _, a := range args.Elems() {
			if _, isStr := a.Str(); !isStr {
				return nil, cerr.New(cerr.BadRequest, "%s.args must be an array of strings", path)
			}
			argv = append(argv, a)
		}
	}
	var env []string
	if ev, ok := e.Get("env"); ok && !ev.IsNull() {
		if ev.Kind() != canon.Object {
			return nil, cerr.New(cerr.BadRequest, "%s.env must be an object of strings", path)
		}
		for _, m := range ev.Members() {
			s, isStr := m.Value.Str()
			if !isStr {
				return nil, cerr.New(cerr.BadRequest, "%s.env.%s must be a string", path, m.Key)
			}
			env = append(env, m.Key+"="+s)
		}
	}
	sorting.Strings(env)
	envs := make([]canon.Value, len(env))
	for i, kv := range env {
		envs[i] = canon.Str(kv)
	}
	return []canon.Member{canon.M("url", null), canon.M("sse", canon.BoolOf(false)), canon.M("command", canon.Arr(argv...)), canon.M("env", canon.Arr(envs...))}, nil
}
