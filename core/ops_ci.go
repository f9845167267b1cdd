package core

import (
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
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
		return canon.Obj(
			canon.M("servers", canon.Arr(canon.Obj(canon.M("server_name", canon.NullValue()), canon.M("endpoint", canon.Str(url)), canon.M("url", canon.NullValue()), canon.M("command", canon.NullValue()), canon.M("env", canon.NullValue())))),
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
// (command, args, env) or a streamable HTTP URL (url, with an optional
// type), as the members {url, command, env} of a ci_plan server.
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
	case typ == "sse":
		return nil, cerr.New(cerr.BadRequest, "%s: type sse, the legacy HTTP+SSE transport, is not supported (streamable HTTP and stdio are)", path)
	case url != "":
		return []canon.Member{canon.M("url", canon.Str(url)), canon.M("command", null), canon.M("env", null)}, nil
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
	return []canon.Member{canon.M("url", null), canon.M("command", canon.Arr(argv...)), canon.M("env", canon.Arr(envs...))}, nil
}
