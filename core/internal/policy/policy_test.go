package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
)

// Spec §4, transcribed: every observation with its default effect, in the
// spec's order.
var spec4 = [][2]string{
	{"unchanged", "proceed"},
	{"tool_added", "pause_tool"},
	{"tool_removed", "proceed"},
	{"description_changed", "pause_tool"},
	{"schema_changed", "pause_tool"},
	{"annotations_changed", "pause_tool"},
	{"tool_changed", "pause_tool"},
	{"evidence_expired", "refresh"},
	{"signature_invalid", "deny"},
	{"key_unknown", "deny"},
	{"key_retired", "deny"},
	{"server_identity_mismatch", "deny"},
	{"server_unavailable", "pause"},
	{"tool_list_truncated", "pause"},
	{"response_malformed", "pause"},
	{"baseline_stale", "pause"},
	{"policy_version_mismatch", "pause"},
	{"check_timeout", "pause"},
	{"service_unavailable", "pause"},
	{"decision_refused", "deny"},
	{"baseline_untrusted", "deny"},
	// The coverage extension (crawlcheck-default-2, docs/policy.md).
	{"title_changed", "pause_tool"},
	{"output_schema_changed", "pause_tool"},
	{"icons_changed", "pause_tool"},
	{"execution_changed", "pause_tool"},
	{"meta_changed", "pause_tool"},
	{"meta_ui_changed", "pause_tool"},
	{"unknown_members_changed", "pause_tool"},
	{"instructions_changed", "pause"},
	{"server_info_changed", "proceed"},
	{"handshake_malformed", "pause"},
	{"log_proof_invalid", "deny"},
	{"log_inconsistent", "deny"},
	// The features extension (crawlcheck-default-3, docs/policy.md).
	{"prompt_added", "pause_tool"},
	{"prompt_removed", "proceed"},
	{"prompt_changed", "pause_tool"},
	{"resource_added", "pause_tool"},
	{"resource_removed", "proceed"},
	{"resource_changed", "pause_tool"},
	{"resource_template_added", "pause_tool"},
	{"resource_template_removed", "proceed"},
	{"resource_template_changed", "pause_tool"},
	{"ui_template_changed", "pause_tool"},
	{"features_incomplete", "pause"},
	// The launched package (crawlcheck-default-3).
	{"launched_package_changed", "deny"},
}

func TestRulesAreSpec4(t *testing.T) {
	if len(Rules) != 45 {
		t.Fatalf("%d rules, want 45", len(Rules))
	}
	for i, row := range spec4 {
		r := Rules[i]
		if string(r.Observation) != row[0] || r.Default.String() != row[1] {
			t.Errorf("rule %d = %s → %s, want %s → %s", i, r.Observation, r.Default, row[0], row[1])
		}
		if got, ok := RuleOf(Observation(row[0])); !ok || got.Observation != r.Observation {
			t.Errorf("RuleOf(%s)", row[0])
		}
		if r.Meaning == "" || r.Class == "" || (r.Scope != ScopeTool && r.Scope != ScopeSession && r.Scope != ScopeItem) {
			t.Errorf("rule %s: %+v", r.Observation, r)
		}
	}
	// The spec names these the integrity class; the tool observations are
	// the ones pause_tool can withhold alone.
	for _, o := range []Observation{SignatureInvalid, KeyUnknown, KeyRetired, ServerIdentityMismatch, DecisionRefused, BaselineUntrusted, LogProofInvalid, LogInconsistent} {
		if r, _ := RuleOf(o); r.Class != ClassIntegrity {
			t.Errorf("%s is class %s, want integrity", o, r.Class)
		}
	}
	for _, r := range Rules {
		wantTool := r.Observation == ToolAdded || r.Observation == ToolRemoved || r.Observation == DescriptionChanged ||
			r.Observation == SchemaChanged || r.Observation == AnnotationsChanged || r.Observation == ToolChanged ||
			r.Observation == TitleChanged || r.Observation == OutputSchemaChanged || r.Observation == IconsChanged ||
			r.Observation == ExecutionChanged || r.Observation == MetaChanged || r.Observation == MetaUIChanged ||
			r.Observation == UnknownMembersChanged || r.Observation == UITemplateChanged
		if (r.Scope == ScopeTool) != wantTool {
			t.Errorf("%s has scope %s", r.Observation, r.Scope)
		}
		// The prompts, resources and templates are withheld one by one.
		wantItem := r.Observation == PromptAdded || r.Observation == PromptRemoved || r.Observation == PromptChanged ||
			r.Observation == ResourceAdded || r.Observation == ResourceRemoved || r.Observation == ResourceChanged ||
			r.Observation == ResourceTemplateAdded || r.Observation == ResourceTemplateRemoved || r.Observation == ResourceTemplateChanged
		if (r.Scope == ScopeItem) != wantItem {
			t.Errorf("%s has scope %s", r.Observation, r.Scope)
		}
	}
	if _, ok := RuleOf("not_an_observation"); ok {
		t.Error("RuleOf found an unknown observation")
	}
}

func TestEffectOrder(t *testing.T) {
	names := []string{"proceed", "proceed_recorded", "refresh", "pause_tool", "pause", "deny"}
	for i, n := range names {
		e, ok := ParseEffect(n)
		if !ok || int(e) != i || e.String() != n {
			t.Errorf("ParseEffect(%s) = %d %v", n, e, ok)
		}
		if e.Blocks() != (i >= 3) {
			t.Errorf("%s.Blocks() = %v", n, e.Blocks())
		}
	}
	if _, ok := ParseEffect("block"); ok {
		t.Error("ParseEffect accepted block")
	}
	v, _ := RulesValue().Get("effects")
	if v.String() != `["proceed","proceed_recorded","refresh","pause_tool","pause","deny"]` {
		t.Errorf("rules effects %s", v)
	}
}

func TestRulesSHA256(t *testing.T) {
	sum := sha256.Sum256(canon.Canonical(RulesValue()))
	if RulesSHA256() != hex.EncodeToString(sum[:]) {
		t.Error("rules_sha256 is not the hash of the canonical rule table")
	}
	obs, _ := RulesValue().Get("observations")
	if len(obs.Elems()) != 45 {
		t.Errorf("%d observations in the rule table", len(obs.Elems()))
	}
	for i, row := range obs.Elems() {
		o, _ := row.Get("observation")
		d, _ := row.Get("default_effect")
		if o.String() != `"`+spec4[i][0]+`"` || d.String() != `"`+spec4[i][1]+`"` {
			t.Errorf("row %d: %s", i, row)
		}
	}
}

func TestDefault(t *testing.T) {
	p := Default()
	if p.Version != DefaultVersion || p.Source != SourceDefault || p.MaxBaselineAge != 90*24*time.Hour ||
		p.AllowIntegrityOverride || p.RequireSignedBaseline != nil || len(p.Exceptions) != 0 {
		t.Errorf("default %+v", p)
	}
	for _, row := range spec4 {
		if p.Effects[Observation(row[0])].String() != row[1] {
			t.Errorf("default effect of %s = %s", row[0], p.Effects[Observation(row[0])])
		}
	}
	if p.SHA256 != canon.SHA256Hex(DefaultDocument()) {
		t.Error("sha256 of the default policy")
	}
	eff, _ := DefaultDocument().Get("effects")
	if len(eff.Members()) != 45 {
		t.Errorf("the default document writes %d effects", len(eff.Members()))
	}
}

func parsePolicy(t *testing.T, doc string) (*Policy, error) {
	t.Helper()
	v, err := canon.ParseString(doc)
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return Parse(v)
}

const hexA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

func TestParse(t *testing.T) {
	doc := `{"kind":"crawlcheck-policy","v":1,"version":"acme-7","max_baseline_age_days":30,
		"effects":{"tool_removed":"pause_tool","signature_invalid":"pause"},
		"allow_integrity_override":true,"require_signed_baseline":false,
		"exceptions":[{"observation":"description_changed","tool":"get","sha256":"` + hexA + `","approved_by":"ana","until":"2027-01-01T01:00:00+01:00","reason":"reworded"},
		              {"observation":"baseline_stale","approved_by":"ana","until":"2027-01-01T00:00:00Z"}]}`
	p, err := parsePolicy(t, doc)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := canon.ParseString(doc)
	if p.Version != "acme-7" || p.Source != SourceOperator || p.MaxBaselineAge != 30*24*time.Hour || !p.AllowIntegrityOverride ||
		p.RequireSignedBaseline == nil || *p.RequireSignedBaseline || p.SHA256 != canon.SHA256Hex(v) {
		t.Errorf("policy %+v", p)
	}
	if p.Effects[ToolRemoved] != PauseTool || p.Effects[SignatureInvalid] != Pause || p.Effects[ToolAdded] != PauseTool || p.Effects[KeyUnknown] != Deny {
		t.Errorf("effects %v", p.Effects)
	}
	until := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	if len(p.Exceptions) != 2 || p.Exceptions[0] != (Exception{DescriptionChanged, "get", hexA, "ana", until, "reworded"}) ||
		p.Exceptions[1] != (Exception{Observation: BaselineStale, ApprovedBy: "ana", Until: until}) {
		t.Errorf("exceptions %+v", p.Exceptions)
	}
	if got := p.Exceptions[0].Value().String(); got != `{"approved_by":"ana","observation":"description_changed","reason":"reworded","sha256":"`+hexA+`","tool":"get","until":"2027-01-01T00:00:00.000Z"}` {
		t.Errorf("exception value %s", got)
	}
	if p, err := parsePolicy(t, `{"kind":"crawlcheck-policy","v":1,"version":"x"}`); err != nil || p.Effects[ToolAdded] != PauseTool {
		t.Errorf("minimal policy: %v", err)
	}
}

func TestParseRefuses(t *testing.T) {
	pol := func(members string) string { return `{"kind":"crawlcheck-policy","v":1,"version":"x"` + members + `}` }
	exc := func(e string) string { return pol(`,"exceptions":[` + e + `]`) }
	for _, c := range []struct{ doc, msg string }{
		{`[]`, "not an object"},
		{`{"kind":"policy","v":1,"version":"x"}`, "kind is"},
		{`{"v":1,"version":"x"}`, "kind is null"},
		{`{"kind":"crawlcheck-policy","v":2,"version":"x"}`, "unsupported v 2"},
		{`{"kind":"crawlcheck-policy","v":1}`, "version is required"},
		{pol(`,"name":"acme"`), `unknown member "name"`},
		{`{"kind":"crawlcheck-policy","v":1,"version":""}`, "version must be a non-empty string"},
		{`{"kind":"crawlcheck-policy","v":1,"version":7}`, "version must be a non-empty string"},
		{pol(`,"max_baseline_age_days":0`), "max_baseline_age_days"},
		{pol(`,"max_baseline_age_days":36501`), "max_baseline_age_days"},
		{pol(`,"max_baseline_age_days":-1`), "max_baseline_age_days"},
		{pol(`,"max_baseline_age_days":1.5`), "max_baseline_age_days"},
		{pol(`,"max_baseline_age_days":"90"`), "max_baseline_age_days"},
		{pol(`,"max_baseline_age_days":1e21`), "max_baseline_age_days"},
		{pol(`,"effects":[]`), "effects must be an object"},
		{pol(`,"effects":{"tool_renamed":"deny"}`), `unknown observation "tool_renamed"`},
		{pol(`,"effects":{"tool_added":"block"}`), `effects.tool_added: unknown effect "block"`},
		{pol(`,"effects":{"tool_added":3}`), "effects.tool_added: unknown effect 3"},
		// Two integrity observations lowered: the message names the first in table order.
		{pol(`,"effects":{"baseline_untrusted":"pause","signature_invalid":"proceed"}`), "effects.signature_invalid lowers an integrity observation to proceed"},
		{pol(`,"effects":{"decision_refused":"pause_tool"}`), "allow_integrity_override"},
		{pol(`,"effects":{"key_unknown":"pause"},"allow_integrity_override":false`), "allow_integrity_override"},
		{pol(`,"allow_integrity_override":"yes"`), "allow_integrity_override must be a boolean"},
		{pol(`,"require_signed_baseline":1`), "require_signed_baseline must be a boolean"},
		{pol(`,"exceptions":{}`), "exceptions must be an array"},
		{exc(`{"observation":"nope","approved_by":"a","until":"2027-01-01T00:00:00Z"}`), "exceptions[0]: observation must name an observation"},
		{exc(`{"approved_by":"a","until":"2027-01-01T00:00:00Z"}`), "exceptions[0]: observation"},
		{exc(`{"observation":"tool_added","sha256":"` + hexA + `","approved_by":"a","until":"2027-01-01T00:00:00Z"}`), "names a tool and the observed tool sha256"},
		{exc(`{"observation":"tool_added","tool":"t","approved_by":"a","until":"2027-01-01T00:00:00Z"}`), "names a tool and the observed tool sha256"},
		{exc(`{"observation":"tool_added","tool":"t","sha256":"AB","approved_by":"a","until":"2027-01-01T00:00:00Z"}`), "names a tool and the observed tool sha256"},
		{exc(`{"observation":"baseline_stale","until":"2027-01-01T00:00:00Z"}`), "approved_by is required"},
		{exc(`{"observation":"baseline_stale","approved_by":"","until":"2027-01-01T00:00:00Z"}`), "approved_by is required"},
		{exc(`{"observation":"baseline_stale","approved_by":"a"}`), "until must be an RFC 3339 time"},
		{exc(`{"observation":"baseline_stale","approved_by":"a","until":"soon"}`), "until must be an RFC 3339 time"},
		{exc(`{"observation":"baseline_stale","approved_by":"a","until":"2027-01-01T00:00:00Z","ticket":1}`), `unknown member "ticket"`},
		{exc(`{"observation":"baseline_stale","approved_by":"a","until":"2027-01-01T00:00:00Z","reason":5}`), "reason must be a string"},
		{exc(`{"observation":"tool_added","tool":1,"sha256":"` + hexA + `","approved_by":"a","until":"2027-01-01T00:00:00Z"}`), "tool must be a string"},
		{exc(`{"observation":"baseline_stale","tool":"t","approved_by":"a","until":"2027-01-01T00:00:00Z"}`), "session-wide"},
		{exc(`{"observation":"baseline_stale","sha256":"` + hexA + `","approved_by":"a","until":"2027-01-01T00:00:00Z"}`), "session-wide"},
		{exc(`{"observation":"server_identity_mismatch","approved_by":"a","until":"2027-01-01T00:00:00Z"}`), "exceptions[0] excepts the integrity observation server_identity_mismatch"},
	} {
		_, err := parsePolicy(t, c.doc)
		if cerr.CodeOf(err) != cerr.PolicyInvalid || !strings.Contains(cerr.Message(err), c.msg) {
			t.Errorf("%s:\n got %v\nwant policy_invalid containing %q", c.doc, err, c.msg)
		}
		if err != nil && strings.Contains(cerr.Message(err), "policy_invalid:") {
			t.Errorf("%s: the message repeats the code: %s", c.doc, cerr.Message(err))
		}
	}
}

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func decided(d Decision) string {
	var b strings.Builder
	b.WriteString(d.Effect.String())
	for _, n := range []string{"a", "b", "c"} {
		if e, ok := d.Tools[n]; ok {
			b.WriteString(" " + n + "=" + e.String())
		}
	}
	return b.String()
}

func wouldOf(d Decision) string {
	return decided(Decision{Effect: d.WouldEffect, Tools: d.WouldTools})
}

func TestDecideModes(t *testing.T) {
	offered := []string{"a", "b", "c"}
	changed := []Finding{{Observation: DescriptionChanged, Tool: "b", Part: "description", ToolSHA256: hexA}}
	for _, c := range []struct {
		name     string
		findings []Finding
		observe  string // effect and tools in observe; would must equal enforce
		review   string
		enforce  string
	}{
		{"unchanged", []Finding{{Observation: Unchanged}}, "proceed a=proceed b=proceed c=proceed", "proceed a=proceed b=proceed c=proceed", "proceed a=proceed b=proceed c=proceed"},
		{"no findings", nil, "proceed a=proceed b=proceed c=proceed", "proceed a=proceed b=proceed c=proceed", "proceed a=proceed b=proceed c=proceed"},
		{"a changed tool", changed, "proceed a=proceed b=proceed c=proceed", "pause a=pause b=pause c=pause", "pause_tool a=proceed b=pause_tool c=proceed"},
		{"an added tool", []Finding{{Observation: ToolAdded, Tool: "c", ToolSHA256: hexA}}, "proceed a=proceed b=proceed c=proceed", "pause a=pause b=pause c=pause", "pause_tool a=proceed b=proceed c=pause_tool"},
		{"a removed tool", []Finding{{Observation: ToolRemoved, Tool: "z"}}, "proceed a=proceed b=proceed c=proceed", "pause a=pause b=pause c=pause", "proceed a=proceed b=proceed c=proceed"},
		{"two parts of one tool and another tool", []Finding{{Observation: SchemaChanged, Tool: "a"}, {Observation: AnnotationsChanged, Tool: "a"}, {Observation: ToolChanged, Tool: "c"}},
			"proceed a=proceed b=proceed c=proceed", "pause a=pause b=pause c=pause", "pause_tool a=pause_tool b=proceed c=pause_tool"},
		{"integrity", []Finding{{Observation: SignatureInvalid}}, "proceed a=proceed b=proceed c=proceed", "deny a=deny b=deny c=deny", "deny a=deny b=deny c=deny"},
		{"integrity and a changed tool", append([]Finding{{Observation: BaselineUntrusted}}, changed...), "proceed a=proceed b=proceed c=proceed", "deny a=deny b=deny c=deny", "deny a=deny b=deny c=deny"},
		{"availability", []Finding{{Observation: ToolListTruncated}}, "proceed a=proceed b=proceed c=proceed", "pause a=pause b=pause c=pause", "pause a=pause b=pause c=pause"},
		{"refresh", []Finding{{Observation: EvidenceExpired}}, "proceed a=proceed b=proceed c=proceed", "pause a=pause b=pause c=pause", "refresh a=proceed b=proceed c=proceed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			enforce := Decide(Default(), ModeEnforce, c.findings, offered, now, false)
			review := Decide(Default(), ModeReview, c.findings, offered, now, false)
			observe := Decide(Default(), ModeObserve, c.findings, offered, now, false)
			for _, m := range []struct {
				mode      string
				d         Decision
				want      string
				wantWould string
			}{{ModeEnforce, enforce, c.enforce, c.enforce}, {ModeReview, review, c.review, c.enforce}, {ModeObserve, observe, c.observe, c.enforce}} {
				if got := decided(m.d); got != m.want {
					t.Errorf("%s: %s, want %s", m.mode, got, m.want)
				}
				if m.d.Mode != m.mode {
					t.Errorf("%s: mode %s", m.mode, m.d.Mode)
				}
				if got := wouldOf(m.d); got != m.wantWould {
					t.Errorf("%s: would %s, want %s", m.mode, got, m.wantWould)
				}
				for i, f := range m.d.Findings {
					if f.Finding.Observation != c.findings[i].Observation || f.Would != enforce.Findings[i].Effect {
						t.Errorf("%s: finding %d: %+v", m.mode, i, f)
					}
					if m.mode == ModeObserve && f.Effect != Proceed {
						t.Errorf("observe blocked: %+v", f)
					}
				}
			}
		})
	}
}

func TestDecideRefreshed(t *testing.T) {
	d := Decide(Default(), ModeEnforce, []Finding{{Observation: EvidenceExpired}}, nil, now, true)
	if d.Effect != Pause || d.Findings[0].Would != Pause {
		t.Errorf("a refreshed check's refresh is %s", d.Effect)
	}
}

func TestDecideSessionScopePauseTool(t *testing.T) {
	p, err := parsePolicy(t, `{"kind":"crawlcheck-policy","v":1,"version":"x","effects":{"response_malformed":"pause_tool","tool_removed":"pause_tool"}}`)
	if err != nil {
		t.Fatal(err)
	}
	d := Decide(p, ModeEnforce, []Finding{{Observation: ResponseMalformed}}, []string{"a"}, now, false)
	if decided(d) != "pause a=pause" {
		t.Errorf("a session-scope pause_tool: %s", decided(d))
	}
	// A tool finding about a tool not offered pauses nothing that is.
	d = Decide(p, ModeEnforce, []Finding{{Observation: ToolRemoved, Tool: "z"}}, []string{"a"}, now, false)
	if decided(d) != "pause_tool a=proceed" || len(d.Tools) != 1 {
		t.Errorf("a removed tool: %s %v", decided(d), d.Tools)
	}
}

func TestDecideExceptions(t *testing.T) {
	p, err := parsePolicy(t, `{"kind":"crawlcheck-policy","v":1,"version":"x","exceptions":[
		{"observation":"description_changed","tool":"b","sha256":"`+hexA+`","approved_by":"ana","until":"2026-12-01T00:00:00Z","reason":"ok"},
		{"observation":"schema_changed","tool":"b","sha256":"`+hexA+`","approved_by":"ana","until":"2026-11-30T12:00:00Z"},
		{"observation":"baseline_stale","approved_by":"bo","until":"2026-12-01T00:00:00Z"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	desc := Finding{Observation: DescriptionChanged, Tool: "b", ToolSHA256: hexA}
	schema := Finding{Observation: SchemaChanged, Tool: "b", ToolSHA256: hexA}
	for _, mode := range Modes {
		d := Decide(p, mode, []Finding{desc}, []string{"a", "b"}, now, false)
		want := map[string]string{ModeObserve: "proceed a=proceed b=proceed", ModeReview: "proceed_recorded a=proceed b=proceed_recorded", ModeEnforce: "proceed_recorded a=proceed b=proceed_recorded"}[mode]
		if decided(d) != want || len(d.Applied) != 1 || d.Applied[0].ApprovedBy != "ana" || d.Findings[0].Exception == nil || len(d.Expired) != 0 {
			t.Errorf("%s: applied exception: %s %+v", mode, decided(d), d)
		}
		if d.Findings[0].Would != ProceedRecorded {
			t.Errorf("%s: would %s", mode, d.Findings[0].Would)
		}
	}
	// until is exclusive: at until the exception has expired and changes nothing.
	d := Decide(p, ModeEnforce, []Finding{schema}, []string{"b"}, now, false)
	if decided(d) != "pause_tool b=pause_tool" || len(d.Applied) != 0 || len(d.Expired) != 1 || d.Findings[0].Exception != nil {
		t.Errorf("expired exception: %s %+v", decided(d), d)
	}
	// Another observed hash, another tool or another observation: not covered.
	for _, f := range []Finding{
		{Observation: DescriptionChanged, Tool: "b", ToolSHA256: strings.Repeat("b", 64)},
		{Observation: DescriptionChanged, Tool: "a", ToolSHA256: hexA},
		{Observation: AnnotationsChanged, Tool: "b", ToolSHA256: hexA},
	} {
		d := Decide(p, ModeEnforce, []Finding{f}, []string{"a", "b"}, now, false)
		if len(d.Applied)+len(d.Expired) != 0 || d.Effect != PauseTool {
			t.Errorf("%+v matched an exception: %s", f, decided(d))
		}
	}
	d = Decide(p, ModeEnforce, []Finding{{Observation: BaselineStale}, desc}, []string{"b"}, now, false)
	if decided(d) != "proceed_recorded b=proceed_recorded" || len(d.Applied) != 2 {
		t.Errorf("session exception: %s", decided(d))
	}
}

func TestDecideIntegrityOverride(t *testing.T) {
	p, err := parsePolicy(t, `{"kind":"crawlcheck-policy","v":1,"version":"x","allow_integrity_override":true,
		"effects":{"server_identity_mismatch":"pause"},
		"exceptions":[{"observation":"baseline_untrusted","approved_by":"ana","until":"2027-01-01T00:00:00Z"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	d := Decide(p, ModeEnforce, []Finding{{Observation: SignatureInvalid}, {Observation: ServerIdentityMismatch}, {Observation: BaselineUntrusted}}, nil, now, false)
	got := []bool{d.Findings[0].Override, d.Findings[1].Override, d.Findings[2].Override}
	if got[0] || !got[1] || !got[2] || d.Findings[1].Effect != Pause || d.Findings[2].Effect != ProceedRecorded || d.Effect != Deny {
		t.Errorf("overrides %v, effects %+v", got, d.Findings)
	}
	if d := Decide(Default(), ModeEnforce, []Finding{{Observation: SignatureInvalid}}, nil, now, false); d.Findings[0].Override {
		t.Error("a default deny is marked override")
	}
}

// classesDetail is a description_changed detail carrying these classes.
func classesDetail(t *testing.T, classes ...string) canon.Value {
	t.Helper()
	v, err := canon.ParseString(`{"classes":["` + strings.Join(classes, `","`) + `"]}`)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestClassEffects: an operator's class_effects give a change of an
// editorial class its own effect, in review as in enforce; a change that
// also carries a stronger class keeps the stronger effect; the default
// policy has none, and a change without classes keeps its observation's.
func TestClassEffects(t *testing.T) {
	p, err := parsePolicy(t, `{"kind":"crawlcheck-policy","v":1,"version":"acme-classes-1",
		"class_effects":{"description_changed":{"editorial":"proceed_recorded","documentation":"proceed_recorded","concealment":"deny"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	offered := []string{"a", "b", "c"}
	finding := func(d canon.Value) []Finding {
		return []Finding{{Observation: DescriptionChanged, Tool: "b", Part: "description", ToolSHA256: hexA, Detail: d}}
	}
	for _, c := range []struct {
		name            string
		policy          *Policy
		detail          canon.Value
		review, enforce string
	}{
		{"editorial", p, classesDetail(t, "editorial"), "proceed_recorded a=proceed b=proceed_recorded c=proceed", "proceed_recorded a=proceed b=proceed_recorded c=proceed"},
		{"documentation", p, classesDetail(t, "documentation"), "proceed_recorded a=proceed b=proceed_recorded c=proceed", "proceed_recorded a=proceed b=proceed_recorded c=proceed"},
		{"an instruction beside an editorial change", p, classesDetail(t, "instruction", "editorial"), "pause a=pause b=pause c=pause", "pause_tool a=proceed b=pause_tool c=proceed"},
		{"concealment", p, classesDetail(t, "concealment", "documentation"), "deny a=deny b=deny c=deny", "deny a=deny b=deny c=deny"},
		{"a class this core does not know", p, classesDetail(t, "future_class"), "pause a=pause b=pause c=pause", "pause_tool a=proceed b=pause_tool c=proceed"},
		{"no classes", p, canon.NullValue(), "pause a=pause b=pause c=pause", "pause_tool a=proceed b=pause_tool c=proceed"},
		{"the default policy", Default(), classesDetail(t, "editorial"), "pause a=pause b=pause c=pause", "pause_tool a=proceed b=pause_tool c=proceed"},
	} {
		if got := decided(Decide(c.policy, ModeReview, finding(c.detail), offered, now, false)); got != c.review {
			t.Errorf("%s: review %s, want %s", c.name, got, c.review)
		}
		if got := decided(Decide(c.policy, ModeEnforce, finding(c.detail), offered, now, false)); got != c.enforce {
			t.Errorf("%s: enforce %s, want %s", c.name, got, c.enforce)
		}
	}
	if len(Default().ClassEffects) != 0 {
		t.Error("the default policy has class effects")
	}
}

func TestClassEffectsRefused(t *testing.T) {
	for _, c := range []struct{ effects, want string }{
		{`[]`, "must be an object"},
		{`{"schema_changed":{"editorial":"proceed"}}`, "only description_changed"},
		{`{"description_changed":{"capability":"proceed"}}`, "unknown class"},
		{`{"description_changed":{"typo":"proceed"}}`, "unknown class"},
		{`{"description_changed":{"editorial":"maybe"}}`, "unknown effect"},
		{`{"description_changed":{"instruction":"proceed"}}`, "a stronger class may not have a weaker effect"},
		{`{"description_changed":{"editorial":"pause","documentation":"proceed_recorded"}}`, "a stronger class may not have a weaker effect"},
	} {
		_, err := parsePolicy(t, `{"kind":"crawlcheck-policy","v":1,"version":"x","class_effects":`+c.effects+`}`)
		if cerr.CodeOf(err) != cerr.PolicyInvalid || !strings.Contains(cerr.Message(err), c.want) {
			t.Errorf("%s: %v, want %q", c.effects, err, c.want)
		}
	}
}

// An exception for an item-scope observation names the item and its
// observed hash, as a tool-scope one names the tool; one without is refused.
func TestItemExceptions(t *testing.T) {
	doc := func(ex string) canon.Value {
		v, err := canon.ParseString(`{"kind":"crawlcheck-policy","v":1,"version":"x","exceptions":[` + ex + `]}`)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	hash := strings.Repeat("a", 64)
	p, err := Parse(doc(`{"observation":"prompt_changed","tool":"triage","sha256":"` + hash + `","approved_by":"a","until":"2027-01-01T00:00:00Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	d := Decide(p, ModeEnforce, []Finding{{Observation: PromptChanged, Item: "triage", Part: "description", ToolSHA256: hash}}, []string{"triage"}, now, false)
	if d.Findings[0].Effect != ProceedRecorded || len(d.Applied) != 1 {
		t.Errorf("the item exception did not apply: %+v", d.Findings[0])
	}
	// The item's effect never becomes a tool's of the same name.
	d = Decide(Default(), ModeEnforce, []Finding{{Observation: PromptChanged, Item: "triage", ToolSHA256: hash}}, []string{"triage"}, now, false)
	if d.Tools["triage"] != Proceed || d.Effect != PauseTool {
		t.Errorf("a prompt's change reached the tool of its name: %v, session %s", d.Tools, d.Effect)
	}
	if _, err := Parse(doc(`{"observation":"resource_changed","approved_by":"a","until":"2027-01-01T00:00:00Z"}`)); err == nil {
		t.Error("an item exception naming no item was taken")
	}
}
