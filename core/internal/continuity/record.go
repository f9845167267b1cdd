package continuity

import (
	"cmp"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/core/internal/sorting"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/endpoint"
	"github.com/crawlcheck/verifier/core/internal/lock"
	"github.com/crawlcheck/verifier/core/internal/policy"
	"github.com/crawlcheck/verifier/core/timefmt"
)

// RecordKind is the kind of a continuity record.
const RecordKind = "crawlcheck-continuity-record"

// sortFindings orders findings by the rule table, then tool name, then item, then part:
// one order in every build.
func sortFindings(fs []policy.Finding) {
	rank := map[policy.Observation]int{}
	for i, r := range policy.Rules {
		rank[r.Observation] = i
	}
	sorting.Stable(fs, func(a, b policy.Finding) int {
		if c := cmp.Compare(rank[a.Observation], rank[b.Observation]); c != 0 {
			return c
		}
		if c := canon.CompareKeys(a.Tool, b.Tool); c != 0 {
			return c
		}
		if c := canon.CompareKeys(a.Item, b.Item); c != 0 {
			return c
		}
		return strings.Compare(a.Part, b.Part)
	})
}

func effectsValue(session policy.Effect, perTool map[string]policy.Effect) (canon.Value, canon.Value) {
	names := make([]string, 0, len(perTool))
	for n := range perTool {
		names = append(names, n)
	}
	sorting.Func(names, canon.CompareKeys)
	ms := make([]canon.Member, len(names))
	for i, n := range names {
		ms[i] = canon.M(n, canon.Str(perTool[n].String()))
	}
	return canon.Str(session.String()), canon.Obj(ms...)
}

func optStr(s string) canon.Value { return canon.StrOrNull(s, s != "") }

func (c *check) record(d policy.Decision) canon.Value {
	in := c.in
	effect, toolEffects := effectsValue(d.Effect, d.Tools)

	obs := make([]canon.Value, len(d.Findings))
	for i, f := range d.Findings {
		ms := []canon.Member{
			canon.M("observation", canon.Str(string(f.Observation))),
			canon.M("tool", optStr(f.Tool)),
			canon.M("part", optStr(f.Part)),
			canon.M("effect", canon.Str(f.Effect.String())),
			canon.M("detail", f.Detail),
			canon.M("override", canon.BoolOf(f.Override)),
		}
		if in.Mode == policy.ModeObserve {
			ms = append(ms, canon.M("would", canon.Str(f.Would.String())))
		}
		if f.Item != "" {
			// The prompt, resource or template of an item-scope
			// observation: only on those, so that other records keep
			// their bytes.
			ms = append(ms, canon.M("item", canon.Str(f.Item)))
		}
		if f.Exception != nil {
			ms = append(ms, canon.M("exception", f.Exception.Value()))
		}
		obs[i] = canon.Obj(ms...)
	}

	observed := []canon.Member{
		canon.M("tools_sha256", canon.NullValue()),
		canon.M("count", canon.NullValue()),
		canon.M("pages", canon.Int(int64(c.observed.Pages))),
		canon.M("truncated", canon.BoolOf(c.observed.Truncated != "")),
		canon.M("truncation", optStr(c.observed.Truncated)),
		canon.M("failure", optStr(in.Observed.Failure)),
		canon.M("malformed", canon.BoolOf(c.malformed != nil)),
	}
	if in.Observed.StrayLines > 0 {
		// Only when there were any: records of servers that keep to the
		// protocol keep their bytes.
		observed = append(observed, canon.M("stray_lines", canon.Int(int64(in.Observed.StrayLines))))
	}
	if c.listRead {
		observed[0].Value = canon.Str(c.observed.ListSHA256())
		observed[1].Value = canon.Int(int64(len(c.observed.Tools)))
	}

	age := in.Now.Sub(c.base.ApprovedAt)
	baseline := canon.Obj(
		canon.M("format", canon.Str(c.base.Format)),
		canon.M("server_name", optStr(c.base.AgentgateName)),
		canon.M("sha256", canon.Str(c.trust.Digest)),
		canon.M("tools_sha256", optStr(c.base.ToolsSHA256)),
		canon.M("count", canon.Int(int64(len(c.base.Tools)))),
		canon.M("trust", canon.Str(c.trust.Trust)),
		canon.M("trust_reason", optStr(c.trust.Reason)),
		canon.M("key_id", optStr(c.trust.KeyID)),
		canon.M("approved_at", canon.Str(timefmt.Format(c.base.ApprovedAt))),
		canon.M("age_s", canon.Int(int64(age/time.Second))),
		canon.M("parts", canon.Str(c.trust.Parts)),
		canon.M("coverage", canon.Str(c.trust.Coverage)),
		canon.M("features", canon.Str(c.trust.Features)),
		canon.M("provenance", provenanceValue(c.trust.Provenance)),
		canon.M("blind_parts", canon.Strs(append(append([]string{}, c.base.BlindParts...), c.blind...))),
	)

	server := canon.Obj(
		// The canonical forms identity compared: a record never repeats
		// a credential an endpoint carries, even one an older lockfile
		// pins in clear, nor a spelling identity ignored
		// (endpoint.Canonical).
		canon.M("approved_url", optStr(endpoint.Canonical(c.base.URL))),
		canon.M("observed_url", optStr(endpoint.Canonical(in.Observed.Endpoint))),
		canon.M("identity", canon.Str(c.identity)),
		canon.M("protocol_version", optStr(in.Observed.ProtocolVersion)),
		canon.M("handshake", optStr(in.Observed.Handshake)),
		canon.M("info", in.Observed.ServerInfo),
		canon.M("instructions_sha256", instructionsHash(in.Observed)),
	)
	if lv := c.launchedValue(); !lv.IsNull() {
		server = canon.Obj(append(server.Members(), canon.M("launched", lv))...)
	}

	applied := make([]canon.Value, len(d.Applied))
	for i, e := range d.Applied {
		applied[i] = e.Value()
	}
	expired := make([]canon.Value, len(d.Expired))
	for i, e := range d.Expired {
		expired[i] = e.Value()
	}

	ms := []canon.Member{
		canon.M("kind", canon.Str(RecordKind)),
		canon.M("v", canon.Int(1)),
		canon.M("checked_at", canon.Str(timefmt.Format(in.Now))),
		canon.M("mode", canon.Str(in.Mode)),
		canon.M("effect", effect),
		canon.M("tools", toolEffects),
	}
	// Each offered prompt's, resource's and template's effect, when a list
	// was compared (features.go): absent otherwise.
	itemEffects := c.featuresValue(d, func(x policy.Decided) policy.Effect { return x.Effect }, d.Effect)
	if !itemEffects.IsNull() {
		ms = append(ms, canon.M("features", itemEffects))
	}
	if in.Mode == policy.ModeObserve {
		we, wt := effectsValue(d.WouldEffect, d.WouldTools)
		would := []canon.Member{canon.M("effect", we), canon.M("tools", wt)}
		if wf := c.featuresValue(d, func(x policy.Decided) policy.Effect { return x.Would }, d.WouldEffect); !wf.IsNull() {
			would = append(would, canon.M("features", wf))
		}
		ms = append(ms, canon.M("would", canon.Obj(would...)))
	}
	ms = append(ms,
		canon.M("observations", canon.Arr(obs...)),
		canon.M("server", server),
		canon.M("baseline", baseline),
		canon.M("observed", canon.Obj(observed...)),
		canon.M("policy", canon.Obj(
			canon.M("sha256", canon.Str(in.Policy.SHA256)),
			canon.M("version", canon.Str(in.Policy.Version)),
			canon.M("source", canon.Str(in.Policy.Source)),
			canon.M("expected_version", optStr(in.ExpectedPolicyVersion)),
		)),
		canon.M("exceptions", canon.Obj(canon.M("applied", canon.Arr(applied...)), canon.M("expired", canon.Arr(expired...)))),
		canon.M("issuer", in.Issuer),
		canon.M("engine", canon.Obj(
			canon.M("version", canon.Str(policy.EngineVersion)),
			canon.M("rules_sha256", canon.Str(policy.RulesSHA256())),
		)),
	)
	if in.Log != nil {
		ms = append(ms, canon.M("log", c.log))
	}
	if in.Recheck.Storm() {
		ms = append(ms, canon.M("storm", canon.Obj(
			canon.M("coalesced", canon.Int(int64(in.Recheck.Coalesced))),
			canon.M("held_back_ms", canon.Int(int64(in.Recheck.HeldBackMS))),
		)))
	}
	if in.PrevRecordSHA256 != "" {
		ms = append(ms, canon.M("prev_record_sha256", canon.Str(in.PrevRecordSHA256)))
	}
	rec := canon.Obj(ms...)
	return canon.Obj(append(ms, canon.M("record_sha256", canon.Str(canon.SHA256Hex(rec))))...)
}

// instructionsHash is the record's server.instructions_sha256: the SHA-256
// of the canonical JSON of the instructions the handshake gave (of null
// when it gave none); null when no readable handshake was handed over.
func instructionsHash(o Observed) canon.Value {
	if !o.HandshakeRead || o.HandshakeErr != nil {
		return canon.NullValue()
	}
	return canon.Str(canon.SHA256Hex(o.Instructions))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Verification of a record: record_sha256 is recomputed over every other member.
type Verification struct {
	Valid    bool
	Stored   string
	Computed string
	Reason   string // "" when valid
}

// VerifyRecord recomputes a record's record_sha256. A record that is not a
// continuity record at all is an error; one whose hash does not match is a
// result (Valid false), since that is the answer the caller asked for.
func VerifyRecord(rec canon.Value) (Verification, error) {
	if rec.Kind() != canon.Object {
		return Verification{}, cerr.New(cerr.RecordInvalid, "a record is a JSON object, got %s", rec.Kind())
	}
	if k, _ := rec.Get("kind"); k.String() != `"`+RecordKind+`"` {
		return Verification{}, cerr.New(cerr.RecordInvalid, "record kind is %s, want %q", k, RecordKind)
	}
	sv, _ := rec.Get("record_sha256")
	stored, ok := sv.Str()
	if !ok {
		return Verification{}, cerr.New(cerr.RecordInvalid, "record has no record_sha256 string")
	}
	v := Verification{Stored: stored, Computed: canon.SHA256Hex(rec.Without("record_sha256"))}
	v.Valid = v.Stored == v.Computed
	if !v.Valid {
		v.Reason = "record_sha256 does not match the record: it was edited after it was made"
	}
	return v, nil
}

// Chain is the verification of a JSON-lines log of records.
type Chain struct {
	Valid    bool
	Count    int
	BrokenAt int // index of the first bad record; -1 when valid
	Reason   string
	Head     string // record_sha256 of the last good record
	TornTail bool   // the last line was cut off mid-write and was set aside
}

// Anchor is what a chain is checked against beyond its own links.
type Anchor struct {
	// After is the record_sha256 the log's first record must name as its
	// prev_record_sha256 (a log that continues one rotated away); "" means
	// the first record must start a chain (have no prev_record_sha256).
	After string
	// Head, when set, is the record_sha256 the last record must have: a
	// head kept elsewhere, which shows records cut from the end.
	Head string
}

// VerifyChain checks a JSON-lines log: every line is one record in its
// canonical form (the bytes the core wrote; no blank line, no other
// spelling), each record's record_sha256, each link, and the anchors: the
// first record starts the chain or names a.After, and the last is a.Head
// when given. Links alone prove nothing about the start: a log whose first
// lines were deleted is a valid chain from its new first record, so a
// first record that names a predecessor the caller did not vouch for is a
// break. A last line without its newline that does not parse is a torn
// write (a crash during append): it is reported and set aside, not counted
// as an edit. Any other bad line breaks the chain.
func VerifyChain(lines string, a Anchor) Chain {
	ch := Chain{Valid: true, BrokenAt: -1, Head: a.After}
	rest := lines
	for i := 0; rest != ""; i++ {
		line, after, found := strings.Cut(rest, "\n")
		rest = after
		broken := func(reason string) Chain {
			ch.Valid, ch.BrokenAt, ch.Reason = false, i, "line "+itoa(i+1)+": "+reason
			return ch
		}
		if strings.TrimSpace(line) == "" {
			return broken("a blank line: a log holds one record a line and nothing else")
		}
		rec, err := canon.ParseString(line)
		if err != nil {
			if !found {
				ch.TornTail = true
				break
			}
			return broken(cerr.Message(err))
		}
		v, err := VerifyRecord(rec)
		if err != nil {
			return broken(cerr.Message(err))
		}
		if !v.Valid {
			return broken(v.Reason)
		}
		if string(canon.Canonical(rec)) != line {
			return broken("the record is not in its canonical form (the bytes the core wrote): it was rewritten")
		}
		pv, hasPrev := rec.Get("prev_record_sha256")
		prev, _ := pv.Str()
		switch {
		case ch.Count > 0 && (!hasPrev || prev != ch.Head):
			return broken("prev_record_sha256 does not name the record before it")
		case ch.Count == 0 && a.After == "" && hasPrev:
			return broken("the first record follows " + pv.String() + ", which is not in the log: its start was cut, or it continues a rotated log (then name that record as the anchor: after, --after)")
		case ch.Count == 0 && a.After != "" && prev != a.After:
			return broken("the first record does not follow the expected record " + a.After)
		}
		ch.Count++
		ch.Head = v.Stored
	}
	if a.Head != "" && ch.Head != a.Head {
		ch.Valid, ch.BrokenAt = false, ch.Count
		ch.Reason = "the last record is not the head kept elsewhere (" + a.Head + "): records were cut from the end, or the log was replaced"
		if ch.Head == "" {
			ch.Reason = "the log holds no record, but a head was kept elsewhere (" + a.Head + "): records were cut, or the log was replaced"
		}
	}
	return ch
}

func itoa(n int) string { return canon.Int(int64(n)).String() }

// provenanceValue is the baseline's provenance as a record shows it: the
// lockfile's {source, by}, or null when it states none.
func provenanceValue(p *lock.Provenance) canon.Value {
	if p == nil {
		return canon.NullValue()
	}
	return p.Value()
}
