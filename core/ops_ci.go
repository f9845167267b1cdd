package core

import (
	"strings"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/endpoint"
	"github.com/crawlcheck/verifier/core/internal/lock"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/sorting"
)

// opCIPlan answers which servers `crawlcheck ci` checks and where each is
// reached: for an agentgate.lock, each server it pins, found by name in an
// MCP client config (Claude Desktop's and Cursor's "mcpServers", VS Code's
// "servers"), and the config's servers the lockfile does not pin, which
// drift (their tools were never approved); for a crawlcheck lockfile, the
// config's servers whose endpoint is the one it pins, the others drifting
// the same way (or, with no config, its own endpoint). A config entry
// "disabled": true is skipped (its client does not start it), and one the
// host "refused" (a variable it cannot expand as the client does) is not
// checked and fails the gate: never is a server left out without a line
// saying so. The config is read by the strict parser, members by their
// exact names: a host's decoder that matches names case-insensitively
// would let "MCPServers" or "Command" decide where a check connects.
func opCIPlan(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	perServer := !rd.Has("lock") && rd.Has("locks")
	var f lock.File
	if !perServer {
		f = parseLockShared(rd, "lock")
	}
	config, hasConfig := rd.Doc("config")
	locks := ciLocks(rd)
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	p := &ciPlan{}
	if perServer {
		return p.perServer(locks, config, hasConfig, rd)
	}
	if rd.Has("locks") {
		return canon.Value{}, cerr.New(cerr.BadRequest, "%s and %s cannot both be given: one lockfile for every server, or one per server", rd.Field("lock"), rd.Field("locks"))
	}
	if f.Agentgate == nil {
		url := f.Crawlcheck.Server.URL
		if url == "" {
			return canon.Value{}, cerr.New(cerr.BadRequest, "%s pins no endpoint: check it with a server named", rd.Field("lock"))
		}
		if !hasConfig {
			where, err := lockTarget(url, rd.Field("lock")+".server.url")
			if err != nil {
				return canon.Value{}, err
			}
			p.servers = append(p.servers, canon.Obj(append([]canon.Member{canon.M("server_name", canon.NullValue()), canon.M("endpoint", canon.Str(url))}, where...)...))
			return p.value(), nil
		}
		entries, at, err := configServers(config, rd.Field("config"))
		if err != nil {
			return canon.Value{}, err
		}
		// Only the entries of the lockfile's server are checked; a
		// disabled or refused one of them is set aside like any other.
		matched := false
		for _, e := range entries {
			aside, err := p.aside(e, at)
			if err != nil {
				return canon.Value{}, err
			}
			where, err := configTarget(e.Value, at+"."+e.Key)
			if aside {
				// A refused entry may not say where it is reached.
				matched = matched || err == nil && sameServer(url, where)
				continue
			}
			if err != nil {
				return canon.Value{}, err
			}
			if !sameServer(url, where) {
				p.unlocked = append(p.unlocked, e.Key)
				continue
			}
			matched = true
			p.servers = append(p.servers, canon.Obj(append([]canon.Member{canon.M("server_name", canon.Str(e.Key)), canon.M("endpoint", canon.Str(url))}, where...)...))
		}
		if !matched && len(p.refused) == 0 {
			return canon.Value{}, cerr.New(cerr.BadRequest, "the lockfile's server %s is not in %s: no entry starts or reaches it", canon.Str(clipText(url)), at)
		}
		return p.value(), nil
	}
	if !hasConfig {
		return canon.Value{}, cerr.New(cerr.BadRequest, "an agentgate.lock names servers, not endpoints: %s is required (an MCP client config with their mcpServers)", rd.Field("config"))
	}
	entries, at, err := configServers(config, rd.Field("config"))
	if err != nil {
		return canon.Value{}, err
	}
	byName := map[string]canon.Member{}
	for _, e := range entries {
		byName[e.Key] = e
	}
	pinned := map[string]bool{}
	for _, s := range f.Agentgate.Servers {
		pinned[s.Name] = true
		e, ok := byName[s.Name]
		if !ok {
			return canon.Value{}, cerr.New(cerr.BadRequest, "server %s of the lockfile is not in %s", canon.Str(s.Name), at)
		}
		if aside, err := p.aside(e, at); err != nil {
			return canon.Value{}, err
		} else if aside {
			continue
		}
		where, err := configTarget(e.Value, at+"."+s.Name)
		if err != nil {
			return canon.Value{}, err
		}
		p.servers = append(p.servers, canon.Obj(append([]canon.Member{canon.M("server_name", canon.Str(s.Name)), canon.M("endpoint", canon.NullValue())}, where...)...))
	}
	for _, e := range entries {
		if pinned[e.Key] {
			continue
		}
		disabled, _, err := configAside(e, at)
		if err != nil {
			return canon.Value{}, err
		}
		if disabled {
			p.skipped = append(p.skipped, e.Key)
			continue
		}
		p.unlocked = append(p.unlocked, e.Key)
	}
	return p.value(), nil
}

// ciPlan is a ci_plan answer being made.
type ciPlan struct {
	servers    []canon.Value
	unlocked   []string
	skipped    []string
	refused    []canon.Value
	mismatched []canon.Value
}

// perServer plans a config whose servers each run with a lockfile of their
// own (locks, by server name: as crawlcheck install wrote them): each
// entry is checked against its lockfile when it starts or reaches the
// server that lockfile pins; one that starts another is mismatched, and
// one without a lockfile unlocked. A lockfile naming a server the config
// does not have is a bad request.
func (p *ciPlan) perServer(locks map[string]lock.File, config canon.Value, hasConfig bool, rd *req.Reader) (canon.Value, error) {
	if !hasConfig {
		return canon.Value{}, cerr.New(cerr.BadRequest, "%s name the servers of an MCP client config: %s is required", rd.Field("locks"), rd.Field("config"))
	}
	entries, at, err := configServers(config, rd.Field("config"))
	if err != nil {
		return canon.Value{}, err
	}
	seen := map[string]bool{}
	for _, e := range entries {
		seen[e.Key] = true
		if aside, err := p.aside(e, at); err != nil {
			return canon.Value{}, err
		} else if aside {
			continue
		}
		l, ok := locks[e.Key]
		if !ok {
			p.unlocked = append(p.unlocked, e.Key)
			continue
		}
		where, err := configTarget(e.Value, at+"."+e.Key)
		if err != nil {
			return canon.Value{}, err
		}
		url := l.Crawlcheck.Server.URL
		if !sameServer(url, where) {
			p.mismatched = append(p.mismatched, canon.Obj(canon.M("server", canon.Str(e.Key)), canon.M("endpoint", canon.Str(url))))
			continue
		}
		p.servers = append(p.servers, canon.Obj(append([]canon.Member{canon.M("server_name", canon.Str(e.Key)), canon.M("endpoint", canon.Str(url))}, where...)...))
	}
	names := make([]string, 0, len(locks))
	for name := range locks {
		names = append(names, name)
	}
	sorting.Strings(names)
	for _, name := range names {
		if !seen[name] {
			return canon.Value{}, cerr.New(cerr.BadRequest, "%s names server %s, which is not in %s", rd.Field("locks"), canon.Str(name), at)
		}
	}
	return p.value(), nil
}

// ciLocks reads "locks": [{server, lock}], the crawlcheck lockfile each
// configured server runs with, by the config's name for it.
func ciLocks(rd *req.Reader) map[string]lock.File {
	out := map[string]lock.File{}
	rd.Objects("locks", "{server, lock}", []string{"server", "lock"}, func(i int, o *req.Reader) {
		name := o.Str("server", true)
		f := parseLockShared(o, "lock")
		switch {
		case o.Failed():
		case f.Crawlcheck == nil:
			o.Fail(cerr.New(cerr.BadRequest, "%s must be a crawlcheck lockfile (an agentgate.lock is given as lock)", o.Field("lock")))
		case f.Crawlcheck.Server.URL == "":
			o.Fail(cerr.New(cerr.BadRequest, "%s pins no endpoint", o.Field("lock")))
		case checkSealed(f) != nil:
			o.Fail(cerr.New(cerr.LockInvalid, "%s: its sha256 does not match its content: it was edited after it was sealed", o.Field("lock")))
		default:
			if _, dup := out[name]; dup {
				o.Fail(cerr.New(cerr.BadRequest, "%s: server %s has two lockfiles", o.Field("server"), canon.Str(name)))
				return
			}
			out[name] = f
		}
	})
	return out
}

// aside sets a disabled or refused entry aside (skipped, refused),
// reporting whether it did.
func (p *ciPlan) aside(e canon.Member, at string) (bool, error) {
	disabled, refused, err := configAside(e, at)
	switch {
	case err != nil:
		return false, err
	case disabled:
		p.skipped = append(p.skipped, e.Key)
	case refused != nil:
		p.refused = append(p.refused, canon.Obj(canon.M("server", canon.Str(e.Key)), canon.M("reasons", canon.Strs(refused))))
	default:
		return false, nil
	}
	return true, nil
}

// configAside reads an entry's "disabled" (true: its client does not start
// it) and "refused" (why the host could not make it what its client starts:
// a variable it cannot expand as the client does, by name).
func configAside(e canon.Member, at string) (disabled bool, refused []string, err error) {
	if e.Value.Kind() != canon.Object {
		return false, nil, nil
	}
	if v, ok := e.Value.Get("disabled"); ok {
		b, isBool := v.BoolValue()
		if !isBool {
			return false, nil, cerr.New(cerr.BadRequest, "%s.%s.disabled must be a boolean", at, e.Key)
		}
		disabled = b
	}
	if v, ok := e.Value.Get("refused"); ok {
		if v.Kind() != canon.Array {
			return false, nil, cerr.New(cerr.BadRequest, "%s.%s.refused must be an array of strings", at, e.Key)
		}
		for _, r := range v.Elems() {
			s, isStr := r.Str()
			if !isStr {
				return false, nil, cerr.New(cerr.BadRequest, "%s.%s.refused must be an array of strings", at, e.Key)
			}
			refused = append(refused, s)
		}
	}
	return disabled, refused, nil
}

// sameServer reports whether a config entry's target is the server a
// crawlcheck lockfile's endpoint names: the same URL (endpoint.Same), or
// the same argv, word for word, as the endpoint op splits it.
func sameServer(lockURL string, where []canon.Member) bool {
	var url, command canon.Value
	for _, m := range where {
		switch m.Key {
		case "url":
			url = m.Value
		case "command":
			command = m.Value
		}
	}
	if u, ok := url.Str(); ok {
		return endpoint.Same(u, lockURL)
	}
	lu, argv, err := endpoint.Split(lockURL)
	if err != nil || argv == nil || lu != "" {
		return false
	}
	elems := command.Elems()
	if len(elems) != len(argv) {
		return false
	}
	for i, a := range elems {
		if s, _ := a.Str(); s != argv[i] {
			return false
		}
	}
	return true
}

func (p *ciPlan) value() canon.Value {
	names := func(ss []string) canon.Value {
		sorting.Strings(ss)
		return canon.Strs(ss)
	}
	return canon.Obj(
		canon.M("servers", canon.Arr(p.servers...)),
		canon.M("unlocked", names(p.unlocked)),
		canon.M("skipped", names(p.skipped)),
		canon.M("refused", canon.Arr(p.refused...)),
		canon.M("mismatched", canon.Arr(p.mismatched...)),
	)
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
		return []canon.Member{canon.M("url", canon.Str(url)), canon.M("sse", canon.BoolOf(false)), canon.M("headers", null), canon.M("command", null), canon.M("env", null), canon.M("cwd", null)}, nil
	}
	return []canon.Member{canon.M("url", null), canon.M("sse", canon.BoolOf(false)), canon.M("headers", null), canon.M("command", canon.Strs(argv)), canon.M("env", canon.Arr()), canon.M("cwd", null)}, nil
}

// ciCheckFields are the members of one ci_verdict check: what a host
// observed of one ci_plan server, as lock_check takes it.
var ciCheckFields = []string{"tools", "pages", "page_cap_reached", "failure", "failure_detail", "failure_at", "failure_page", "timeout_ms", "failure_command", "exit_status", "stderr_tail", "resource_metadata"}

// opCIVerdict is the verdict of `crawlcheck ci`: the request is ci_plan's
// (lock, config) and what the host observed of each server the plan named,
// in its order; the answer is each server's lock check and status
// (unchanged, drifted, unreachable; unlocked: configured and not pinned,
// which drifts; refused: not checked; disabled: skipped), the line a person
// reads, and whether the gate passes: only when every configured server
// was checked and answered its pinned tools. A server that could not be
// reached did not drift, and is not counted as drifting, but the gate does
// not pass without it. No host counts drift or compares a verdict itself.
func opCIVerdict(r req.Obj) (canon.Value, error) {
	plan, err := opCIPlan(r)
	if err != nil {
		return canon.Value{}, err
	}
	rd := r.Read()
	var f lock.File
	locks := ciLocks(rd)
	if rd.Has("lock") {
		f = parseLockShared(rd, "lock")
		if !rd.Failed() {
			rd.Fail(checkSealed(f))
		}
	}
	servers, _ := plan.Get("servers")
	planned := servers.Elems()
	var entries []canon.Value
	counts := map[string]int64{}
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
		var base lock.Baseline
		var err error
		if l, own := locks[name]; own {
			base, err = baselineOf(l, "")
		} else if f.Agentgate != nil {
			base, err = baselineOf(f, name)
		} else {
			base, err = baselineOf(f, "")
		}
		if !o.Fail(err) {
			return
		}
		answer, err := lockCheckOf(o, base)
		if !o.Fail(err) {
			return
		}
		decision, _ := answer.Get("decision")
		d, _ := decision.Str()
		status := "unchanged"
		if u, _ := answer.Get("unreachable"); !u.IsNull() {
			status = "unreachable"
		} else if d != "connect" {
			status = "drifted"
		}
		counts[status]++
		entries = append(entries, ciEntry(label, decision, answer, status, ciSummary(answer)))
	})
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	if !rd.Has("checks") || n != len(planned) {
		return canon.Value{}, cerr.New(cerr.BadRequest, "%s must hold one check per server ci_plan names (%d), got %d", rd.Field("checks"), len(planned), n)
	}
	block, null := canon.Str("block"), canon.NullValue()
	unlocked, _ := plan.Get("unlocked")
	for _, u := range unlocked.Elems() {
		name, _ := u.Str()
		counts["drifted"]++
		entries = append(entries, ciEntry(name, block, null, "unlocked", "not in the lockfile: its tools were never approved"))
	}
	mismatched, _ := plan.Get("mismatched")
	for _, x := range mismatched.Elems() {
		nameV, _ := x.Get("server")
		name, _ := nameV.Str()
		ep, _ := x.Get("endpoint")
		url, _ := ep.Str()
		counts["drifted"]++
		entries = append(entries, ciEntry(name, block, null, "mismatched", "its lockfile pins another server: "+url))
	}
	refused, _ := plan.Get("refused")
	for _, x := range refused.Elems() {
		nameV, _ := x.Get("server")
		name, _ := nameV.Str()
		reasons, _ := x.Get("reasons")
		var rs []string
		for _, r := range reasons.Elems() {
			s, _ := r.Str()
			rs = append(rs, s)
		}
		counts["refused"]++
		entries = append(entries, ciEntry(name, block, null, "refused", "not checked: "+strings.Join(rs, "; ")))
	}
	skipped, _ := plan.Get("skipped")
	for _, x := range skipped.Elems() {
		name, _ := x.Str()
		entries = append(entries, ciEntry(name, canon.Str("skip"), null, "disabled", "disabled in the config: skipped, not checked"))
	}
	return canon.Obj(
		canon.M("servers", canon.Arr(entries...)),
		canon.M("checked", canon.Int(int64(len(entries)))),
		canon.M("drifted", canon.Int(counts["drifted"])),
		canon.M("unreachable", canon.Int(counts["unreachable"])),
		canon.M("refused", canon.Int(counts["refused"])),
		canon.M("skipped", canon.Int(int64(len(skipped.Elems())))),
		canon.M("passes", canon.BoolOf(counts["drifted"]+counts["unreachable"]+counts["refused"] == 0)),
	), nil
}

// ciEntry is one server of a ci_verdict: its label (the config's name for
// it, or the crawlcheck lockfile's endpoint), the decision, its lock check
// (null when it was not checked), its status and the line a person reads.
// drifted and unlocked are kept for readers of the first answer's shape.
func ciEntry(label string, decision, answer canon.Value, status, summary string) canon.Value {
	return canon.Obj(
		canon.M("server", canon.Str(label)),
		canon.M("decision", decision),
		canon.M("status", canon.Str(status)),
		canon.M("drifted", canon.BoolOf(status == "drifted" || status == "unlocked" || status == "mismatched")),
		canon.M("unlocked", canon.BoolOf(status == "unlocked")),
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

// configServers reads an MCP client config's servers, in the config's
// order: "mcpServers", or "servers" when it has none; at is the member's
// path, for messages.
func configServers(config canon.Value, path string) (entries []canon.Member, at string, err error) {
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
	return list.Members(), path + "." + key, nil
}

// configTarget is where a config entry's server is reached: a stdio command
// (command, args, env, cwd), a streamable HTTP URL (url, with an optional
// type, and headers), or the event stream URL of the legacy HTTP+SSE
// transport (url, type "sse"), as the members {url, sse, headers, command,
// env, cwd} of a ci_plan server.
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
	strMap := func(name string) ([]string, error) {
		v, ok := e.Get(name)
		if !ok || v.IsNull() {
			return nil, nil
		}
		if v.Kind() != canon.Object {
			return nil, cerr.New(cerr.BadRequest, "%s.%s must be an object of strings", path, name)
		}
		var out []string
		for _, m := range v.Members() {
			s, isStr := m.Value.Str()
			if !isStr {
				return nil, cerr.New(cerr.BadRequest, "%s.%s.%s must be a string", path, name, m.Key)
			}
			out = append(out, m.Key+"="+s)
		}
		sorting.Strings(out)
		return out, nil
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
		headers, err := strMap("headers")
		if err != nil {
			return nil, err
		}
		h := null
		if headers != nil {
			h = canon.Strs(headers)
		}
		return []canon.Member{canon.M("url", canon.Str(url)), canon.M("sse", canon.BoolOf(typ == "sse")), canon.M("headers", h), canon.M("command", null), canon.M("env", null), canon.M("cwd", null)}, nil
	case command == "":
		return nil, cerr.New(cerr.BadRequest, "%s has neither command nor url", path)
	}
	argv := []string{command}
	if args, ok := e.Get("args"); ok && !args.IsNull() {
		if args.Kind() != canon.Array {
			return nil, cerr.New(cerr.BadRequest, "%s.args must be an array of strings", path)
		}
		for _, a := range args.Elems() {
			s, isStr := a.Str()
			if !isStr {
				return nil, cerr.New(cerr.BadRequest, "%s.args must be an array of strings", path)
			}
			argv = append(argv, s)
		}
	}
	env, err := strMap("env")
	if err != nil {
		return nil, err
	}
	cwd, err := str("cwd")
	if err != nil {
		return nil, err
	}
	c := null
	if cwd != "" {
		c = canon.Str(cwd)
	}
	return []canon.Member{canon.M("url", null), canon.M("sse", canon.BoolOf(false)), canon.M("headers", null), canon.M("command", canon.Strs(argv)), canon.M("env", canon.Strs(append([]string{}, env...))), canon.M("cwd", c)}, nil
}
