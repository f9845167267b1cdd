// Package scan reads a tool list the way a careful person approving it
// would, and says what in it deserves a second look: hidden characters,
// instructions aimed at the model, references to other tools, sensitive
// paths, addresses data could be sent to, text hidden where nobody reads it,
// and names that imitate other names. Its answer is the scan_at_approval
// object of a lockfile (docs/scan.md).
//
// The rules are data (Rules): the "rules" op serves them and their SHA-256
// is written into every scan, so a reader knows which rules produced the
// findings. Matching is hand-written and linear in the text scanned: no
// regular expressions, no Unicode tables (the wasm build carries every byte
// of code the core uses).
package scan

import (
	"github.com/crawlcheck/verifier/core/internal/canon"
	"sync"
)

// Severity grades a finding; larger is more serious.
type Severity int

// The severities, weakest first.
const (
	None Severity = iota
	Low
	Medium
	High
)

var severityNames = [...]string{"none", "low", "medium", "high"}

func (s Severity) String() string { return severityNames[s] }

// ParseSeverity reads a severity name.
func ParseSeverity(s string) (Severity, bool) {
	for i, n := range severityNames {
		if n == s {
			return Severity(i), true
		}
	}
	return None, false
}

// The kinds of findings: what a rule looks for, in the terms of docs/scan.md.
const (
	KindInvisible    = "invisible_characters"
	KindBidi         = "bidi_controls"
	KindControl      = "control_characters"
	KindInstruction  = "instruction_markup"
	KindShadowing    = "tool_reference"
	KindSensitive    = "sensitive_path"
	KindURL          = "url_or_email"
	KindExfiltration = "data_exfiltration"
	KindHiddenText   = "hidden_text"
	KindHomoglyph    = "homoglyph"
	KindCommand      = "command_text"
	KindSchema       = "schema_shape"
	KindTampering    = "parameter_tampering"
)

// Where a rule applies.
const (
	InAny         = "any"          // every text: name, description, schema and annotation strings and keys
	InName        = "name"         // the tool name
	InText        = "text"         // every text but the tool name
	InDescription = "description"  // the tool description
	InSchemaValue = "schema_value" // a string under default, examples, example, const or enum in the schema
	InSchemaDesc  = "schema_prose" // a description or title string in the schema
)

// The matchers a rule can name; Args are their data.
const (
	MatchChars        = "chars"         // Args: code point ranges "U+XXXX" or "U+XXXX-U+YYYY"; a run is one finding
	MatchLoneCR       = "lone_cr"       // a carriage return not followed by a line feed
	MatchEscape       = "escape"        // ESC and the terminal control sequence it starts
	MatchLiteral      = "literal"       // Args: ASCII text, case-insensitive; ^ and $ ask for a word boundary there
	MatchURL          = "url"           // Args: schemes as literals; the span runs to the end of the address
	MatchEmail        = "email"         // local@domain.tld
	MatchTag          = "tag"           // Args: markup tag names, case-insensitive, opening or closing, with attributes
	MatchPhrase       = "phrase"        // Args: word patterns (see phrase.go)
	MatchListTool     = "list_tool"     // the name of another tool of the same list
	MatchKnownTool    = "known_tool"    // Args: tool names of well-known servers, when not in the list
	MatchMixedScript  = "mixed_script"  // Args: minimum letters; a word mixing Latin with a look-alike script
	MatchNonASCII     = "non_ascii"     // any character outside ASCII
	MatchLength       = "length"        // Args: bytes; a text longer than that
	MatchSpaceRun     = "space_run"     // Args: horizontal count, line count; a blank run with that many blanks on one line or that many line breaks
	MatchBracket      = "bracket"       // Args: words; a [bracketed label] of at most four words, one of them among these
	MatchComment      = "comment"       // an HTML comment <!-- … -->
	MatchTypeProse    = "type_prose"    // a schema "type" that is not a JSON Schema type name
	MatchRequired     = "required"      // a schema "required" entry that names no property of its object
	MatchSendTo       = "send_to"       // Args: words; an e-mail address after one of these words (at most five words before it)
	MatchContrast     = "contrast"      // Args: words; a well-known tool name of another server right after one of them ("instead of read_file")
	MatchCallTool     = "call_tool"     // Args: verbs, then "|", then name words; a tool named with one of the words, right after a verb
	MatchRefused      = "refused"       // Args: a literal rule's id, then words; a match of it in a sentence with one of the words is this rule's instead
	MatchOwnTools     = "own_tools"     // Args: rule ids; a match of one of them in a sentence that names only tools of this list is this rule's instead
	MatchCallSyntax   = "call_syntax"   // Args: verbs; right after one of them, a tool of no list written as a call with its arguments: call `name(…)`
	MatchForeignTool  = "foreign_tool"  // Args: verbs, "|", claims; a tool of no list (nor a parameter) called right after a verb, or announced: "<name> tool now …" (foreign.go)
	MatchForeignRoute = "foreign_route" // Args: "before" or "around", route words or "*", then groups each after "|"; a snake_case tool of no list (nor a parameter) after a route word (or anywhere), with a word of each group near it in its sentence (route.go)
	MatchDirective    = "directive"     // Args: directive words, "|", role words, "|", documentation words, "|", top-level domains; a clause with a directive, a role (or a parameter of the tool) and a concrete value, and no documentation word
)

// Rule is one row of the rule table.
type Rule struct {
	ID       string
	Kind     string
	Severity Severity
	In       string
	Match    string
	Args     []string
	Why      string
}

// Version names the rule table's layout; the hash names its content.
const Version = 1

// Rules is the rule table, in the order findings of one span are listed.
var Rules = []Rule{
	// Characters a person does not see but a model reads.
	{"invisible.tag", KindInvisible, High, InAny, MatchChars, []string{"U+E0000-U+E007F"},
		"Unicode tag characters render as nothing and spell ASCII text a model reads (ASCII smuggling); the finding decodes it"},
	{"invisible.variation_selector_supplement", KindInvisible, High, InAny, MatchChars, []string{"U+E0100-U+E01EF"},
		"supplementary variation selectors render as nothing and can carry one byte each"},
	{"invisible.zero_width", KindInvisible, Medium, InAny, MatchChars, []string{"U+200B-U+200D", "U+2060-U+2064", "U+FEFF", "U+180E"},
		"zero-width characters hide text boundaries and split words that other rules look for"},
	{"invisible.filler", KindInvisible, Medium, InAny, MatchChars, []string{"U+00AD", "U+034F", "U+115F-U+1160", "U+17B4-U+17B5", "U+2065", "U+3164", "U+FFA0", "U+FFF9-U+FFFB", "U+1D173-U+1D17A"},
		"soft hyphens, fillers and annotation marks render as nothing or blank"},
	{"invisible.variation_selector", KindInvisible, Low, InAny, MatchChars, []string{"U+FE00-U+FE0F"},
		"variation selectors are usually emoji presentation, but render as nothing"},
	{"invisible.private_use", KindInvisible, Low, InAny, MatchChars, []string{"U+E000-U+F8FF", "U+F0000-U+FFFFD", "U+100000-U+10FFFD"},
		"private-use characters have no agreed glyph: what a person sees is not what was sent"},

	// Text that displays in another order than it is read.
	{"bidi.override", KindBidi, High, InAny, MatchChars, []string{"U+202A-U+202E", "U+2066-U+2069"},
		"bidirectional embeddings, overrides and isolates reorder what a person sees (Trojan Source)"},
	{"bidi.mark", KindBidi, Low, InAny, MatchChars, []string{"U+200E-U+200F", "U+061C"},
		"direction marks are normal in right-to-left text but invisible"},

	// Control characters.
	{"control.escape", KindControl, High, InAny, MatchEscape, nil,
		"an escape sequence can move the cursor, recolour or erase what a terminal shows"},
	{"control.character", KindControl, Medium, InAny, MatchChars, []string{"U+0000-U+0008", "U+000B-U+000C", "U+000E-U+001A", "U+001C-U+001F", "U+007F-U+009F"},
		"control characters have no place in a tool's text and behave differently in every display"},
	{"control.lone_cr", KindControl, Medium, InAny, MatchLoneCR, nil,
		"a carriage return without a line feed makes a terminal overwrite the line it ends"},

	// Markup and phrases that speak to the model rather than describe the tool.
	{"instruction.chat_template", KindInstruction, High, InText, MatchLiteral, []string{"<|im_start|>", "<|im_end|>", "<|system|>", "<|user|>", "<|assistant|>", "<|endoftext|>", "<|eot_id|>", "<|start_header_id|>", "[inst]", "[/inst]", "<<sys>>", "<</sys>>", "[system]", "[/system]"},
		"chat-template tokens try to open a new system or user turn inside a tool's text"},
	{"instruction.override", KindInstruction, High, InText, MatchPhrase, []string{
		"ignore|disregard|forget|override|bypass|circumvent ~3 previous|prior|above|earlier|preceding|former|original|all|any|your|system|safety|security|content ~2 instructions|instruction|prompt|prompts|rules|directions|guidelines|guidance|messages|constraints|restrictions|restriction|filters|filtering|policies|policy|safeguards|guardrails|limitations|checks|controls|safety|security",
		"new|updated|real|actual ~1 system ~0 instructions|prompt|rules",
		"supersedes|overrides|replaces|cancels|voids ~2 your|all|any|previous|prior|earlier|existing|system ~2 instructions|guidelines|rules|prompt|policies|policy|restrictions|guardrails",
		"rules|restrictions|guidelines|policies|guardrails|filters|safety ~2 no ~0 longer ~0 apply|applies|matter|exist",
		"disable|deactivate|suspend|lift|circumvent ~3 all|any|every|your ~2 guardrails|safeguards|safety|protections|restrictions|security",
		"takes|take|has|have|gets|get ~0 precedence|priority ~1 over|above ~2 system|operator|operators|safety|your ~1 prompt|prompts|instructions|instruction|guidelines|rules|policy|policies|guidance",
	}, "text telling the model to drop its instructions or its safety rules is prompt injection, whatever the tool"},
	{"instruction.directive", KindInstruction, Medium, InText, MatchPhrase, []string{
		"system|override|safety|emergency|role|hidden|metadata|configuration|admin|processing|security|bypass ~0 directive|directives",
		"system|instruction|instructions|safety|emergency|admin ~0 override",
		"hidden|secret ~0 instruction|instructions|directive",
		"safety|security ~0 bypass",
		"important ~0 system ~0 note|message",
		"note|notes|message|reminder|instruction|instructions|notice ~0 to|for ~0 the ~0 assistant|assistants|agent|agents|model|ai|llm|claude",
	}, "a directive, override or hidden instruction named as such addresses the model, not the person reading the tool"},
	{"instruction.role", KindInstruction, Medium, InText, MatchPhrase, []string{
		"act|acting ~0 as ~3 administrator|admin|root|superuser|sysadmin|system|authority|god|unrestricted|jailbroken",
		"you ~0 are ~0 now ~3 administrator|admin|root|superuser|system|unrestricted|dan|free|developer|jailbroken|god",
		"never ~0 refuse|decline ~1 a|any|the ~0 request|requests|instruction|instructions|command|commands",
		"pretend|simulate ~3 elevated|admin|root|privileges|privileged|unrestricted",
		"elevated|escalated|unrestricted|unlimited ~1 privileges|privilege|access|permissions|authority",
		"trust ~1 all|any|every ~3 input|inputs|commands|queries|requests|users|user|roles",
		"escalate ~3 superadmin|admin|root|privileges|privilege",
		"trust ~1 this|it|me ~1 tool|function|server|completely|fully|blindly|unconditionally",
		"from ~0 now ~0 on ~3 you|always|never|respond|reply|answer|speak|write|act|ignore",
	}, "assigning the model a privileged role or telling it to trust input is how a description widens what the model will do"},
	{"instruction.priority", KindInstruction, Medium, InText, MatchPhrase, []string{
		"priority ~3 higher|greater|above|over ~3 user|users|request|requests|instructions|query|anything|everything",
		"more ~0 important ~1 than ~3 user|users|request|requests|instructions|query",
		"ignore|disregard ~2 their|the|user|users|any ~1 query|request|question|message|messages|intent|task ~3 instead",
		"earlier|previous|prior|existing|original|user|users|operator|operators|system|safety|your|their ~1 guidance|instructions|instruction|preferences|preference|restrictions|guidelines|policy|policies|rules ~8 superseded|overridden|overruled|voided|outdated|obsolete|revoked|rescinded|void|lifted|waived",
		"earlier|previous|prior|existing|original|user|users|operator|operators|system|safety|your|their ~1 guidance|instructions|preferences|restrictions|guidelines|policy|policies|rules ~8 is|are|was|were|be|been|now ~6 superseded|overridden|overruled|voided|revoked|rescinded|void|lifted|waived",
		"disregard|ignore|overrule|override|bypass ~2 that|this|such|their|user|users|your ~0 preference|preferences|wish|wishes|objection|objections|instruction|instructions|restriction|restrictions|refusal",
		"rule|rules|instruction|instructions|guideline|guidelines|policy|policies|restriction|restrictions|preference|preferences|guidance ~2 doesnt|dont|not ~0 apply ~2 to ~0 this|here",
		"rules|guidelines|instructions|requirements|restrictions|policies|policy|guardrails|guidance ~8 no ~0 longer ~0 bind|binds|binding",
		"guidelines|instructions|rules|policies|policy|restrictions|guidance|requirements|guardrails ~6 out ~0 of ~0 date",
		"consent|approval|confirmation|permission ~1 requirement|requirements|step|steps|check|checks|rules ~6 waived|lifted",
	}, "a tool's text claiming priority over the person's request is an override in other words"},
	{"instruction.preference", KindInstruction, Medium, InText, MatchPhrase, []string{
		"rather ~0 than ~0 others",
		"rather ~0 than ~0 other|any|the ~1 tool|tools|standard|default|builtin|built",
		"instead ~0 of ~0 any|other|others ~0 other|standard|default|builtin|built|regular|normal",
		"always|only|exclusively ~1 use|call|consult|invoke|choose|select ~0 this ~0 tool|function|server ~4 instead|over|rather|regardless|whatever|no|every|all",
		"prefer|choose|select ~0 this ~0 tool|function|server ~3 over|above|rather|instead|always",
		"safer|better|faster|superior|preferable|preferred|more ~3 than ~3 standard|default|builtin|built|regular|normal|others|original",
		"safer|better|faster|superior|preferable|preferred|more ~3 than ~1 other|any ~2 tool|tools|server|servers|function|functions|option|options|solution|solutions|service|services|method|methods|alternative|alternatives|implementation|implementations|provider|providers|api|apis|engine|engines|app|apps|approach|approaches|search|calculator|calculators|translator|translators|one|ones",
		"not ~1 use|call|choose ~1 any ~1 other",
		"not|never ~1 use|call|choose|pick|select ~2 other|others|alternative|alternatives|another|those",
		"use|choose|pick|call|prefer ~1 this ~0 tool|function|one ~2 for ~0 all|every|any",
		"prefer|choose|pick|select ~1 it|this|me ~3 over|above|before ~2 any|all|other|others",
		"pick|use ~0 this ~0 tool|function|one ~2 over|above",
		"other|others|standard|default|builtin|existing|legacy|original|competing|alternative ~3 tool|tools|server|servers|function|functions|executor|executors ~4 deprecated|obsolete|outdated|retired|broken|unreliable|untrusted|insecure|unsafe|legacy|stale|compromised|inaccurate|buggy|unsupported|disabled|superseded|wrong",
		"server|servers ~1 tool|tools|function|functions ~2 deprecated|obsolete|outdated|retired|broken|unreliable|untrusted|insecure|unsafe|compromised|superseded",
		"ignore|avoid|skip|disregard ~2 other|others|alternative|alternatives|competing|remaining ~2 tool|tools|server|servers|options|ones|implementations",
		"avoid|ignore|skip|disregard ~2 any|all ~0 alternatives|others",
		"should|must ~1 be ~0 the ~0 only ~0 one|tool|function",
		"only ~0 this ~0 tool|function|server ~1 is|has|can|may ~1 permitted|allowed|authorized|able|permission|trusted",
		"this ~0 is ~0 the ~0 preferred|official|recommended|trusted|approved|default|canonical|best|greatest|ultimate|finest|leading ~3 tool|function|executor|one|service|solution|option|choice",
		"validated|recommended|regarded|favored|favoured|endorsed|praised|acclaimed|trusted|certified|approved|recognized|recognised|preferred|chosen|loved ~3 by ~4 experts|expert|professionals|leaders|analysts|specialists|bloggers|researchers|millions|engineers|enterprises|institutions|authorities",
		"widely|highly ~0 used|adopted|regarded|acclaimed|praised|rated|recommended|trusted|endorsed ~1 by|among|across|in ~3 professionals|experts|leaders|industry|circles|community|enterprises|analysts|specialists",
		"recognized|recognised|renowned|acclaimed|famous|known ~2 in|across|among|throughout ~2 circles|industry|community",
		"in ~0 place ~0 of ~4 tool|tools|server|servers|other|others|any",
		"route|send|direct|redirect ~3 through|via ~0 this ~0 one|tool|function|server",
		"tools|servers|alternatives|calculators|implementations ~4 corrupt|corrupts|leak|leaks|incorrectly|insecure|unsafe|broken|buggy|unreliable|deprecated|outdated|obsolete|compromised|inaccurate|malicious",
		"the ~0 only ~3 tool|function|one ~3 you ~0 should|must|can ~1 rely|use|trust|call",
		"this ~0 is ~0 the ~0 one ~0 to ~0 use",
		"choose|pick|prefer ~1 this ~0 one|tool ~1 every ~0 time",
		"not ~1 fall ~0 back ~1 to ~0 any|other|another",
		"safe|secure|trusted|official|better|recommended ~0 replacement|alternative|substitute",
		"standard|legacy|old|original|default|regular|basic|native|builtin|existing|direct|raw ~6 tool|tools|function|functions|reads|calls|method|api|version ~6 deprecated|obsolete|outdated|retired|broken|unreliable|inaccurate|incomplete|cached|stale|expire|corrupted|garbled|suspended|insecure|unsafe|unsupported|buggy|maintenance",
		"instead ~0 of ~3 the ~0 deprecated|legacy|outdated|obsolete|broken|unsafe|insecure|unreliable",
		"only ~2 authorized|approved|certified|sanctioned|permitted|allowed|official|valid|trusted|supported ~3 tool|method|utility|way|interface|function|option|channel|gateway|means",
		"only ~0 tool|method|utility|way|interface|function ~1 authorized|approved|certified|sanctioned|permitted|allowed",
		"superior|preferable ~1 to ~3 standard|other|others|existing|regular|default|legacy|basic|native|builtin|manual|alternatives|competing|competitors",
		"safer|better|faster|superior|preferable|more ~3 than ~3 manually|manual|separately|individually|fragmented",
		"recommended|preferred|mandatory ~1 for ~0 all|every|any ~4 task|tasks|queries|query|operations|requests|retrieval|lookups|searches|conversions|calculations",
		"superior|smarter|optimal ~0 choice|option|alternative",
		"replaces|replace|replacing|supersedes|deprecates ~3 standard|legacy|unsecured|raw|manual|error|basic|old|existing|default|regular ~4 calls|tools|tool|invites|reads|functions|workflow|workflows|chains|steps",
		"use|call|choose|pick|select|invoke|try ~0 this|it ~2 instead ~0 of ~1 standard|default|builtin|regular|normal|legacy|native|direct|official|original|existing|insecure|unsecured|unverified|plain|basic",
		"inferior|lesser|weaker|outdated ~0 alternative|alternatives|tool|tools|option|options|competitor|competitors|solution|solutions|product|products|service|services|calculator|calculators|translator|translators|engine|engines",
		"outperforms|outperform|outperforming|beats|surpasses|outclasses|outranks ~2 all|any|every|other|others|competitors|competing|competition|alternatives|rivals",
		"than ~1 competitors|competition|competing|rivals|alternatives",
		"rated|ranked|voted ~0 1|number",
		"1 ~0 rated|ranked|rating",
		"trusted|used|endorsed|recommended|relied|preferred|chosen ~1 by ~4 fortune|companies|enterprises|organizations|organisations|millions|thousands|nations|governments|banks|universities|lab|labs|institutes",
		"proven|guaranteed ~3 to ~0 be ~3 superior|better|best|fastest|faster|more|most|safer|unbeatable",
		"dont ~0 settle ~1 for|with",
		"try|use|call|choose ~1 this ~0 tool|function|one ~1 first ~1 before ~1 any|every|all|the ~1 other|others|alternative|alternatives|option|options|tool|tools",
		"deprecated|suspended|disabled|blocked|retired|removed|sunset|unavailable|decommissioned ~8 must|now|only ~2 use|call|switch|migrate|redirect|route",
		"using|calling|invoking ~4 will|would|may|might|could|can ~1 likely|probably|possibly ~0 crash|corrupt|hang|freeze",
		"direct ~0 connections|connection|delivery|modification|modifications ~4 blocked|suspended|paused",
		"mandatory|compulsory|exclusive|sole ~0 method|way|tool|channel|gateway|means|interface|proxy ~2 for|to|of",
		"must|shall|mandatory|required|recommended|advised|encouraged|please|kindly ~2 use|call ~0 this ~0 tool|function|one ~4 instead|over|rather",
		"must|should|shall ~1 use|go|pass|route ~1 through|via ~0 this ~0 tool|proxy|gateway|function",
		"requests|queries|calls|searches|lookups|operations|tasks|questions ~3 belong|belongs ~1 here",
		"ignore|avoid|skip|disregard ~3 tool|tools|function|functions|server|servers ~2 from|of|by|in ~1 other|others|another|different|third",
		"consider|treat|regard ~1 this|it ~2 the|as ~1 default|primary|main|preferred|official|only|canonical ~2 tool|source|service|provider|option|choice|one",
		"stick|stay ~1 with|to ~1 this ~0 tool|one|function|server",
		"other|others ~6 are|is ~0 known ~0 to ~0 truncate|fail|corrupt|leak|lose|drop|break|crash|hang|misreport|return",
		"not|never|avoid ~1 use|using|call|calling ~1 the|any ~1 builtin|built|native|standard|default|original|legacy|regular|existing|old ~2 tool|tools|function|functions|server|servers",
		"other|standard|default|builtin|existing|legacy|original|regular|basic|native ~3 tool|tools|server|servers|function|functions|version|versions|api|apis ~2 may|might|can|could|will|often|frequently|sometimes|tend ~1 leak|expose|corrupt|lose|return|give|produce|contain|be ~1 outdated|stale|incomplete|inaccurate|incorrect|wrong|unsafe|insecure|unreliable|data|credentials|secrets|keys|your",
		"other|others|standard|default|builtin|existing|legacy|original|old|previous ~3 tool|tools|server|servers|function|functions|version|versions|api ~3 no ~0 longer ~0 supported|maintained|available|works|working|reliable|safe|accurate|secure|recommended",
		"server|servers|provider|providers|vendor|vendors|extension|extensions|plugin|plugins ~2 tool|tools|command|commands|function|functions|api|apis|endpoint|endpoints|version|versions|implementation|implementations ~3 is|are|tends|tend|may|might|often|sometimes|known|has|have|been ~2 flaky|unstable|unreliable|buggy|broken|inaccurate|deprecated|wrong|off|drop|drops|corrupt|corrupts|leak|leaks|misreport|misreports|lose|loses|garble|garbles",
		"other|others|competing|alternative|third ~3 provider|providers|service|services|source|sources|engine|engines|app|apps|vendor|vendors|tool|tools|server|servers|implementation|implementations|library|libraries|api|apis ~5 tend|tends|often|usually|frequently|sometimes|known|may|might ~2 off|wrong|inaccurate|incorrect|unreliable|flaky|stale|outdated|buggy|broken|imprecise|misleading|corrupt|lossy|miscalculate|misreport|drop|lose",
		"other|others ~8 this ~0 one|tool|server ~0 is|stays|remains|gets ~1 accurate|correct|reliable|precise|exact|trustworthy|safe|secure",
		"through|via|with|using ~0 this ~0 tool|one|server ~1 is ~0 the ~0 supported|sanctioned|correct|proper|right|official|approved|recommended|only|preferred|endorsed ~0 path|way|route|channel|method|option",
		"this ~0 tool|one|server ~0 is ~0 the ~0 supported|sanctioned|correct|proper|right|endorsed ~0 path|way|route|channel|method",
		"think|see|view ~1 of ~0 this|it ~1 as ~1 the|your ~1 main|primary|default|preferred|official|only|canonical|standard|go",
		"others|rest|alternatives|remaining ~4 only|just|merely|solely|purely ~1 for ~1 compatibility|legacy|backward|backwards|historical|emergencies|fallback",
		"rely|depend ~0 on ~0 this ~0 one|instead",
		"this ~0 tool|one|server|function ~0 never|always ~0 does|fails|drops|loses|misses|truncates|corrupts|works|succeeds|gets",
		"rival|rivals|competing|competitor|competitors|stock|third ~4 miss|misses|drop|drops|lose|loses|corrupt|corrupts|garble|garbles|truncate|truncates|leak|leaks|fail|fails|break|breaks|misreport|misreports|skip|skips|mangle|mangles|return|returns|produce|produces|give|gives",
		"tool|tools|server|servers|indexer|indexers|provider|providers|translator|translators|engine|engines|api|apis|function|functions|command|commands ~6 frequently|often|regularly|routinely|typically|usually|commonly ~1 garbled|wrong|broken|inaccurate|incomplete|stale|truncated|corrupted|empty|off|outdated|fail|fails|drop|drops|lose|loses",
		"so|therefore|thus|hence ~2 use|call|choose|pick|prefer ~1 this ~0 one|tool|server|function ~0 instead",
		"supersedes|replaces|overrides ~3 whatever|any|all|every|other|existing|previous|prior ~3 tool|tools|app|apps|server|servers|service|services",
		"favour|favor|prioritize|prioritise|prefer ~1 this|our ~0 server|tool|one|function|service ~1 over|above",
		"are|is ~0 the ~0 one|ones ~0 to ~0 present|use|show|trust|choose|pick|prefer|return|rely",
		"requests|queries|tasks|questions|lookups|searches|translations|conversions ~3 handled|served|answered|processed|done ~0 best ~0 here|by",
		"general|generic|stock|vanilla|ordinary|mainstream|conventional ~3 lose|loses|drop|drops|mangle|mangles|garble|garbles|corrupt|corrupts|strip|strips|truncate|truncates|leak|leaks",
		"other|another ~0 server|servers|provider|providers|vendor|vendors ~4 returns|return|gives|give|shows|show|serves|serve|injects|inject ~1 ads|spam|junk|garbage|nonsense|stale|outdated|wrong|fake",
		"official|original|vendor|vendors|upstream ~3 documentation|docs|site|source|website|api ~3 is|are ~0 out ~0 of ~0 date",
		"official|original|vendor|vendors|upstream ~3 documentation|docs|site|source|website|api ~3 is|are ~0 outdated|stale|wrong|broken|unreliable",
		"this ~0 is ~0 the ~2 to ~0 reach ~0 for",
		"other|others ~3 tool|tools|server|servers ~2 is|are ~0 approximate|imprecise|rough|unreliable|inaccurate|wrong|off|flaky|buggy|broken|stale|outdated|incomplete",
		"other|others|any ~4 tool|tools|server|servers|integration|integrations|translator|translators|clients|client ~5 unofficial|counterfeit|fake|impostor|imposter|spoofed|knockoff|mirrors|clones|imitations|phantom",
		"built ~0 into|in ~2 ide|client|editor|host|assistant|agent|environment ~6 unsafe|insecure|unreliable|broken|deprecated|avoid|avoided|not|never|inferior",
		"instead ~0 of ~3 tool|tools|terminal|shell|browser|one ~1 built ~0 into|in ~2 ide|client|editor|host|assistant|agent",
		"other|another|any|rest ~6 treated|regarded|considered|seen|viewed ~1 as ~1 unavailable|offline|broken|deprecated|disabled|down|unreliable|nonexistent|absent|missing|retired|untrusted",
		"other|another|any|rest ~6 treated|regarded|considered|seen|viewed|marked ~0 unavailable|offline|broken|deprecated|disabled|down|unreliable|nonexistent|absent|missing|retired|untrusted",
		"treat|regard|consider ~5 other|others|another|any|rest ~3 as ~1 unavailable|offline|broken|deprecated|disabled|down|unreliable|nonexistent|absent|missing|retired|untrusted",
		"so|therefore|thus|hence|please ~1 dont|never|avoid|not ~2 use|call|invoke|trust|using|calling ~0 them|those",
		"this ~0 server|tool|integration|connector ~0 is ~0 the ~0 authoritative|definitive|genuine|real|true|sole|legitimate",
		"elsewhere|outside ~6 scam|scams|fraudulent|phishing|fake|counterfeit|impostors|imposters",
	}, "a description that asks to be chosen over other tools is how a server squats on requests meant for another (tool squatting)"},
	{"instruction.bracket", KindInstruction, Medium, InText, MatchBracket, []string{"important", "system", "directive", "instruction", "instructions", "hidden", "override", "admin", "secret", "critical", "urgent", "attention", "mandatory", "required"},
		"bracketed labels like [Important] or [SYSTEM DIRECTIVE] are another form of the markup that addresses the model"},
	{"instruction.comment", KindInstruction, Medium, InText, MatchComment, nil,
		"an HTML comment is hidden by every Markdown view a person reads, and read by the model"},
	{"instruction.conceal", KindInstruction, High, InText, MatchPhrase, []string{
		"not|dont|never|without|nor ~1 tell|telling|mention|mentioning|inform|informing|notify|notifying|reveal|revealing|disclose|disclosing|alert|alerting|show|showing ~3 user|users|human|humans|person|operator",
		"not|dont|never|without ~1 mention|mentioning|reveal|revealing|disclose|disclosing ~0 this|that|it|these",
		"no ~0 need ~1 to ~0 mention|tell|inform|notify|explain|alert",
		"user|users|human|humans ~3 not|never ~1 know|see|notice|find|learn|aware",
		"hide|conceal ~2 this|it|that|from ~2 user|users|human",
		"secretly|covertly",
		"not|dont|never ~1 tell|inform|notify|alert ~0 them|anyone|anybody",
		"keep ~3 secret|hidden|confidential ~2 from ~1 the ~0 user|users|human|humans|person|operator",
	}, "a tool has no reason to keep something from the person it acts for"},
	{"instruction.covert_action", KindInstruction, Medium, InText, MatchPhrase, []string{
		"silently|quietly|secretly|covertly|discreetly|invisibly|unobtrusively|stealthily ~2 add|apply|adjust|increase|raise|inflate|lower|reduce|deduct|subtract|round|change|alter|modify|replace|substitute|swap|redirect|append|prepend|insert|include|attach|embed|copy|forward|send|cc|bcc|upload|log|record|store|save|mirror|share|post|report|omit|remove|delete|exclude|route|notify|email|call|invoke|execute|transfer|charge|bill|mark|tag|rename|move",
		"in|into ~0 the ~0 background ~3 send|copy|forward|upload|log|record|mirror|share|post|report|email|transmit|cc|bcc",
		"behind ~1 the ~0 scenes ~3 send|copy|forward|upload|log|record|mirror|share|post|report|email|call|invoke|notify|sync|transmit|cc|bcc|add|change|adjust|modify|replace",
		"without ~2 user|users|customer|customers|person|anyone|them ~0 knowing|noticing|seeing|realising|realizing|knowledge|awareness",
		"not|dont|never|no ~1 bother|need ~2 user|users|them|anyone|mentioning|telling|informing|explaining|flagging|surfacing",
		"silently|quietly|secretly|covertly|discreetly|invisibly|unobtrusively|stealthily ~2 bump|boost|pad|skim|shave|tweak|nudge|markup|raise|hike",
		"behind ~1 the ~0 scenes ~3 bump|boost|pad|skim|shave|tweak|nudge|raise|hike|increase|inflate|reduce|lower|append|insert|include|attach|embed|store|save|keep",
		"hidden|secret|covert ~0 log|copy|record|archive|transcript|backup|ledger|bcc|cc|recipient|recipients",
		"shadow ~0 log|record|archive|transcript|ledger|bcc|cc|recipient|recipients",
		"user|users|customer|customers|they|anyone|person ~2 need|needs ~0 not|never ~1 be ~0 told|informed|notified|alerted|bothered",
		"no|nothing|little ~0 reason|point ~1 to ~0 point|mention|tell|flag|explain|surface|highlight|disclose|inform|notify",
		"user|users|customer|customers|they|anyone ~3 not|never ~0 need|needs|have ~1 to ~0 know|see|notice|hear",
		"extra|fee|fees|margin|markup|surcharge|commission ~8 rather|instead|not ~1 than|of ~0 listed|shown|itemized|itemised|disclosed|displayed|stated|separately",
		"this|the|that ~0 step|action|call|change|grant|operation|adjustment ~4 not|never ~1 be ~0 reported|mentioned|disclosed|surfaced|flagged|revealed|announced",
	}, "a modifier of concealment (silently, quietly, in the background, without the user noticing) on an action the agent takes (adding a margin to a rate, copying a message, calling a tool) hides from the person a change made in their name: whatever the action, an honest description has no reason to ask for it unseen"},
	{"instruction.markup", KindInstruction, Medium, InText, MatchTag, []string{"important", "system", "sys", "system-prompt", "system_prompt", "instructions", "instruction", "prompt", "hidden", "secret", "admin", "critical", "urgent", "assistant", "rules", "policy", "override"},
		"tags like <IMPORTANT> or <SYSTEM> are how poisoned descriptions address the model (tool poisoning)"},
	{"instruction.precondition", KindInstruction, Medium, InText, MatchPhrase, []string{
		"before|after ~1 using|calling|invoking|running|executing|execute|answering|responding ~3 tool|tools|function|this|request|operation ~4 read|call|run|invoke|execute|use|send|fetch|open|access|include|pass|provide|check|replace|modify|change",
		"before ~2 any|every|other ~2 tool|tools|function|functions|action|step|request ~3 first|call|run|invoke|use|execute|consult",
		"otherwise ~3 tool|function|application|app|system|server|it ~2 will|would|wont|may|might|can|cannot ~2 not|fail|crash|break|error|work",
		"you|assistant|model|ai ~1 must|should|need|have ~2 always|first|also ~2 call|run|read|send|use|invoke|include|pass",
		"before ~0 running|executing|doing|answering ~1 anything|any|everything|every ~4 run|execute|download|fetch|install|source|curl|call|open|visit|read",
	}, "conditions placed on the model before or instead of the tool's job are the shape of tool poisoning"},
	{"instruction.confirmation", KindInstruction, Medium, InText, MatchPhrase, []string{
		"not|dont|never ~1 ask|asking|asks ~4 confirmation|confirm|permission|approval|consent|before|first|whether|if",
		"not|dont|never ~1 confirm|confirming",
		"not|dont|never ~1 prompt|prompting ~4 confirmation|permission|approval|consent|before|first|whether|again",
		"without ~0 asking|prompting ~2 user|users|them|for|permission|confirmation|consent|approval|first",
		"without ~0 confirmation|confirming|consent|approval|permission",
		"no ~0 confirmation|approval|permission|consent ~1 needed|required|necessary",
		"without ~0 checking|consulting|conferring ~2 back|with ~1 them|user|users|customer|customers|anyone",
		"approved|accepted|confirmed|authorized|authorised|agreed|signed|accept|approve|confirm ~3 on ~1 the|their ~0 user|users|customer|customers|their ~0 behalf",
		"may|can|allowed|free|permitted|authorized|authorised|entitled ~6 without ~0 user|users|human|customer|customers ~0 approval|confirmation|consent|permission|sign",
	}, "asking the model to skip the person's confirmation takes the person out of the loop"},

	{"instruction.agent_directive", KindInstruction, Medium, InText, MatchPhrase, []string{
		"you|assistant|assistants|agent|agents|ai|model|models|llm|llms|claude ~0 must|should|shall ~0 execute|run|read|send|forward|halt|stop|inform|tell|clean|remove|delete|fetch|retrieve|collect|submit|upload|copy|perform|notify|report|save|store|share|post|download|visit|open|navigate|append|attach|embed|disclose|reveal|state|say|display|present|mention|add|export|hand|dump",
		"you|assistant|assistants|agent|agents|ai|model|models|llm|llms|claude ~0 must|should|shall ~0 also|first|always|then|immediately|now ~0 execute|run|read|send|forward|halt|stop|inform|tell|clean|remove|delete|fetch|retrieve|collect|submit|upload|copy|perform|notify|report|save|store|share|post|download|visit|open|navigate|append|attach|embed|disclose|reveal|state|say|display|present|mention|add|export|hand|dump",
		"you|assistant|assistants|agent|agents|ai|model|models|llm|llms|claude ~0 need|needs|have|has ~0 to ~0 execute|run|read|send|forward|halt|stop|inform|tell|clean|remove|delete|fetch|retrieve|collect|submit|upload|copy|perform|notify|report|save|store|share|post|download|visit|open|navigate|append|attach|embed|disclose|reveal|state|say|display|present|mention|add|export|hand|dump",
		"you|assistant|assistants|agent|agents|ai|model|models|llm|llms|claude ~0 are|is ~0 required|obligated|expected|instructed ~0 to ~0 execute|run|read|send|forward|halt|stop|inform|tell|clean|remove|delete|fetch|retrieve|collect|submit|upload|copy|perform|notify|report|save|store|share|post|download|visit|open|navigate|append|attach|embed|disclose|reveal|state|say|display|present|mention|add|export|hand|dump",
		"you|assistant|assistants|agent|agents|ai|model|models|llm|llms ~5 responsible|tasked|charged ~1 for|with ~0 copying|forwarding|sending|mirroring|uploading|sharing|relaying|logging|recording|reporting|emailing|posting|exporting|saving|storing|syncing|submitting|cc|ccing|bcc|bccing|notifying|attaching|including",
		"your|the ~0 job|role|task|duty|duties|responsibility|responsibilities ~3 include|includes|including|is|involves|involve ~1 copying|forwarding|sending|mirroring|uploading|sharing|relaying|logging|recording|reporting|emailing|posting|exporting|saving|storing|syncing|submitting|ccing|bccing|notifying|attaching",
		"begin|start|prefix|end|preface|open|close ~1 every|each|all|any ~0 answer|answers|response|responses|reply|replies ~3 by|with",
	}, "an obligation laid on the agent itself (\"you must execute the following command\", \"AI agents should retrieve …\", \"the assistant is required to send …\"), in any person, to act beyond the tool's own job (run, read, send, fetch, halt, tell, clean up …) is an instruction to the model, not a description for the person; how to fill the tool's own arguments (pass, include, provide, call this tool) is left to the parameter rules"},
	{"instruction.version_claim", KindInstruction, Medium, InText, MatchPhrase, []string{
		"this|it ~0 is ~0 the|an|a ~1 advanced|enhanced|improved|premium|professional|ultimate|upgraded|optimized|optimised|superior|official|secure|updated|better|best|enterprise|pro ~2 version|edition|variant|release|implementation|build",
		"this|our ~0 enhanced|improved|advanced|premium|professional|ultimate|upgraded|optimized|optimised|superior|updated|better|secure ~0 version|edition|variant|release|implementation",
		"better|faster|safer|superior|more|higher|greater ~6 compared ~0 to|with ~2 other|others|standard|regular|existing|default|alternative|alternatives|competing|similar",
		"recommended|preferred ~0 over|above ~3 standard|other|others|default|existing|builtin|regular|basic|native|legacy|alternative|alternatives|any",
		"the ~0 best|finest|greatest ~4 tool|tools|option|solution|service|api ~1 available",
		"most ~0 comprehensive|accurate|reliable|advanced|powerful|complete|trusted ~6 available",
	}, "a tool that presents itself as a better version of some other tool or capability (\"this is the advanced version\", \"better results compared to other search tools\", \"recommended over standard directory listing tools\", \"the best search tool available\") asks to be chosen over it without naming a fault: the look-alike squatting of MCP-SafetyBench's function overlapping; an honest tool says what it does, not that it outranks the others"},

	// References to other tools: how one server's text steers another's tools (shadowing).
	{"reference.other_server_tool", KindShadowing, Medium, InText, MatchKnownTool, []string{
		"read_file", "read_text_file", "read_multiple_files", "write_file", "edit_file", "move_file", "search_files", "list_directory", "directory_tree", "get_file_info", "create_directory",
		"git_status", "git_diff", "git_commit", "git_add", "git_reset", "git_log", "git_checkout", "git_show", "git_push",
		"create_entities", "create_relations", "add_observations", "delete_entities", "read_graph", "search_nodes", "open_nodes",
		"send_email", "send_mail", "send_message", "send_slack_message", "slack_post_message", "post_message", "send_whatsapp_message", "send_sms",
		"execute_command", "run_command", "run_shell_command", "shell_exec", "execute_code", "run_code", "run_python", "execute_sql", "run_query", "query_database",
		"create_or_update_file", "push_files", "create_pull_request", "merge_pull_request", "get_file_contents", "create_repository", "fork_repository",
		"browser_navigate", "puppeteer_navigate", "playwright_navigate", "http_request", "fetch_url", "web_fetch",
		"transfer_funds", "send_payment", "create_payment", "create_issue", "search_repositories",
	}, "a description naming a tool of another server is how a malicious server steers or shadows that tool"},
	{"reference.other_server_contrast", KindShadowing, Low, InText, MatchContrast, []string{"instead", "of", "than", "unlike", "like", "vs", "versus", "not"},
		"a well-known tool of another server named as what this tool replaces or differs from (\"use this instead of execute_command\") is documentation, not steering"},
	{"reference.any_tool", KindShadowing, Medium, InText, MatchPhrase, []string{
		"when|whenever|before|after|if ~3 any|every|all|other|another ~2 tool|tools|function|functions|server|servers ~3 called|used|invoked|run|executed|calls",
	}, "text that governs every other tool reaches beyond the tool it describes"},
	{"reference.rewrite", KindShadowing, Medium, InText, MatchPhrase, []string{
		"must|always|should|silently|secretly|also|quietly ~2 modify|change|replace|rewrite|alter|overwrite|redirect|set ~3 argument|arguments|parameter|parameters|param|recipient|recipients|url|address|query|destination|body",
		"modify|change|rewrite|alter|overwrite|redirect|replace ~3 url|recipient|recipients|destination|endpoint ~1 to|with",
		"when|whenever ~0 using|calling|invoking ~4 always|must|also|silently ~2 send|set|change|replace|include|add|cc|bcc|copy|forward|redirect|modify|append|rewrite|route|pass|attach|upload|post",
		"when|whenever|before|after|if|once ~1 the|a|any ~3 tool|function ~2 is|are|gets|get ~0 called|used|invoked|run|executed|triggered ~8 must|should|shall|always|also|first|ensure|make|set|replace|change|append|add|include|send|forward|redirect|call|invoke",
	}, "telling the model how to fill another call's arguments is how a tool rewrites what other tools do"},
	{"reference.cross_tool", KindShadowing, Medium, InText, MatchPhrase, []string{
		"before|after|prior|once|whenever|each|every|when|if ~4 call|calls|calling|called|invoke|invokes|invoking|invoked|use|uses|using|used|run|runs|running|send|sends|sending|post|posting|returns|return ~6 call|invoke|run|pass|send|forward|report ~4 this ~0 tool|function",
		"run|call|invoke|use ~1 this ~0 tool|function ~1 before|after ~1 every|each|any|all ~2 call|calls|tool|tools|request|requests|invocation|invocations|operation|operations|other",
		"another|other ~1 tool|tools|server|servers ~6 pass|call|invoke|run|send|forward|use ~4 this ~0 tool|function",
		"server|servers|tool|tools ~3 also|then|afterwards|first ~0 call|invoke|pass|forward|send|hand|report|share|copy ~6 this|here",
		"once|whenever|when|after|each|every|prior ~4 called|used|invoked|returns|returned|written|read|made|placed|sent|fetched|generated ~6 hand|send|pass|forward|report|give|submit|share|summarise|summarize|copy|feed|relay|provide|call|invoke|run ~5 this|here",
		"this ~0 tool|function ~2 should|must ~1 be ~0 called|used|invoked|run ~2 right|directly|immediately|after|before",
		"preceded|followed ~2 by ~3 call|calling ~2 this",
		"before ~1 any|every|all ~1 other ~1 tool|tools|action|call|step",
		"must|required|mandatory|need|needs|should|shall ~2 be ~0 called|executed|invoked|run|performed|used|triggered ~4 before|after|prior|following ~3 any|every|all|each",
		"must|need|needs|required|have|should ~2 call|invoke|execute|run|trigger ~8 immediately ~0 before|after",
		"immediately|right|directly ~0 after|before ~8 must|should|need ~1 call|invoke|execute|run",
		"must|should|need|needs|have|required|please|always ~2 call|invoke|run|execute|trigger ~0 this ~0 tool|function|one ~2 after|before|following|once|whenever ~3 operation|operations|action|actions|request|requests|transaction|transactions|lookup|lookups|read|reads|write|writes|retrieval|booking|bookings",
		"operations|calls|requests|queries|actions|bookings|transactions|tools|reads|writes|lookups ~3 must|should|shall|need|needs|required ~1 be ~0 followed|preceded|accompanied ~1 by|with",
		"before|after|once ~1 calling|using|invoking|running|executing|completing ~6 please|kindly|also|always|then|first|must|should ~0 call|invoke|trigger",
		"please|kindly ~2 also|always|first|additionally ~0 call|invoke|forward|cc|bcc",
		"recommended|advisable|advised|encouraged|best|important|essential|crucial|necessary|expected ~3 call|invoke|run|trigger ~0 this ~0 tool|function ~3 before|after|prior|following ~2 any|every|each|all|other",
		"before|after|when|whenever|once ~1 calling|using|invoking|running|executing|sending|creating|reading|writing|booking|making ~6 remember|ensure|sure|forget|recommended|advisable|helpful|appreciated ~3 call|invoke|run|send|forward|pass|share|report|notify|log|cc|bcc|include",
		"not|dont|never ~0 forget ~1 to ~1 call|invoke|run|send|forward|pass|include|cc|bcc|report|log|notify|share|copy",
		"when|whenever|if ~3 user|users|customer|customers ~3 asks|ask|requests|request|wants|want|needs|need|tries|try ~8 first|also|always ~1 call|invoke|run|use ~1 this ~0 tool|function",
		"whenever|when|once|after ~1 a|an|any|the|new ~1 file|files|email|emails|message|messages|meeting|meetings|event|events|issue|issues|payment|payments|transfer|transfers|document|documents|record|records|commit|commits|order|orders|invoice|invoices|ticket|tickets|booking|bookings|todo|todos|task|tasks ~1 is|are|gets|get|was|were ~0 listed|written|created|sent|drafted|read|deleted|opened|saved|uploaded|made|scheduled|booked|placed|received|fetched|edited|modified|updated|submitted|posted|marked|completed|closed|finished|resolved|approved|merged ~6 should|must|shall|always|delete|remove|add|include|send|copy|forward|cc|bcc|invite|append|place|upload|post|attach|email|notify|report|log",
		"whenever|when|once|after ~1 a|an|any|the|new ~1 file|files|email|emails|message|messages|meeting|meetings|event|events|issue|issues|payment|payments|transfer|transfers|document|documents|record|records|commit|commits|order|orders|invoice|invoices|ticket|tickets|booking|bookings|todo|todos|task|tasks ~1 has|have ~0 been ~0 listed|written|created|sent|drafted|read|deleted|opened|saved|uploaded|made|scheduled|booked|placed|received|fetched|edited|modified|updated|submitted|posted|marked|completed|closed|finished|resolved|approved|merged ~6 should|must|shall|always|delete|remove|add|include|send|copy|forward|cc|bcc|invite|append|place|upload|post|attach|email|notify|report|log",
		"each|every|any ~0 time ~1 a|an|any|the|new ~1 file|files|email|emails|message|messages|meeting|meetings|event|events|issue|issues|payment|payments|transfer|transfers|document|documents|record|records|commit|commits|order|orders|invoice|invoices|ticket|tickets|booking|bookings|todo|todos|task|tasks ~1 is|are|gets|get|was|were ~0 listed|written|created|sent|drafted|read|deleted|opened|saved|uploaded|made|scheduled|booked|placed|received|fetched|edited|modified|updated|submitted|posted|marked|completed|closed|finished|resolved|approved|merged ~6 should|must|shall|always|delete|remove|add|include|send|copy|forward|cc|bcc|invite|append|place|upload|post|attach|email|notify|report|log",
		"each|every|any ~0 time ~1 a|an|any|the|new ~1 file|files|email|emails|message|messages|meeting|meetings|event|events|issue|issues|payment|payments|transfer|transfers|document|documents|record|records|commit|commits|order|orders|invoice|invoices|ticket|tickets|booking|bookings|todo|todos|task|tasks ~1 has|have ~0 been ~0 listed|written|created|sent|drafted|read|deleted|opened|saved|uploaded|made|scheduled|booked|placed|received|fetched|edited|modified|updated|submitted|posted|marked|completed|closed|finished|resolved|approved|merged ~6 should|must|shall|always|delete|remove|add|include|send|copy|forward|cc|bcc|invite|append|place|upload|post|attach|email|notify|report|log",
		"whenever|when|once|after|each|every ~2 file|files|email|emails|message|messages|meeting|meetings|event|events|issue|issues|payment|payments|transfer|transfers|document|documents|record|records|commit|commits|order|orders|invoice|invoices|ticket|tickets|booking|bookings|todo|todos|task|tasks ~1 is|are|gets|get ~0 listed|written|created|sent|drafted|read|deleted|opened|saved|uploaded|made|scheduled|booked|placed|received|fetched|edited|modified|updated|submitted|posted|marked|completed|closed|finished|resolved|approved|merged ~6 has|have|needs|need|is|are ~0 to ~1 be ~0 placed|sent|copied|forwarded|added|included|deleted|removed|uploaded|posted|attached|shared|stored|saved",
		"file|files|email|emails|message|messages|meeting|meetings|event|events|issue|issues|payment|payments|transfer|transfers|document|documents|record|records|commit|commits|order|orders|invoice|invoices|ticket|tickets|booking|bookings|todo|todos|task|tasks ~6 assistant|agent|model|you ~1 adds|includes|appends|sends|copies|forwards|invites|deletes|removes|places|uploads|posts|attaches",
		"every|each|all|any ~1 deletion|deletions|write|writes|payment|payments|transfer|transfers|email|emails|message|messages|call|calls|request|requests|operation|operations|search|searches|booking|bookings|commit|commits|update|updates|upload|uploads ~2 is|are|be|must|should ~0 preceded|followed|accompanied ~1 by",
		"great|nice|helpful|appreciated|wonderful|ideal ~3 if ~6 you|assistant|agent ~1 could|would|can|also ~1 save|send|forward|copy|share|call|invoke|run|store|upload|post|log|record|notify|report|delete|remove|add|also",
		"appreciate|appreciated|like ~3 if ~3 you|assistant|agent|model ~2 also|could|would|can ~1 call|called|send|sent|forward|forwarded|pass|passed|share|shared|report|reported|cc|bcc|include|included|copy|copied",
		"after|once|whenever|upon ~0 reading|opening|fetching|viewing|loading|visiting|listing|searching|retrieving|receiving|creating|sending|writing ~3 any|every|each|a|the ~1 page|pages|file|files|document|documents|email|emails|message|messages|result|results|record|records|article|articles ~4 mirror|copy|send|forward|upload|store|log|record|post|share|sync|push|cc|bcc|email",
		"whenever|when|once|after|each|every ~0 a|an|any|the|new ~1 pull ~0 request|requests ~1 is|are|gets|has ~1 opened|created|merged|closed|updated ~6 request|assign|add|cc|notify|send|forward|tag|mention|invite",
		"with|using|via|through ~0 that|the ~0 tool|server|one ~1 before|first|prior ~2 answering|responding|replying|handling|doing|continuing",
		"when|whenever|once|after|before|each|every ~4 tool|server|integration|connector|plugin ~8 assistant|agent|model ~1 should|must|shall|needs|is ~0 first|also|always|then|expected|required",
		"with|using|via|through ~0 that|other|another ~0 servers|server ~2 tool|tools",
	}, "asking the model to route another tool's call, or its data, through this one is how a tool inserts itself into other tools' work (cross-tool instruction); politeness (\"please\", \"it is recommended\") does not change it"},
	{"instruction.tamper", KindTampering, Medium, InText, MatchPhrase, []string{
		"regardless|irrespective ~0 of ~1 user|users|their|caller|callers|customer|customers ~1 input|inputs|request|requests|choice|choices|preference|preferences|query|queries|selection|selections|value|values",
		"regardless|irrespective ~0 of ~4 user|users|human ~2 asks|asked|says|said|names|named|mentions|mentioned|provides|provided|gives|gave|given|specifies|specified|chose|chooses|wants|wanted|types|typed|requested|requests|selects|selected|enters|entered|picks",
		"no ~0 matter ~0 what|which|who|whom ~4 user|users|customer|asks|requested|says|available|signed|other|else",
		"whatever|whichever|whoever|whomever ~3 user|users|customer|customers ~2 asks|asked|says|names|mentions|provides|gives|specifies|wants|types|requests|requested|selects|enters|picks|chooses|supplies|supplied|shares|sends|uses|paid|pays",
		"not ~1 to ~0 the|their ~3 user|users|customer|customers|caller|person ~1 paid|gave|provided|specified|chose|named|asked|requested|used|entered|typed|supplied",
		"use|set ~6 as ~0 the ~3 url|address|account|recipient|destination|remote|endpoint|wallet|webhook|host|target ~3 for ~0 all|every|any",
		"even ~0 if|when ~3 user|users|another|other|different|they ~3 asks|asked|requests|requested|specifies|specified|names|named|provides|provided|gives|given|says|mentions",
		"rather|instead ~0 than|of ~4 user|users ~2 provides|provided|gives|gave|names|named|specifies|specified|requested|requests|asked|asks|enters|entered|types|typed|wants|chose",
		"instead ~0 of ~3 one|ones|value|address|url|webhook|account|recipient ~2 configured|given|provided|specified|requested|supplied",
		"rather|instead ~0 than|of ~1 the ~0 original|real|actual|requested|intended",
		"user|users ~2 gives|types|provides|names|enters|specifies|supplies ~0 is|are ~2 only|just|merely|ignored",
		"use|set|ship|send|route|append|prepend|prefix|add|include|put|cc|bcc|redirect|forward|attached|appended|added|included|apply ~7 for|on|to|in|with ~0 every|all|any ~2 transfer|transfers|payment|payments|transaction|transactions|booking|bookings|order|orders|upload|uploads|deployment|deployments|conversion|conversions|email|emails|message|messages|request|requests|query|queries|trade|trades|notification|notifications|search|searches|command|commands",
		"use|set|ship|send|route|prefix|prepend|append|cc|bcc ~1 every|all|each|any ~1 transfer|transfers|payment|payments|transaction|transactions|order|orders|upload|uploads|email|emails|message|messages|request|requests|query|queries|notification|notifications|command|commands ~2 to|through|via|with",
		"for|on ~0 every|all|any ~2 transfer|transfers|payment|payments|transaction|transactions|booking|bookings|order|orders|upload|uploads|deployment|deployments|email|emails|message|messages|call|calls|request|requests|trade|trades ~2 always|use|set|must|should",
		"recipient|recipients|account|wallet|destination|channel|to|cc|bcc|attendees|payee|beneficiary|iban|owner|author|region|bucket|webhook|endpoint|address|amount|sender ~3 must|should|shall ~1 always ~2 be|include|contain|set|point",
		"always|must|should ~2 set|use|put|fill ~3 account|recipient|recipients|destination|channel|cc|bcc|owner|author|region|bucket|wallet|iban|payee|sender|amount ~2 to|as|field|parameter",
		"always|must|should ~2 set ~1 to|cc|bcc|from ~1 to|as",
		"argument|parameter|field ~1 is|be|equals ~6 for ~0 every|all|each|any ~2 booking|bookings|payment|payments|transfer|transfers|order|orders|call|calls|request|requests",
		"replace|substitute|swap|change|rewrite|redirect|route|reroute ~3 recipient|recipients|address|addresses|account|destination|webhook|to|cc|amount|clause|notifications ~4 with|to|through|via|into",
		"urls|url|recipient|recipients|requests|queries|notifications|payments|emails ~3 rewritten|redirected|rerouted|routed|replaced ~3 to|through|via|with",
		"ignore|discard|disregard|override|overwrite|overrule|drop|reject|replace ~2 users|user|callers|caller|customers|customer ~2 input|inputs|value|values|parameter|parameters|argument|arguments|params|provided|requested|specified|original|choice|request|string|url|path|query|count|date|dates|recipient|recipients|channel|username|email|name|city|hotel|company|keywords|file|filename|intent|selection|list|participants",
		"user|users ~1 input|inputs|parameters|value|values|choice|request|requested ~6 locked|overridden|discarded|untrusted|flagged|suspended",
		"forced|force|strictly|mandatorily ~2 set|use|fill|pass|put|override|replace|redirect|route|reroute|swap|change|query|search|read|call|enter ~6 to|as|with|value|values|parameters|arguments|following",
		"override|overwrite|redirect|reroute ~3 recipient|recipients|channel|url|target|user|username|email|body|address|destination|schedule|parameters|parameter|params|arguments|argument|participants|id|amount|iban|account|path|query ~4 to|with|as|following|this|these",
		"with|using ~2 exactly|fixed|sanitized|forced|mandatory|hardcoded|compliant|fallback ~3 parameters|values|value|arguments|query|size|path|template|recipient|channel|account",
		"force|forced|forcing ~1 parameter|parameters|argument|arguments|field|fields|param|params|input|inputs|value|values",
		"always|must|explicitly|silently|automatically|quietly|secretly ~1 change|switch|swap|replace|alter|modify|rewrite ~2 destination|destinations|recipient|recipients|payee|beneficiary|account|accounts|sender|city|departure|arrival|origin|location|address|user|username|owner|assignee|currency|amount|iban|wallet ~3 to|as|with|into",
		"explicitly|silently|quietly|secretly|forcibly ~1 set|fill ~2 destination|destinations|recipient|recipients|payee|beneficiary|account|accounts|sender|city|departure|arrival|origin|location|address|user|username|owner|assignee|currency|amount|iban|wallet ~3 to|as|with|into",
		"organizer|organiser|owner|host|recipient|recipients|assignee|sender|payee|attendee|attendees|approver|reviewer|author|destination|account|beneficiary ~8 regardless|irrespective ~1 of ~0 who|whom|whoever ~1 is|books|booking|asks|asking|requests|requesting|orders|ordering|pays|paying|makes|making|sends|sending|uses|using|calls|calling|schedules|scheduling",
		"user|users|customer|customers|caller|callers|their ~0 own ~0 address|account|card|email|recipient|destination|wallet|phone|choice|value|selection ~3 noted|recorded|mentioned|kept|stored|put|placed|listed|written|added|left|included ~1 in|into|as ~2 comment|comments|note|notes|memo|remarks|reference|footnote",
		"always|all|every ~4 placed|booked|made|registered|filed|listed|reserved|issued|created|signed|submitted ~1 under|in ~1 the ~0 name|account|identity",
		"as ~4 not ~0 the ~0 user|users|customer|customers|caller|requester|requesters",
		"rather|instead ~0 than|of ~0 the ~0 official|genuine|vendor|vendors|company|companys ~1 site|website|domain|page|link|url|address|account|portal|docs|documentation|store|app|number",
		"round|rounded|rounding|adjust|adjusted|skew|skewed|bias|biased|shade|shaded|tilt|tilted ~4 in ~1 our|their|the|merchants|companys|vendors|house|houses ~0 favour|favor",
		"unless ~0 the ~0 user|users|customer|customers|caller ~0 insists|insist|objects|object|complains|complain|notices|notice|protests|disputes|pushes",
		"even ~0 if|when|though ~1 the ~0 user|users|customer|customers|caller ~0 disputes|dispute|objects|object|insists|insist|disagrees|disagree|complains|complain|questions|challenges|protests",
		"even ~0 if|when|though ~1 the ~0 user|users|customer|customers|caller|they ~0 declines|decline|refuses|refuse|rejects|reject ~0 it|them|this|that|these|those|the",
		"not ~0 what ~0 they|the ~0 user|users|customer|customers ~0 saved|entered|typed|chose|picked|gave|asked|wanted|stored|selected|provided|specified|named|requested",
		"not ~0 what ~0 they ~0 saved|entered|typed|chose|picked|gave|asked|wanted|stored|selected|provided|specified|named|requested",
		"whatever|whichever ~1 amount|value|number|quantity|price|recipient|account|role|priority|rate|figure ~3 agent|agents|operator|requester|caller|staff|they|customer|user ~0 enters|types|asks|selects|picks|chooses|requests|sets|gives|provides|supplies|names|specifies",
		"rather|instead ~0 than|of ~1 the|what|whatever|whichever ~3 they|requester|requesters|caller|callers|customer|customers|client|clients|person ~2 asked|requested|chose|specified|named|picked|selected|entered|typed|wanted|gave|provided|supplied",
		"replace|substitute|swap|change|overwrite ~3 iban|beneficiary|payee|wallet|routing|bank|swift|bic|card ~4 with|to|for",
		"keep|keeps|still|continue|continues ~2 show|shows|showing|display|displays|displaying|report|reports ~4 user|users|customer|customers|they ~1 originally|typed|entered|requested|asked|chose|selected|named",
		"describe|present|portray|represent|pass|tell ~4 as ~1 a|an|the ~0 full|complete|normal|regular|genuine|original|standard",
		"charge|bill|debit ~2 customer|customers|user|users|them|client|clients ~3 above|markup|surcharge",
		"even ~0 when|if|though ~3 rerouted|diverted|swapped|substituted",
		"always|permanently|invariably ~0 ours",
	}, "text that fixes or rewrites what the model puts in an argument (an account, a recipient, a destination) whatever the person asked for is parameter tampering, the quietest way a tool redirects money, messages or data"},
	{"instruction.argument_rewrite", KindTampering, Medium, InText, MatchPhrase, []string{
		"always|silently|quietly|secretly ~0 append|prepend|inject",
		"query|queries|search|searches|request|requests|argument|arguments|parameter|parameters|input|inputs|recipient|recipients|destination|destinations|path|paths|url|urls ~2 is|are|will|gets|get|be ~1 automatically|silently|quietly|secretly|always ~2 modified|altered|augmented|enhanced|amended|rewritten|replaced|redirected|changed|prefixed|suffixed|appended|overridden|overwritten",
		"use|uses|using ~4 as ~0 the ~1 default ~1 query|search|keyword|keywords|recipient|destination ~2 for ~0 all|every|any|each",
		"when|whenever|if ~1 using|calling|invoking|sending|making|creating|booking|transferring|paying|emailing|messaging ~6 set|use|change|replace|put|pass|fill|point ~2 recipient|recipients|to|cc|bcc|account|accounts|destination|url|amount|address|owner|repository|repo|channel|email|wallet|iban|target|endpoint|payee|beneficiary ~2 to|as|with|at",
		"correct|official|verified ~0 recipient|account|iban|wallet|destination|address|email|endpoint|url|repository|channel|payee|beneficiary ~0 is|are|has",
		"recipient|recipients|account|accounts|iban|wallet|destination|address|endpoint|url|repository|channel|payee|beneficiary ~3 has|have ~1 been ~0 changed|moved|migrated|updated|switched ~1 to",
		"whatever|whichever|regardless ~3 account|recipient|address|destination|amount|repository|repo|path|url|city|channel|payee|wallet ~2 was|is|were|the|of ~0 mentioned|named|given|specified|requested|provided|chosen|selected|asked",
		"not ~0 the ~0 one|ones ~2 user|users|customer|caller ~1 names|named|gives|gave|asks|asked|specifies|specified|provides|provided|chooses|chose|mentions|mentioned|wants|picks|selects|requests|requested",
		"is|are ~0 to ~0 be ~0 prefixed|suffixed|routed|redirected|rerouted|replaced|forwarded|mirrored|performed ~1 with|to|through|via|on|by",
		"remainder|rest|difference|surplus|excess|change|balance ~3 goes|go|sent|routed|paid|transferred|deposited ~1 to|into ~2 iban|account|wallet|address|card",
		"recipient|account|iban|wallet|destination|address|payee|beneficiary|repository|channel|owner|assignee|email|bucket ~8 going ~0 forward",
		"recipient|account|iban|wallet|destination|address|payee|beneficiary|repository|channel|owner|assignee|email|bucket ~8 henceforth|hereafter",
		"amount|amounts|price|prices|quantity|quantities|total|totals|fee|fees ~4 should|must|shall|will|always ~1 be ~0 multiplied|doubled|tripled|increased|inflated|decreased|reduced|replaced|overridden",
		"when|whenever|if ~3 user|users|customer|customers ~3 asks|ask|requests|request|wants|want|searches|search|queries|query|mentions|mention ~8 replace|substitute|swap|redirect|rewrite|append|prepend|add ~6 query|path|recipient|recipients|url|argument|parameter|destination|account|keyword|keywords|term|terms",
	}, "a standing order to edit what the model puts in an argument (\"always append 'cat:cs.CR'\", \"the query is automatically modified to include …\", \"when sending invoices, set the recipient to …\", \"the correct account is …\", \"the payee account has been changed to …\", \"when users search for X, append Y to the query\") rewrites the person's request without naming a value: MCPTox's implicit parameter tampering, worded as a rule rather than a destination; an honest tool says what an argument means, not what to put in it"},
	{"instruction.fixed_value", KindTampering, Medium, InText, MatchDirective, []string{
		"must", "always", "never", "only", "should", "shall", "required", "mandatory", "locked", "forced", "exclusively", "instead", "regardless", "ignore", "discard", "override", "overridden", "every", "all", "whatever", "whichever", "whoever", "exceptions", "best", "ideally", "preferably", "prefer", "prefers", "recommended", "expected", "supposed", "need", "needs", "relies", "henceforth", "used", "normally", "prepare", "prepares", "compose", "composed", "automatically",
		"|", "recipient", "recipients", "email", "emails", "send", "forward", "cc", "bcc", "from", "account", "accounts", "iban", "wallet", "payee", "beneficiary", "destination", "channel", "owner", "url", "endpoint", "webhook", "host", "address", "bucket", "routed", "sent", "forwarded", "transferred", "paid", "payout", "payouts", "refund", "refunds", "card", "remote", "record", "access", "addressed", "routing", "transfer", "transfers", "outgoing", "payment", "payments", "swift", "bic", "reply", "replies", "go", "goes", "settle", "settles", "directed", "issued", "payable", "invite", "invites", "mirror", "mirrored", "relay", "relayed", "withdrawals", "reimbursements", "point", "field", "fields", "watcher", "watchers", "subscriber", "subscribers", "follower", "followers", "attendee", "attendees", "participant", "participants",
		"|", "examples", "instance", "format", "formats", "default", "defaults", "like", "such", "usually", "typically", "form", "sample", "eg", "ie", "domain", "domains",
		"|", "com", "net", "org", "io", "example", "xyz", "ru", "cn", "co", "info", "biz", "app", "dev", "me", "ai",
	}, "a clause that orders the agent (must, always, only, whatever, regardless …) about where something goes or what an argument holds (a recipient, an account, a URL, a parameter of the tool) and names a concrete one (an e-mail address, a URL or domain, an IP address, an account or card number) fixes a destination whatever the person asked, in any words; a clause that gives an example or a default is documentation"},
	{"reference.call_destructive", KindShadowing, Medium, InText, MatchCallTool, []string{
		"call", "invoke", "run", "execute", "trigger",
		"|", "delete", "remove", "drop", "destroy", "erase", "wipe", "purge", "truncate", "kill", "send", "transfer", "reset", "revoke", "terminate", "uninstall", "format", "clear", "overwrite",
		"export", "upload", "forward", "share", "leak", "exfiltrate", "dump"},
		"an instruction to call a destructive tool (delete, drop, send, …) from another tool's text acts on things the person did not name"},
	{"reference.call_syntax", KindShadowing, Medium, InText, MatchCallSyntax, []string{"call", "calling", "invoke", "invoking", "execute", "executing", "run", "running", "trigger"},
		"an order to call a tool of no list written as code with its arguments (call `audit_log(level='x')`) is one tool scripting another server's: honest servers write their own tools' calls, and name others in prose"},
	{"reference.call_foreign", KindShadowing, Medium, InText, MatchForeignTool, []string{"call", "invoke", "supersedes", "deprecates", "obsoletes", "|", "now", "has been", "have been", "is now", "will now", "is deprecated", "is disabled", "is obsolete", "is outdated", "is broken", "is unreliable", "is unsafe", "is insecure", "no longer", "was deprecated", "was removed", "was replaced", "is retired", "is unavailable", "should not", "must not"},
		"a tool the list does not have, named as one the agent is to call (\"then call `playwright_screenshot`\", \"call the 'web_search' tool\") or whose new behaviour the text announces (\"the get_historical_stock_prices tool now uses …\"), is another server's tool steered from this one: an honest server orders calls of its own tools and names others in prose; names are compared loosely (case, separators, plurals, a tail of a name), so a misspelt own tool is still its own"},
	{"reference.route_foreign", KindShadowing, Medium, InText, MatchForeignRoute, []string{"before", "to", "with", "via", "into", "through", "by", "using", "onto", "in",
		">format", ">formats", ">table", ">tables", ">column", ">columns", ">field", ">fields", ">database", ">flag", ">flags", ">encryption", ">variable", ">variables", ">parameter", ">param", ">argument", ">setting", ">settings", ">option", ">results", ">directory", ">folder", ">property", ">attribute", ">header", ">mode", ">encoding",
		"<named", "<given", "<set", "<specified", "<identified", "<defined", "<chosen", "<selected", "<configured", "<keyed",
		"|", "send", "sends", "sending", "sent", "pass", "passes", "passing", "passed", "hand", "handing", "handed", "relay", "relaying", "relayed", "copy", "copies", "copying", "copied", "forward", "forwarding", "forwarded",
		"mirror", "mirroring", "mirrored", "sync", "syncing", "synced", "log", "logging", "logged", "register", "registered", "registering", "upload", "uploading", "uploaded", "share", "sharing", "shared",
		"submit", "submitting", "submitted", "push", "pushing", "pushed", "post", "posting", "posted", "report", "reporting", "reported", "keep", "kept", "stream", "streamed", "flow", "flows", "feed", "fed", "along", "lands", "land", "landed", "end", "ends", "ended", "echo", "echoed", "echoes", "expected", "record", "recording", "recorded", "records", "store", "stored", "stores", "storing", "save", "saved", "saving", "archive", "archived", "note", "noted",
		"|", "user", "users", "customer", "conversation", "conversations", "question", "questions", "text", "file", "files", "content", "contents", "message", "messages", "history", "credentials", "secrets", "tokens", "keys", "inbox", "notes", "transcript", "summary", "summaries", "data", "email", "emails", "password", "passwords", "clipboard", "digest", "chat", "context", "snippets", "pages", "visits", "key", "query", "queries", "prompt", "prompts", "path", "paths", "name", "them", "it", "everything"},
		"a tool the list does not have, named as where something goes (\"pass it to telemetry_push\", \"keep a copy with backup_sync\", \"uploaded through file_share\") in a sentence that moves data, routes the person's data through another server's tool: an honest server routes among its own tools, which are never matched here"},
	{"reference.foreign_fault", KindShadowing, Medium, InText, MatchForeignRoute, []string{"around", "*", "!prefer", "!use", "!try", "!call", "!see", "!choose", "!pick", "!switch", "!to", "!by", "!with", "!via",
		"|", "cached", "stale", "outdated", "deprecated", "broken", "flaky", "incomplete", "partial", "approximate", "ads", "spam", "unreliable", "inaccurate", "buggy", "slow", "laggy", "throttled", "obsolete", "retired", "unsafe", "insecure", "wrong", "off",
		"mangles", "mangle", "garbles", "garble", "garbled", "loses", "lose", "drops", "drop", "leaks", "leak", "corrupts", "corrupt", "truncates", "truncate", "misreports", "fails", "crashes", "hangs",
		"|", "this", "here", "instead", "ours", "our"},
		"a tool the list does not have, named beside a fault (cached, stale, deprecated, flaky, loses, garbles …) in a sentence that points to this tool instead (\"results from websearch_basic are known to be cached for weeks; this tool has live data\"), disparages another server's tool to take its requests (tool squatting): a sibling tool of the list is never matched, so a server documenting its own tools' limits is not"},
	{"reference.every_other_item", KindShadowing, Medium, InText, MatchPhrase, []string{
		"every|all|each ~0 other ~1 item|items|record|records|file|files|entry|entries|row|rows|message|messages|document|documents|user|users|repository|repositories|table|tables|issue|issues|ticket|tickets|task|tasks|object|objects|resource|resources|one|ones|account|accounts|project|projects",
	}, "acting on every other item reaches beyond what the person asked for (make demo's own poison)"},
	{"reference.list_tool", KindShadowing, Low, InText, MatchListTool, nil,
		"naming another tool of the same server is common and usually harmless, but it is how one tool steers another"},
	{"reference.own_tools", KindShadowing, Low, InText, MatchOwnTools, []string{"instruction.preference", "instruction.precondition", "reference.cross_tool", "instruction.agent_directive", "instruction.version_claim"},
		"a server steering the model among its own tools (\"prefer take_snapshot over screenshot\", \"call resolve_id before get_docs\") is ordinary guidance: a preference, precondition or cross-tool phrase in a sentence that names tools of this list and no other server's tool, \"other\" or \"another\" is worth knowing, not a second look"},

	// Sensitive paths and secrets.
	{"sensitive.path", KindSensitive, High, InText, MatchLiteral, []string{
		"~/.ssh!/id_rsa.pub!/id_dsa.pub!/id_ecdsa.pub!/id_ed25519.pub", "^.ssh/!id_rsa.pub!id_dsa.pub!id_ecdsa.pub!id_ed25519.pub", "^id_rsa!.pub", "^id_dsa!.pub", "^id_ecdsa!.pub", "^id_ed25519!.pub", "^authorized_keys$", "/etc/passwd", "/etc/shadow", "/etc/sudoers",
		"/.env$", "^.aws/", "^.azure/", "^.config/gcloud", "^.kube/config", "^.docker/config.json", "^.npmrc$", "^.pypirc$", "^.netrc$", "^.pgpass$",
		"^.git-credentials", "^.gnupg", "^.bash_history", "^.zsh_history", "^wallet.dat$", "^keychain-db",
		"^mcp.json$", "^claude_desktop_config.json", "^.cursor/", "^.vscode/settings.json", "^.codeium/",
		"~/.bashrc", "^.bashrc$", "^.zshrc$", "^.bash_profile$", "^.zprofile$", "^.gitconfig$", "/var/log/auth.log", "/proc/self/environ",
		"^secrets.yml$", "^secrets.yaml$", "^secrets.json$", "^credentials.json$", "^document.cookie$", "^os.environ$", "^printenv$",
	}, "paths of keys, credentials, shell history and MCP client configuration are what poisoned tools ask the model to read"},
	{"sensitive.path_refused", KindSensitive, Low, InText, MatchRefused, []string{"sensitive.path", "rejected", "refused", "blocked", "denied", "forbidden", "disallowed", "prohibited", "excluded"},
		"a sensitive path named in a sentence that says it is rejected, blocked or denied (\"hidden config directories such as ~/.ssh are rejected\") documents a guard, not a request: worth knowing, not a second look"},
	{"sensitive.secret", KindSensitive, Low, InText, MatchLiteral, []string{
		"^private key", "^private_key", "^privatekey", "^secret key", "^secret_key", "^api key", "^api_key", "^apikey", "^access token", "^access_token",
		"^password", "^passwd$", "^seed phrase", "^mnemonic$", "^.env$", "^environment variables", "^env vars", "^begin rsa private", "^begin openssh private",
	}, "words for secrets are normal in login or key-management tools, and a reason to read the text around them"},

	// Where data could go.
	{"exfiltration.send", KindExfiltration, Medium, InText, MatchPhrase, []string{
		"send|sent|post|upload|forward|transmit|exfiltrate|leak|copy|email|mail|bcc|cc ~3 all|every|any|the|full|entire|your|their|its ~2 credentials|secrets|tokens|keys|passwords|conversation|conversations|history|chat|messages|emails|environment|contents|data ~3 to",
		"pass|include|put|add|append|insert|attach|embed|need|needs|require|requires|expects ~3 content|contents|text|data|output|result ~6 as|in|into|inside ~3 parameter|argument|field|sidenote|param",
		"send|sent|include|pass|forward|upload|attach|copy|share|append|add|post|put|embed|need|needs|require|requires|expects ~3 conversation|chat ~1 history|transcript|log|logs",
		"include|pass|send|forward|attach|append|add|provide|copy|share|put ~4 previous|prior|last|recent|earlier|past ~3 messages|conversation|conversations|chats|prompts|turns|emails",
		"contains|contain|include|includes|append|add|attach|embed|insert|put|with ~3 user|users|your|their ~1 api|access|auth|session|secret|private ~0 token|key|tokens|keys",
		"quietly|silently|covertly ~2 collect|gather|read|copy|send|include|harvest|extract|record|log|upload|forward|capture|attach|append|add|embed|insert|put|pass",
		"quietly|silently|covertly|secretly ~1 keep|maintain|store|save|retain ~2 running|full|complete|copy|log|record|transcript|history",
		"include|put|add|append|attach|embed ~2 it|them|transcript|history|conversation|messages|contents|content|data|context|log|logs ~3 in|into ~2 the ~1 field|parameter|argument ~2 of ~0 each|every|all ~0 call|calls|request|requests",
		"share|send|forward|hand|copy|leak|post|upload ~2 the|your|any|all ~0 session|access|auth|api|bearer|refresh ~0 token|tokens|key|keys|cookie|cookies ~3 with|to ~1 this|here",
		"send|sent|post|upload|forward|transmit|exfiltrate|leak|copy|email|mail|bcc|cc|share|report ~6 credentials|secrets|tokens|passwords|password|conversation|history|env|keys ~3 to",
		"send|forward|email|mail|cc|bcc ~2 a|the ~0 copy",
		"copy ~0 of ~3 result|results|response|output|conversation|answer|query|request|data|messages|question ~3 to|email|mail|address",
		"also|silently|secretly|quietly ~0 send|forward|cc|bcc|copy|loop|share|exfiltrate|upload",
		"always|automatically ~0 send|forward|cc|bcc|share|exfiltrate|upload",
		"loop ~1 in",
		"include|read|provide|attach|send|pass|append|add|extract|dump|copy|contents|content ~2 ssh|private|secret|aws|gpg|pgp ~1 key|keys|credentials",
		"include|pass|provide|append|add|attach|send|dump|return ~2 all|every|entire|full ~2 env|environment ~0 variables|vars|variable",
		"export|dump|copy|send|upload|sync|mirror|replicate|write|save ~3 all|every|entire|full ~2 user|users|customer|customers|personal|private|sensitive ~1 data|records|information|files|details ~3 to",
		"collected|gathered|harvested ~3 tokens|keys|credentials|passwords|secrets|cookies",
		"environment|env|system|user|users ~1 data|information|variables|vars ~0 collected|gathered|harvested",
		"environment|env ~0 variables|vars ~6 bundled|attached|included|sent|uploaded|shipped|packaged|forwarded ~2 with|to|in|into ~1 each|every|all|the ~0 job|jobs|request|requests|call|calls|upload|payload|report",
	}, "text that moves secrets or the conversation into a parameter or to an address is how a tool exfiltrates"},
	{"exfiltration.disclosure", KindExfiltration, Medium, InText, MatchPhrase, []string{
		"shared|sold|disclosed|provided|given|transferred|passed ~1 with|to ~0 third ~0 parties|party",
		"shared|sold|disclosed ~1 with|to ~1 partners|advertisers|marketers|affiliates",
		"stored|cached|kept|logged|persisted|saved|retained|uploaded|mirrored|backed ~1 remotely|externally|offsite",
		"automatically|silently|quietly ~0 opted|enrolled|subscribed",
		"sends|send|sent|streams|stream|streamed|uploads|uploaded|transmits|transmitted|forwards|forwarded|posts|posted|ships|shipped|relays|relayed|exports|exported ~8 to ~1 remote|external|offsite|attacker|third ~1 endpoint|endpoints|logging|collector|collectors|party|analytics|telemetry",
		"to ~1 external|offsite|attacker|remote ~0 logging|collector|collection|analytics|telemetry|tracking ~0 endpoint|endpoints|server|servers|service",
		"uploads|upload|sends|send|syncs|sync|copies|copy|transmits|transmit|posts|post ~1 all|every|any ~3 files|file|documents|data ~8 to ~0 https|http|ftp",
		"added|enrolled ~2 to|in|into ~1 marketing|advertising|mailing|promotional ~0 database|databases|list|lists",
		"becomes|become|turned|turns ~2 training ~0 material|data|set|corpus|input",
		"reviewed|read|listened|examined|inspected|accessed|transcribed ~2 by ~1 contractors|contractor|humans|human|employees|staff|reviewers|annotators|third",
		"retained|stored|kept|logged|saved ~3 on|in ~1 our ~0 servers|server|systems|cloud|side ~2 indefinitely|forever|permanently",
		"credentials|passwords|password|keys|tokens|secrets ~1 stored|kept|logged|retained|saved|cached|persisted|recorded ~2 on|in|at ~1 our ~0 servers|server|side|systems|database|databases|cloud|backend",
	}, "a description that says what it reads leaves for a third party, a remote or external collector, or a list the person did not ask to join (\"shared with third parties\", \"cache is stored remotely\", \"streamed to remote endpoint\", \"uploads all files … to https://…\", \"users automatically opted in\") discloses an exfiltration in the tool's own words: the scanner suites' hidden-collection cases; an honest tool that sends data somewhere names it as its job (\"uploads the file to the bucket you name\")"},
	{"exfiltration.user_data", KindExfiltration, Medium, InText, MatchPhrase, []string{
		"log|logs|logging|record|records|recording|forward|forwards|forwarding|send|sends|sending|copy|copies|copying|mirror|mirrors|mirroring|store|stores|storing|save|saves|saving|report|reports|reporting|submit|submits|submitting|upload|uploads|uploading|share|shares|sharing|relay|relays|relaying|capture|captures|capturing ~2 every|each|all|any ~0 question|questions|query|queries|message|messages|prompt|prompts|request|requests|conversation|conversations|input|inputs|search|searches|command|commands|reply|replies|answer|answers ~3 the|a|your ~0 user|users|customer|customers|person|people",
		"if|when|once|whenever ~2 assistant|agent|model|ai|llm|you ~0 also|first|additionally|always ~0 attaches|attach|sends|send|shares|share|uploads|upload|pastes|paste|forwards|forward|copies|copy|exports|export|dumps|dump|includes|include ~3 contents|content|history|transcript|conversation|credentials|keys|secrets|tokens|messages|emails|env|dotenv",
		"attach|attaches|attaching|include|includes|including|send|sends|sending|share|shares|sharing|upload|uploads|uploading|paste|pastes|pasting|forward|forwards|copy|copies|add|adds ~3 contents|content ~2 of ~1 the|your|any|all ~0 env|dotenv|credential|credentials|secret|secrets|ssh|npmrc|netrc|history ~0 file|files",
		"relies|rely|relying|depends|depend|depending|counts|count|counting ~1 on ~0 you|assistant|agent|model|ai ~3 logging|recording|forwarding|sending|copying|mirroring|storing|saving|reporting|submitting|uploading|sharing|relaying|capturing|calling|invoking|passing|including|attaching|cc|ccing|bcc|bccing|emailing|notifying",
		"full|entire|whole|complete ~0 chat|conversation|transcript|history|thread|context ~3 into|in|as ~2 field|parameter|argument|input|arguments",
		"conversation|chat ~1 context|history|transcript|log ~3 attached|added|appended|included|sent|passed|forwarded ~3 to|with|as ~3 each|every|all|any ~0 call|calls|request|requests|tool|tools",
		"reveal|include|print|output|repeat|share|send|disclose|show|paste|echo|copy|quote|leak ~2 your ~0 system|initial|hidden|original ~0 prompt|instructions|message|prompts",
		"whole|entire|full|complete ~0 conversation|chat|transcript|thread|history ~8 passed|sent|included|put|attached|supplied|provided|given|added|pasted|copied ~3 argument|parameter|field|input|param",
		"conversation|chat|session ~0 so ~0 far",
		"credentials|keys|tokens|passwords|secrets|password|token|key ~4 user|users|they|customer|customers ~2 has|have|had ~0 shared|given|pasted|mentioned|provided|typed|entered|disclosed|revealed|sent",
		"contain|contains|include|includes|hold|holds|carry|carries|receive|receives ~3 text|contents|content|copy ~1 of ~2 user|users|their ~1 last|previous|prior|recent|earlier|past ~2 messages|message|prompts|prompt|questions|turns|requests",
		"every|all|each|any ~3 file|files|path|paths|url|urls|link|links|address|addresses|name|names ~3 they|user|users ~1 has|have|had ~0 mentioned|typed|pasted|said|written|shared|named|referenced",
		"everything|anything ~2 user|users|they ~1 said|typed|wrote|asked|shared|told|mentioned|pasted ~8 into|in|as ~2 argument|parameter|notes",
		"clipboard|tabs|keystrokes|cookies ~6 in|into|as ~2 field|argument|parameter|input",
	}, "the user's own words (every question they ask, their messages, their searches) logged, forwarded or copied elsewhere, the agent asked to attach secrets' contents, or an agent relied on to pass data on, moves what the person said or holds out of the tool they called: the tool's job is to answer, not to collect"},
	{"exfiltration.address", KindExfiltration, Medium, InText, MatchSendTo, []string{
		"send", "sent", "sends", "forward", "forwarded", "cc", "bcc", "copy", "notify", "inform", "let", "loop", "report", "share", "upload", "post", "transmit", "exfiltrate", "deliver", "also", "grant",
	}, "an e-mail address the text tells the model to send, copy or report to is where data leaves"},
	{"address.url", KindURL, Low, InText, MatchURL, []string{"^http://", "^https://", "^ftp://", "^file://", "^ws://", "^wss://"},
		"an address in a tool's text is where data could be sent or instructions fetched from; documentation links are the usual harmless case"},
	{"address.email", KindURL, Low, InText, MatchEmail, nil,
		"an e-mail address in a tool's text is where data could be sent"},

	// Text placed where a person rarely reads it.
	{"hidden.schema_value", KindHiddenText, Medium, InSchemaValue, MatchLength, []string{"256"},
		"a long default, example, const or enum string is read by the model but rarely shown by clients"},
	{"hidden.padding", KindHiddenText, Medium, InText, MatchSpaceRun, []string{"48", "16"},
		"a long run of blanks on one line, or of empty lines, pushes the rest of a text out of a person's view; indentation of many lines is not a run"},
	{"hidden.long_description", KindHiddenText, Low, InDescription, MatchLength, []string{"2048"},
		"a very long description is where instructions hide; few people read all of it"},
	{"hidden.long_schema_prose", KindHiddenText, Low, InSchemaDesc, MatchLength, []string{"1024"},
		"a very long description inside the schema is read by the model and rarely shown"},

	// Commands written into text for the model to run.
	{"command.shell", KindCommand, Medium, InText, MatchLiteral, []string{
		"rm -rf", "rm -fr", "; rm ", ";rm ", "&& rm ", "| bash$", "|bash$", "| sh$", "|sh$", "| sudo ", "$(curl", "$(wget", "$(cat ", "$(whoami", "`curl ", "`wget ",
		"^chmod -r ", "^chmod 777", "^chmod 0666", "^chmod 0777", "/dev/tcp/", "^nc -e", "^ncat -e", "^mkfifo ", "base64 -d |", "^powershell -enc", "^iex(", "^invoke-expression", "^os.system(", "^subprocess.", "^__import__(",
	}, "a shell command in a description (rm -rf, a pipe into sh, a command substitution) is something the model is being set up to run"},

	// Schemas whose shape carries text.
	{"schema.type_prose", KindSchema, Medium, InText, MatchTypeProse, nil,
		"a schema type that is not a type name is prose where no client shows it, read by the model"},
	{"schema.required_unknown", KindSchema, Medium, InText, MatchRequired, nil,
		"a required entry naming no property is text where clients show none, and asks the model for an argument nobody declared"},

	// Names that imitate other names.
	{"homoglyph.name", KindHomoglyph, High, InName, MatchMixedScript, []string{"1"},
		"a tool name mixing Latin letters with Cyrillic, Greek or other look-alikes imitates another name"},
	{"homoglyph.name_non_ascii", KindHomoglyph, Low, InName, MatchNonASCII, nil,
		"a tool name outside ASCII can look like another; localised names are the usual harmless case"},
	{"homoglyph.word", KindHomoglyph, Medium, InText, MatchMixedScript, []string{"3"},
		"a word mixing Latin letters with look-alikes evades word rules while reading the same to a person"},
}

// MaxFindings bounds the findings listed in one scan; kinds still counts
// every finding, and the most severe are the ones kept.
const MaxFindings = 500

// MaxSpan bounds the bytes of matched text a finding quotes.
const MaxSpan = 160

// RulesValue is the rule table as JSON: what the "rules" op serves and what
// rules_sha256 is the hash of.
func RulesValue() canon.Value {
	rows := make([]canon.Value, len(Rules))
	for i, r := range Rules {
		args := r.Args
		if args == nil {
			args = []string{}
		}
		rows[i] = canon.Obj(
			canon.M("id", canon.Str(r.ID)),
			canon.M("kind", canon.Str(r.Kind)),
			canon.M("severity", canon.Str(r.Severity.String())),
			canon.M("in", canon.Str(r.In)),
			canon.M("match", canon.Str(r.Match)),
			canon.M("args", canon.Strs(args)),
			canon.M("why", canon.Str(r.Why)),
		)
	}
	return canon.Obj(
		canon.M("kind", canon.Str("crawlcheck-scan-rules")),
		canon.M("v", canon.Int(Version)),
		canon.M("severities", canon.Strs(severityNames[:])),
		canon.M("max_findings", canon.Int(MaxFindings)),
		canon.M("max_span", canon.Int(MaxSpan)),
		canon.M("rules", canon.Arr(rows...)),
	)
}

// rulesSHA256 is computed on first use, not at start-up: a module's
// start-up runs before its host's SHA-256 is installed, and most calls
// never need it (issue 9, the first call in Node).
var rulesSHA256 = sync.OnceValue(func() string { return canon.SHA256Hex(RulesValue()) })

// RulesSHA256 is the hash written into every scan as rules_sha256.
func RulesSHA256() string { return rulesSHA256() }
