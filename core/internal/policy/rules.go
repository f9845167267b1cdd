// Package policy turns observations into effects: the table of spec §4, the
// operator's changes to it, approved exceptions, and the three modes.
//
// The rule table is data (Rules), returned by the "rules" op and hashed into
// engine.rules_sha256, so a record names exactly the rules that decided it.
package policy

import (
	"github.com/crawlcheck/verifier/core/internal/canon"
	"sync"
)

// Effect is what the runtime is told to do; larger is stronger.
type Effect int

// The effects, weakest first.
const (
	Proceed Effect = iota
	ProceedRecorded
	Refresh
	PauseTool
	Pause
	Deny
)

var effectNames = [...]string{"proceed", "proceed_recorded", "refresh", "pause_tool", "pause", "deny"}

func (e Effect) String() string { return effectNames[e] }

// ParseEffect reads an effect name.
func ParseEffect(s string) (Effect, bool) {
	for i, n := range effectNames {
		if n == s {
			return Effect(i), true
		}
	}
	return 0, false
}

// Blocks reports whether the effect stops a tool or session.
func (e Effect) Blocks() bool { return e >= PauseTool }

// Observation names what a check saw.
type Observation string

func (o Observation) String() string { return string(o) }

// The 21 observations of spec §4, then those of the coverage extension
// (issue 18: every member a model or client reads), which entered with the
// default policy crawlcheck-default-2. The transparency log's two
// (docs/log.md) entered with the same version.
const (
	Unchanged              Observation = "unchanged"
	ToolAdded              Observation = "tool_added"
	ToolRemoved            Observation = "tool_removed"
	DescriptionChanged     Observation = "description_changed"
	SchemaChanged          Observation = "schema_changed"
	AnnotationsChanged     Observation = "annotations_changed"
	ToolChanged            Observation = "tool_changed"
	EvidenceExpired        Observation = "evidence_expired"
	SignatureInvalid       Observation = "signature_invalid"
	KeyUnknown             Observation = "key_unknown"
	KeyRetired             Observation = "key_retired"
	ServerIdentityMismatch Observation = "server_identity_mismatch"
	ServerUnavailable      Observation = "server_unavailable"
	ToolListTruncated      Observation = "tool_list_truncated"
	ResponseMalformed      Observation = "response_malformed"
	BaselineStale          Observation = "baseline_stale"
	PolicyVersionMismatch  Observation = "policy_version_mismatch"
	CheckTimeout           Observation = "check_timeout"
	ServiceUnavailable     Observation = "service_unavailable"
	DecisionRefused        Observation = "decision_refused"
	BaselineUntrusted      Observation = "baseline_untrusted"

	TitleChanged          Observation = "title_changed"
	OutputSchemaChanged   Observation = "output_schema_changed"
	IconsChanged          Observation = "icons_changed"
	ExecutionChanged      Observation = "execution_changed"
	MetaChanged           Observation = "meta_changed"
	MetaUIChanged         Observation = "meta_ui_changed"
	UnknownMembersChanged Observation = "unknown_members_changed"
	InstructionsChanged   Observation = "instructions_changed"
	ServerInfoChanged     Observation = "server_info_changed"
	HandshakeMalformed    Observation = "handshake_malformed"
	LogProofInvalid       Observation = "log_proof_invalid"
	LogInconsistent       Observation = "log_inconsistent"

	// The features extension (issue 35: prompts, resources, resource
	// templates and MCP Apps UI templates), which entered with the default
	// policy crawlcheck-default-3.
	PromptAdded             Observation = "prompt_added"
	PromptRemoved           Observation = "prompt_removed"
	PromptChanged           Observation = "prompt_changed"
	ResourceAdded           Observation = "resource_added"
	ResourceRemoved         Observation = "resource_removed"
	ResourceChanged         Observation = "resource_changed"
	ResourceTemplateAdded   Observation = "resource_template_added"
	ResourceTemplateRemoved Observation = "resource_template_removed"
	ResourceTemplateChanged Observation = "resource_template_changed"
	UITemplateChanged       Observation = "ui_template_changed"
	FeaturesIncomplete      Observation = "features_incomplete"
	// The launched package (issue 35 item 4), which entered with the
	// default policy crawlcheck-default-3.
	LaunchedPackageChanged Observation = "launched_package_changed"
)

// Classes of observations.
const (
	ClassInterface    = "interface"    // the tool definitions themselves
	ClassIntegrity    = "integrity"    // stays deny unless the operator overrides it on the record
	ClassAvailability = "availability" // nothing (or not everything) could be compared
	ClassGovernance   = "governance"   // the baseline or policy in force is not the one expected
	ClassEvidence     = "evidence"     // signed evidence from an issuer needs asking again
)

// Scopes of observations.
const (
	ScopeTool    = "tool"    // about one tool; pause_tool withholds that tool alone
	ScopeSession = "session" // about the whole server
	// ScopeItem: about one prompt, resource or resource template;
	// pause_tool withholds that item alone (the record's features member
	// gives each item's effect), the tools stay usable.
	ScopeItem = "item"
)

// Rule is one row of the table.
type Rule struct {
	Observation Observation
	Default     Effect
	Class       string
	Scope       string
	Meaning     string
}

// Rules is the table of spec §4, in its order, then the rows of the
// coverage extension.
var Rules = []Rule{
	{Unchanged, Proceed, ClassInterface, ScopeSession, "the offered tools match the approved baseline"},
	{ToolAdded, PauseTool, ClassInterface, ScopeTool, "a tool the baseline does not list is offered: unavailable until approved"},
	{ToolRemoved, Proceed, ClassInterface, ScopeTool, "a tool in the baseline is no longer offered"},
	{DescriptionChanged, PauseTool, ClassInterface, ScopeTool, "that tool waits for re-approval; the others stay usable"},
	{SchemaChanged, PauseTool, ClassInterface, ScopeTool, "that tool waits for re-approval"},
	{AnnotationsChanged, PauseTool, ClassInterface, ScopeTool, "that tool waits for re-approval"},
	{ToolChanged, PauseTool, ClassInterface, ScopeTool, "changed, and the baseline has no per-part hashes to say which part"},
	{EvidenceExpired, Refresh, ClassEvidence, ScopeSession, "ask again; if that fails, pause"},
	{SignatureInvalid, Deny, ClassIntegrity, ScopeSession, "signed evidence does not verify"},
	{KeyUnknown, Deny, ClassIntegrity, ScopeSession, "signed evidence names a key the directory does not hold"},
	{KeyRetired, Deny, ClassIntegrity, ScopeSession, "signed evidence names a retired key"},
	{ServerIdentityMismatch, Deny, ClassIntegrity, ScopeSession, "the server answering is not the one approved"},
	{ServerUnavailable, Pause, ClassAvailability, ScopeSession, "nothing was compared"},
	{ToolListTruncated, Pause, ClassAvailability, ScopeSession, "a further page of tools/list was not read"},
	{ResponseMalformed, Pause, ClassAvailability, ScopeSession, "the tool list could not be parsed"},
	{BaselineStale, Pause, ClassGovernance, ScopeSession, "the approval is older than the policy allows"},
	{PolicyVersionMismatch, Pause, ClassGovernance, ScopeSession, "the policy in force is not the one the deployment expects"},
	{CheckTimeout, Pause, ClassAvailability, ScopeSession, "the check did not finish"},
	{ServiceUnavailable, Pause, ClassAvailability, ScopeSession, "CrawlCheck unreachable: the local fallback applies"},
	{DecisionRefused, Deny, ClassIntegrity, ScopeSession, "CrawlCheck's signed decision for the host did not allow the connection"},
	{BaselineUntrusted, Deny, ClassIntegrity, ScopeSession, "the approved lockfile's signature does not verify, or its key is neither CrawlCheck's nor yours"},
	// The coverage extension (crawlcheck-default-2).
	{TitleChanged, PauseTool, ClassInterface, ScopeTool, "the tool's title changed (some frameworks hand it to the model): that tool waits for re-approval"},
	{OutputSchemaChanged, PauseTool, ClassInterface, ScopeTool, "the tool's outputSchema changed: that tool waits for re-approval"},
	{IconsChanged, PauseTool, ClassInterface, ScopeTool, "the tool's icons changed: that tool waits for re-approval"},
	{ExecutionChanged, PauseTool, ClassInterface, ScopeTool, "the tool's execution (task support) changed: that tool waits for re-approval"},
	{MetaChanged, PauseTool, ClassInterface, ScopeTool, "the tool's _meta (other than _meta.ui) changed: that tool waits for re-approval"},
	{MetaUIChanged, PauseTool, ClassInterface, ScopeTool, "the tool's _meta.ui (MCP Apps: what is shown, and to whom) changed: that tool waits for re-approval"},
	{UnknownMembersChanged, PauseTool, ClassInterface, ScopeTool, "members of the tool no MCP schema names changed: that tool waits for re-approval"},
	{InstructionsChanged, Pause, ClassInterface, ScopeSession, "the server's instructions (which clients put into the model's context) changed: the session waits for re-approval"},
	{ServerInfoChanged, Proceed, ClassInterface, ScopeSession, "the server's self-reported serverInfo changed: recorded, never trusted for identity"},
	{HandshakeMalformed, Pause, ClassAvailability, ScopeSession, "the handshake's result could not be parsed: its serverInfo and instructions were not compared"},
	// The transparency log (crawlcheck-default-2, docs/log.md).
	{LogProofInvalid, Deny, ClassIntegrity, ScopeSession, "the issuer's transparency-log proof for the approved lockfile does not verify: it may have signed a list it did not publish"},
	{LogInconsistent, Deny, ClassIntegrity, ScopeSession, "the log's checkpoint is not consistent with the one this host kept: the log showed it another history"},
	// The features extension (crawlcheck-default-3, docs/policy.md).
	{PromptAdded, PauseTool, ClassInterface, ScopeItem, "a prompt the baseline does not list is offered: withheld until approved"},
	{PromptRemoved, Proceed, ClassInterface, ScopeItem, "a prompt in the baseline is no longer offered"},
	{PromptChanged, PauseTool, ClassInterface, ScopeItem, "a member of the prompt (its description, arguments, title, ...) changed: that prompt waits for re-approval"},
	{ResourceAdded, PauseTool, ClassInterface, ScopeItem, "a resource the baseline does not list is offered: withheld until approved"},
	{ResourceRemoved, Proceed, ClassInterface, ScopeItem, "a resource in the baseline is no longer offered"},
	{ResourceChanged, PauseTool, ClassInterface, ScopeItem, "a member of the resource (its description, name, mimeType, ...) changed: that resource waits for re-approval"},
	{ResourceTemplateAdded, PauseTool, ClassInterface, ScopeItem, "a resource template the baseline does not list is offered: withheld until approved"},
	{ResourceTemplateRemoved, Proceed, ClassInterface, ScopeItem, "a resource template in the baseline is no longer offered"},
	{ResourceTemplateChanged, PauseTool, ClassInterface, ScopeItem, "a member of the resource template changed: that template waits for re-approval"},
	{UITemplateChanged, PauseTool, ClassInterface, ScopeTool, "the ui:// template a tool names (MCP Apps: rendered by the host, able to write into the model's context) changed, or could not be read: that tool waits for re-approval"},
	{FeaturesIncomplete, Pause, ClassAvailability, ScopeSession, "a prompts, resources or resource templates list the lockfile pins could not be read whole: what it offers was not compared"},
	// The launched package (crawlcheck-default-3, docs/continuity.md).
	{LaunchedPackageChanged, Deny, ClassIntegrity, ScopeSession, "the package the stdio command line launches (its name, version or registry integrity) is not the one approved: another program would run under the approved tool list"},
}

// RuleOf returns the rule of an observation.
func RuleOf(o Observation) (Rule, bool) {
	for _, r := range Rules {
		if r.Observation == o {
			return r, true
		}
	}
	return Rule{}, false
}

// Modes.
const (
	ModeObserve = "observe" // nothing is blocked; the record carries what would have happened
	ModeReview  = "review"  // every change pauses the session; integrity failures still deny
	ModeEnforce = "enforce" // the policy applies as written
)

// Modes lists the modes.
var Modes = []string{ModeObserve, ModeReview, ModeEnforce}

// EngineVersion names this core in every record.
const EngineVersion = "crawlcheck-core/1.0.0"

// RulesValue is the rule table as JSON: what the "rules" op returns and what
// rules_sha256 is the hash of. It covers how signed evidence is judged and
// how decisions are read (evidenceValue), so a receipt's engine.rules_sha256
// names everything its decision came from.
func RulesValue() canon.Value {
	rows := make([]canon.Value, len(Rules))
	for i, r := range Rules {
		rows[i] = canon.Obj(
			canon.M("observation", canon.Str(string(r.Observation))),
			canon.M("default_effect", canon.Str(r.Default.String())),
			canon.M("class", canon.Str(r.Class)),
			canon.M("scope", canon.Str(r.Scope)),
			canon.M("meaning", canon.Str(r.Meaning)),
		)
	}
	return canon.Obj(
		canon.M("kind", canon.Str("crawlcheck-rules")),
		canon.M("v", canon.Int(1)),
		canon.M("effects", canon.Strs(effectNames[:])),
		canon.M("modes", canon.Obj(
			canon.M(ModeObserve, canon.Str("every effect becomes proceed; the record carries the enforce effects as would")),
			canon.M(ModeReview, canon.Str("every observation but unchanged is at least pause; integrity observations keep deny; an applied exception keeps proceed_recorded")),
			canon.M(ModeEnforce, canon.Str("effects as the policy says; pause_tool withholds that tool (for an item-scope observation, that prompt, resource or resource template) alone; a session-scope pause_tool is pause")),
		)),
		canon.M("refresh", canon.Str("refresh asks the host to try once more; on a check marked refreshed it is pause")),
		canon.M("exceptions", canon.Str("an exception matching observation, tool (for an item-scope observation: the item's name, uri or uriTemplate) and observed tool (item) sha256, before its until, gives proceed_recorded; after until it is recorded as expired and changes nothing")),
		canon.M("integrity_override", canon.Str("an operator policy may set an integrity observation below deny only with allow_integrity_override; the record marks each such observation override")),
		canon.M("observations", canon.Arr(rows...)),
		canon.M("evidence", evidenceValue()),
	)
}

// rulesSHA256 is computed on first use, not at start-up: a module's
// start-up runs before its host's SHA-256 is installed, and most calls
// never need it (issue 9, the first call in Node).
var rulesSHA256 = sync.OnceValue(func() string { return canon.SHA256Hex(RulesValue()) })

// RulesSHA256 is engine.rules_sha256.
func RulesSHA256() string { return rulesSHA256() }
