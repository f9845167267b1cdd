package core

import (
	"crypto/ed25519"

	"github.com/crawlcheck/verifier/core/canon"
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/continuity"
	"github.com/crawlcheck/verifier/core/lock"
	"github.com/crawlcheck/verifier/core/policy"
	"github.com/crawlcheck/verifier/core/req"
	"github.com/crawlcheck/verifier/core/sig"
	"github.com/crawlcheck/verifier/core/tools"
)

func opVersion(r req.Obj) (canon.Value, error) {
	if err := r.Only(); err != nil {
		return canon.Value{}, err
	}
	return canon.Obj(
		canon.M("abi", canon.Int(ABIVersion)),
		canon.M("engine", canon.Str(policy.EngineVersion)),
		canon.M("ops", canon.Strs(Ops())),
		canon.M("rules_sha256", canon.Str(policy.RulesSHA256())),
	), nil
}

func opRules(r req.Obj) (canon.Value, error) {
	if err := r.Only(); err != nil {
		return canon.Value{}, err
	}
	return canon.Obj(
		canon.M("rules", policy.RulesValue()),
		canon.M("rules_sha256", canon.Str(policy.RulesSHA256())),
		canon.M("default_policy", policy.DefaultDocument()),
		canon.M("default_policy_sha256", canon.Str(policy.Default().SHA256)),
	), nil
}

func opCanonicalize(r req.Obj) (canon.Value, error) {
	if err := r.Only("json"); err != nil {
		return canon.Value{}, err
	}
	s, err := r.Str("json", true)
	if err != nil {
		return canon.Value{}, err
	}
	v, err := canon.ParseString(s)
	if err != nil {
		return canon.Value{}, cerr.In("request.json", err)
	}
	b := canon.Canonical(v)
	return canon.Obj(canon.M("canonical", canon.Str(string(b))), canon.M("sha256", canon.Str(canon.SHA256Hex(v)))), nil
}

// toolSource reads the tools of a request: "tools" (an array in the request)
// or "pages" (raw page bytes as strings). Exactly one must be given.
func toolSource(r req.Obj) (tools.Observed, error) {
	hasTools, hasPages := r.Has("tools"), r.Has("pages")
	switch {
	case hasTools && hasPages:
		return tools.Observed{}, cerr.New(cerr.BadRequest, "give either request.tools or request.pages, not both")
	case hasTools:
		ts, err := tools.Hash(r.Value("tools"))
		return tools.Observed{Tools: ts, Pages: 1}, cerr.In("request.tools", err)
	case hasPages:
		pages, err := r.Pages("pages")
		if err != nil {
			return tools.Observed{}, err
		}
		capped, err := r.Bool("page_cap_reached")
		if err != nil {
			return tools.Observed{}, err
		}
		obs, err := tools.FromPages(pages, capped)
		return obs, cerr.In("request.pages", err)
	}
	return tools.Observed{}, cerr.New(cerr.BadRequest, "request.tools or request.pages is required")
}

func opHashTools(r req.Obj) (canon.Value, error) {
	if err := r.Only("tools", "pages", "page_cap_reached"); err != nil {
		return canon.Value{}, err
	}
	obs, err := toolSource(r)
	if err != nil {
		return canon.Value{}, err
	}
	rows := make([]canon.Value, len(obs.Tools))
	names := make([]string, len(obs.Tools))
	ags := make([]tools.Agentgate, len(obs.Tools))
	for i := range obs.Tools {
		t := &obs.Tools[i]
		names[i], ags[i] = t.Name, t.Agentgate()
		rows[i] = canon.Obj(
			canon.M("name", canon.Str(t.Name)),
			canon.M("sha256", canon.Str(t.SHA256)),
			canon.M("parts", t.Parts().Value()),
			canon.M("agentgate", canon.Obj(
				canon.M("nameHash", canon.Str(ags[i].NameHash)),
				canon.M("descriptionHash", canon.Str(ags[i].DescriptionHash)),
				canon.M("inputSchemaHash", canon.Str(ags[i].InputSchemaHash)),
			)),
		)
	}
	return canon.Obj(
		canon.M("count", canon.Int(int64(len(obs.Tools)))),
		canon.M("tools_sha256", canon.Str(tools.ListSHA256(obs.Tools))),
		canon.M("agentgate_surface_hash", canon.Str(tools.SurfaceHash(names, ags))),
		canon.M("tools", canon.Arr(rows...)),
		canon.M("pages", canon.Int(int64(obs.Pages))),
		canon.M("truncated", canon.StrOrNull(obs.Truncated, obs.Truncated != "")),
	), nil
}

// parseLock reads the "lock" document of a request.
func parseLock(r req.Obj, field string) (lock.File, error) {
	doc, ok, err := r.Doc(field)
	if err != nil {
		return lock.File{}, err
	}
	if !ok {
		return lock.File{}, cerr.New(cerr.BadRequest, "request.%s is required", field)
	}
	f, err := lock.Parse(doc)
	return f, cerr.In("request."+field, err)
}

// keysOf reads key_directory and operator_keys.
func keysOf(r req.Obj) (sig.Keys, error) {
	var k sig.Keys
	if doc, ok, err := r.Doc("key_directory"); err != nil {
		return k, err
	} else if ok {
		d, err := sig.ParseDirectory(doc)
		if err != nil {
			return k, cerr.In("request.key_directory", err)
		}
		k.Directory = d
	}
	pubs, err := r.Strings("operator_keys")
	if err != nil {
		return k, err
	}
	for i, p := range pubs {
		pub, err := sig.PublicKey(p)
		if err != nil {
			return k, cerr.In("request.operator_keys["+canon.Int(int64(i)).String()+"]", err)
		}
		k.Operator = append(k.Operator, pub)
	}
	return k, nil
}

func opVerifyLock(r req.Obj) (canon.Value, error) {
	if err := r.Only("lock", "now", "key_directory", "operator_keys", "require_signed", "server_name"); err != nil {
		return canon.Value{}, err
	}
	f, err := parseLock(r, "lock")
	if err != nil {
		return canon.Value{}, err
	}
	now, err := r.Time("now")
	if err != nil {
		return canon.Value{}, err
	}
	keys, err := keysOf(r)
	if err != nil {
		return canon.Value{}, err
	}
	required, err := r.OptBool("require_signed")
	if err != nil {
		return canon.Value{}, err
	}
	servers, chosen, err := lockServers(r, f)
	if err != nil {
		return canon.Value{}, err
	}
	requireSigned := len(keys.Operator) > 0
	if required != nil {
		requireSigned = *required
	}
	t := continuity.VerifyBaseline(f, keys, requireSigned, now)
	ms := []canon.Member{
		canon.M("format", canon.Str(f.Format())),
		canon.M("trust", canon.Str(t.Trust)),
		canon.M("reason", canon.StrOrNull(t.Reason, t.Reason != "")),
		canon.M("key_id", canon.StrOrNull(t.KeyID, t.KeyID != "")),
		canon.M("content_sha256", canon.Str(t.Digest)),
		canon.M("parts", canon.Str(t.Parts)),
		canon.M("servers", canon.Strs(servers)),
		canon.M("server_name", chosen),
	}
	if l := f.Crawlcheck; l != nil {
		ms = append(ms,
			canon.M("sha256", canon.StrOrNull(l.SHA256, l.SHA256 != "")),
			canon.M("count", canon.Int(int64(len(l.Tools)))),
			canon.M("tools_sha256", canon.Str(l.ToolsSHA256)),
		)
	}
	return canon.Obj(ms...), nil
}

// lockServers lists an agentgate.lock's servers and the one the request's
// server_name chooses (lock.Agentgate.Choose); without server_name and with
// several servers none is chosen (null), which is not an error here: the
// file is read, not yet applied. A crawlcheck lockfile has no servers.
func lockServers(r req.Obj, f lock.File) ([]string, canon.Value, error) {
	name, err := r.Str("server_name", false)
	if err != nil || f.Agentgate == nil {
		return []string{}, canon.NullValue(), err
	}
	names := f.Agentgate.ServerNames()
	if name == "" && len(names) != 1 {
		return names, canon.NullValue(), nil
	}
	s, err := f.Agentgate.Choose(name)
	if err != nil {
		return nil, canon.Value{}, err
	}
	return names, canon.Str(s.Name), nil
}

func opSignLock(r req.Obj) (canon.Value, error) {
	if err := r.Only("lock", "private_key", "key_id"); err != nil {
		return canon.Value{}, err
	}
	f, err := parseLock(r, "lock")
	if err != nil {
		return canon.Value{}, err
	}
	if f.Crawlcheck == nil {
		return canon.Value{}, cerr.New(cerr.LockUnsupported, "agentgate.lock has no signature; only crawlcheck lockfiles are signed")
	}
	priv, kid, err := signingKey(r)
	if err != nil {
		return canon.Value{}, err
	}
	l := f.Crawlcheck
	l.Seal(func(d string) string { return sig.Sign(priv, kid, lock.Kind, d) })
	return canon.Obj(
		canon.M("lock", canon.Str(string(l.Bytes()))),
		canon.M("sha256", canon.Str(l.SHA256)),
		canon.M("key_id", canon.Str(kid)),
	), nil
}

// signingKey reads private_key and key_id; without key_id the key signs as
// the operator key it is.
func signingKey(r req.Obj) (ed25519.PrivateKey, string, error) {
	s, err := r.Str("private_key", true)
	if err != nil {
		return nil, "", err
	}
	priv, err := sig.PrivateKey(s)
	if err != nil {
		return nil, "", cerr.In("request.private_key", err)
	}
	kid, err := r.Str("key_id", false)
	if err != nil {
		return nil, "", err
	}
	if kid == "" {
		kid = sig.OperatorKeyID(priv.Public().(ed25519.PublicKey))
	}
	return priv, kid, nil
}

func opPublicKey(r req.Obj) (canon.Value, error) {
	if err := r.Only("private_key"); err != nil {
		return canon.Value{}, err
	}
	priv, kid, err := signingKey(r)
	if err != nil {
		return canon.Value{}, err
	}
	return canon.Obj(
		canon.M("public_key", canon.Str(sig.EncodePublic(priv.Public().(ed25519.PublicKey)))),
		canon.M("key_id", canon.Str(kid)),
	), nil
}

func opVerifyRecord(r req.Obj) (canon.Value, error) {
	if err := r.Only("record"); err != nil {
		return canon.Value{}, err
	}
	rec, ok, err := r.Doc("record")
	if err != nil {
		return canon.Value{}, err
	}
	if !ok {
		return canon.Value{}, cerr.New(cerr.BadRequest, "request.record is required")
	}
	v, err := continuity.VerifyRecord(rec)
	if err != nil {
		return canon.Value{}, err
	}
	return canon.Obj(
		canon.M("valid", canon.BoolOf(v.Valid)),
		canon.M("record_sha256", canon.Str(v.Stored)),
		canon.M("computed_sha256", canon.Str(v.Computed)),
		canon.M("reason", canon.StrOrNull(v.Reason, v.Reason != "")),
	), nil
}

func opVerifyChain(r req.Obj) (canon.Value, error) {
	if err := r.Only("records"); err != nil {
		return canon.Value{}, err
	}
	lines, err := r.Str("records", false)
	if err != nil {
		return canon.Value{}, err
	}
	c := continuity.VerifyChain(lines)
	broken := canon.NullValue()
	if c.BrokenAt >= 0 {
		broken = canon.Int(int64(c.BrokenAt))
	}
	return canon.Obj(
		canon.M("valid", canon.BoolOf(c.Valid)),
		canon.M("count", canon.Int(int64(c.Count))),
		canon.M("broken_at", broken),
		canon.M("reason", canon.StrOrNull(c.Reason, c.Reason != "")),
		canon.M("head", canon.StrOrNull(c.Head, c.Head != "")),
		canon.M("torn_tail", canon.BoolOf(c.TornTail)),
	), nil
}
