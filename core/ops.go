package core

import (
	"strings"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/continuity"
	"github.com/crawlcheck/verifier/core/internal/ed25519"
	"github.com/crawlcheck/verifier/core/internal/lock"
	"github.com/crawlcheck/verifier/core/internal/policy"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/scan"
	"github.com/crawlcheck/verifier/core/internal/sig"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

func opVersion(r req.Obj) (canon.Value, error) {
	return canon.Obj(
		canon.M("abi", canon.Int(ABIVersion)),
		canon.M("engine", canon.Str(policy.EngineVersion)),
		canon.M("limits", limitsValue()),
		canon.M("ops", canon.Strs(Ops())),
		canon.M("rules_sha256", canon.Str(policy.RulesSHA256())),
	), nil
}

func opRules(r req.Obj) (canon.Value, error) {
	return canon.Obj(
		canon.M("rules", policy.RulesValue()),
		canon.M("rules_sha256", canon.Str(policy.RulesSHA256())),
		canon.M("default_policy", policy.DefaultDocument()),
		canon.M("default_policy_sha256", canon.Str(policy.Default().SHA256)),
		canon.M("scan_rules", scan.RulesValue()),
		canon.M("scan_rules_sha256", canon.Str(scan.RulesSHA256())),
	), nil
}

func opCanonicalize(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	s := rd.Str("json", true)
	var v canon.Value
	if !rd.Failed() {
		var err error
		v, err = canon.ParseString(s)
		rd.In("json", err)
	}
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	b := canon.Canonical(v)
	return canon.Obj(canon.M("canonical", canon.Str(string(b))), canon.M("sha256", canon.Str(canon.SHA256Hex(v)))), nil
}

// toolSource reads the tools of a request: "tools" (an array in the request)
// or "pages" (raw page bytes as strings). Exactly one must be given.
func toolSource(rd *req.Reader) tools.Observed {
	if rd.Failed() {
		return tools.Observed{}
	}
	hasTools, hasPages := rd.Has("tools"), rd.Has("pages")
	switch {
	case hasTools && hasPages:
		rd.Fail(cerr.New(cerr.BadRequest, "give either %s or %s, not both", rd.Field("tools"), rd.Field("pages")))
	case hasTools:
		obs, err := tools.Read(rd.Value("tools"))
		rd.In("tools", err)
		return obs
	case hasPages:
		pages := rd.Pages("pages")
		capped := rd.Bool("page_cap_reached")
		if rd.Failed() {
			return tools.Observed{}
		}
		obs, err := tools.FromPages(pages, capped)
		rd.In("pages", err)
		return obs
	default:
		rd.Fail(cerr.New(cerr.BadRequest, "%s or %s is required", rd.Field("tools"), rd.Field("pages")))
	}
	return tools.Observed{}
}

func opHashTools(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	obs := toolSource(rd)
	if err := rd.Err(); err != nil {
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
		canon.M("tools_sha256", canon.Str(obs.ListSHA256())),
		canon.M("agentgate_surface_hash", canon.Str(tools.SurfaceHash(names, ags))),
		canon.M("tools", canon.Arr(rows...)),
		canon.M("pages", canon.Int(int64(obs.Pages))),
		canon.M("truncated", canon.StrOrNull(obs.Truncated, obs.Truncated != "")),
	), nil
}

// parseLock reads a required lockfile document field.
func parseLock(rd *req.Reader, field string) lock.File {
	doc := rd.RequiredDoc(field)
	if rd.Failed() {
		return lock.File{}
	}
	f, err := lock.Parse(doc)
	rd.In(field, err)
	return f
}

// keysOf reads key_directory and operator_keys.
func keysOf(rd *req.Reader) sig.Keys {
	var k sig.Keys
	if doc, ok := rd.Doc("key_directory"); ok {
		d, err := sig.ParseDirectory(doc)
		if !rd.In("key_directory", err) {
			return k
		}
		k.Directory = d
	}
	k.Operator = operatorKeys(rd)
	return k
}

// operatorKeys reads operator_keys.
func operatorKeys(rd *req.Reader) []ed25519.PublicKey {
	var out []ed25519.PublicKey
	for i, p := range rd.Strings("operator_keys") {
		pub, err := sig.PublicKey(p)
		if !rd.In("operator_keys["+canon.Int(int64(i)).String()+"]", err) {
			return out
		}
		out = append(out, pub)
	}
	return out
}

func opVerifyLock(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	f := parseLockShared(rd, "lock")
	now := rd.Time("now")
	keys := keysOf(rd)
	required := rd.OptBool("require_signed")
	servers, chosen := lockServers(rd, f)
	if err := rd.Err(); err != nil {
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
			// Where the lockfile says its server is, so that no host
			// re-parses the file to find it.
			canon.M("url", canon.StrOrNull(l.Server.URL, l.Server.URL != "")),
			canon.M("provenance", provenanceValue(l.Provenance)),
		)
	}
	return canon.Obj(ms...), nil
}

// provenanceValue is a lockfile's provenance as answers show it: the
// object it states, or null.
func provenanceValue(p *lock.Provenance) canon.Value {
	if p == nil {
		return canon.NullValue()
	}
	return p.Value()
}

// lockServers lists an agentgate.lock's servers and the one the request's
// server_name chooses (lock.Agentgate.Choose); without server_name and with
// several servers none is chosen (null), which is not an error here: the
// file is read, not yet applied. A crawlcheck lockfile has no servers.
func lockServers(rd *req.Reader, f lock.File) ([]string, canon.Value) {
	name := rd.Str("server_name", false)
	if rd.Failed() || f.Agentgate == nil {
		return []string{}, canon.NullValue()
	}
	names := f.Agentgate.ServerNames()
	if name == "" && len(names) != 1 {
		return names, canon.NullValue()
	}
	s, err := f.Agentgate.Choose(name)
	if !rd.Fail(err) {
		return nil, canon.Value{}
	}
	return names, canon.Str(s.Name)
}

func opSignLock(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	f := parseLock(rd, "lock")
	if !rd.Failed() && f.Crawlcheck == nil {
		rd.Fail(cerr.New(cerr.LockUnsupported, "agentgate.lock has no signature; only crawlcheck lockfiles are signed"))
	}
	priv, kid := signingKey(rd)
	if err := rd.Err(); err != nil {
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
func signingKey(rd *req.Reader) (ed25519.PrivateKey, string) {
	s := rd.Str("private_key", true)
	if rd.Failed() {
		return nil, ""
	}
	derive := sig.PrivateKey
	if rd.O.Keys != nil {
		derive = rd.O.Keys
	}
	priv, err := derive(s)
	if !rd.In("private_key", err) {
		return nil, ""
	}
	kid := rd.Str("key_id", false)
	if kid == "" && !rd.Failed() {
		kid = sig.OperatorKeyID(priv.Public())
	}
	return priv, kid
}

func opPublicKey(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	priv, kid := signingKey(rd)
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	return canon.Obj(
		canon.M("public_key", canon.Str(sig.EncodePublic(priv.Public()))),
		canon.M("key_id", canon.Str(kid)),
	), nil
}

func opVerifyRecord(r req.Obj) (canon.Value, error) {
	rd := r.Read()
	rec := rd.RequiredDoc("record")
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
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
	rd := r.Read()
	// The log's bytes as the host read them, UTF-8 or not (Page, not Str):
	// a crash mid-append can cut a record inside a multi-byte character,
	// and that torn last line is the damage a log tolerates, not a request
	// to refuse (a line that is not UTF-8 is not JSON: torn when last,
	// else a broken record).
	lines := rd.Page("records", false)
	a := continuity.Anchor{After: rd.Str("after", false), Head: rd.Str("head", false)}
	if err := rd.Err(); err != nil {
		return canon.Value{}, err
	}
	for _, f := range []struct{ name, v string }{{"after", a.After}, {"head", a.Head}} {
		if r.Has(f.name) && !tools.IsHexHash(f.v) {
			return canon.Value{}, cerr.New(cerr.BadRequest, "request.%s must be a record_sha256 (64 lowercase hex digits)", f.name)
		}
	}
	c := continuity.VerifyChain(lines, a)
	broken := canon.NullValue()
	if c.BrokenAt >= 0 {
		broken = canon.Int(int64(c.BrokenAt))
	}
	keep, newline := logHead(lines, c)
	return canon.Obj(
		canon.M("valid", canon.BoolOf(c.Valid)),
		canon.M("count", canon.Int(int64(c.Count))),
		canon.M("broken_at", broken),
		canon.M("reason", canon.StrOrNull(c.Reason, c.Reason != "")),
		canon.M("head", canon.StrOrNull(c.Head, c.Head != "")),
		canon.M("torn_tail", canon.BoolOf(c.TornTail)),
		canon.M("keep_bytes", canon.Int(keep)),
		canon.M("add_newline", canon.BoolOf(newline)),
	), nil
}

// logHead is what a log appended to keeps of the records it read and
// whether it writes a newline before its next record, so that the next
// record starts a line of its own: a torn last line (a writer that died
// mid-append) was never a record and is cut at the last newline; a whole
// last record whose newline was never written gets it. A log that does
// not verify is appended to by no one: all of it is kept, nothing added.
// Each host (Go, JS, Python) had decided both itself.
func logHead(lines string, c continuity.Chain) (keep int64, newline bool) {
	switch {
	case !c.Valid:
		return int64(len(lines)), false
	case c.TornTail:
		return int64(strings.LastIndexByte(lines, '\n') + 1), false
	}
	return int64(len(lines)), lines != "" && lines[len(lines)-1] != '\n'
}
