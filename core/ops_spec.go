package core

// The ops' request and result fields, declared as data: Call refuses a
// request field an op does not declare, docs/abi.md's field tables are
// generated from these declarations (TestABIFields), and every result in
// testdata/ops is checked against them (TestResultFields). One declaration
// is what the code reads, the document says and the vectors show.

// Field is one declared field of a request or a result.
type Field struct {
	Name string
	// Type is what the field holds, as docs/abi.md words it.
	Type string
	// Optional marks a request field that may be absent, or a result field
	// present only in the case Doc names.
	Optional bool
	Doc      string
}

// OpSpec declares one op.
type OpSpec struct {
	Name    string
	Summary string
	Request []Field
	Result  []Field
}

// RequestNames lists the request fields an op accepts, in declared order.
func (s OpSpec) RequestNames() []string {
	return names(s.Request)
}

func names(fs []Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

// need and may declare a field; spec_doc.go and spec_nodoc.go define them
// (the wasm module keeps only the names, which is all Call reads).

// Shared field groups.
var (
	toolSourceFields = []Field{
		may("tools", "array of tool objects", "the tool list, part of the request (give `tools` or `pages`)"),
		may("pages", "array of page strings", "the raw `tools/list` pages as received (give `tools` or `pages`)"),
		may("page_cap_reached", "bool", "with `pages`: the host stopped following `nextCursor` at its page cap"),
	}
	keyFields = []Field{
		may("key_directory", "document", "the issuer's key directory (docs/keys.md)"),
		may("operator_keys", "array of strings", "base64 Ed25519 public keys of the operator"),
	}
	// serverFields are the members of a make_lock/convert_lock/approve server.
	serverFields = []Field{
		may("url", "string", "the endpoint that answered"),
		may("protocol_version", "string", "the negotiated MCP protocol version"),
		may("info", "object", "the server's serverInfo"),
		may("client_capabilities", "object", "the capabilities the client that read the list declared in `initialize`, pinned as `server.client_capabilities`"),
	}
	// faultFields are the facts of a host's failure beside its code, in
	// continuity_check's observed and in lock_check.
	faultFields = []Field{
		may("failure_detail", "string", "with `server_unavailable` or `check_timeout`: what the host saw of the failure; with `answer_too_large`, the limit in bytes as a positive decimal integer; refused with a host fault"),
		may("failure_at", "string", "with a host fault (required): `handshake` (connecting and the handshake) or `tools/list`"),
		may("failure_page", "number", "with `failure_at` `tools/list` (required): the page, from 1"),
		may("timeout_ms", "number", "with `timeout`: the check's deadline in milliseconds, which the detail names"),
		may("failure_command", "string", "with `command_not_found` (required): the program the host could not find, as it tried to start it; the detail reads `command not found: NAME`"),
		may("exit_status", "number", "with `process_exited`: the status the server's process exited with, when the host knows it"),
		may("stderr_tail", "string", "with `process_exited`: the end of what the process wrote to its stderr (the host keeps at most its last 4096 bytes); the detail quotes its last 3 lines that are not blank, each clipped at 160 bytes (kept as written, shown through `escape_text`)"),
		may("resource_metadata", "string", "with `unauthorized` or `forbidden`: the protected resource metadata URL the server's `WWW-Authenticate` named (RFC 9728), which the detail shows escaped"),
	}
	// observedFields are the members of continuity_check's observed.
	observedFields = append([]Field{
		may("endpoint", "string", "the endpoint that answered (the `endpoint` op's string)"),
		may("protocol_version", "string", "the negotiated protocol version"),
		may("server_info", "any JSON", "serverInfo as the server sent it (give `handshake_result` instead: a server_info the strict parser refuses breaks the request, not the check)"),
		may("handshake_result", "page string", "the handshake's result (of `initialize` or `server/discover`, or the JSON-RPC response carrying it) as the server sent it, like a page: its text, `{\"base64\": …}` or an attachment. The core reads `serverInfo` and `instructions` of it; one it cannot read is the observation `handshake_malformed`, never a refused request. Not with `server_info`"),
		may("handshake", "string", "`initialize` or `server/discover`"),
		may("client_capabilities", "object", "the capabilities the checking client declared in `initialize`, as sent; a tool added or removed while they differ from the lockfile's `server.client_capabilities` says so in its detail"),
		may("pages", "array of page strings", "the raw `tools/list` pages (required without `failure`)"),
		may("page_cap_reached", "bool", "the host stopped at its page cap"),
		may("launched", "object", "the package the stdio command line launches, as the host resolved it from what npm installed: `{\"package\": {\"ecosystem\": \"npm\", \"name\", \"version\", \"integrity\"}}`, or `{\"not_resolved\": \"not_a_launcher\"|\"unpinned\"|\"not_installed\"|\"unreadable\", \"spec\"?: \"name@version\"}` (the spec the command line names: the pinned package at another exact version is `launched_package_changed` even before npm installs it). make_lock pins the package (the lockfile's `launched`); against a lockfile that pins one, another package, version or integrity is `launched_package_changed`, and the same package passed the same arguments is the approved server whichever path or directory launched it (docs/continuity.md)"),
		may("stray_lines", "number", "how many lines of a stdio server's stdout were no JSON-RPC message (their first byte after blanks neither `{` nor `[`: a banner, a log line) and were skipped, as the official SDK clients skip them; recorded as `observed.stray_lines` when more than 0, never an observation (docs/mcpserver.md, Stray lines)"),
		may("features", "object `{"+joinNames(featuresFields)+"}`", "the prompts, resources, resource templates and ui:// templates the host read beside the tools (docs/continuity.md, Prompts, resources and UI templates); a list absent was not read and is not compared (the record's `blind_parts` names it)"),
		may("failure", "string", "why there are no pages: a host fault the core words (`connect_refused`, `command_not_found`, `timeout`, `cancelled`, `process_exited`, `session_ended`, `session_failed`, `pages_over_cap`, `unauthorized` (HTTP 401), `forbidden` (HTTP 403); docs/continuity.md), a capture failure the core words (`list_cached`: the host's MCP SDK answered without a `tools/list` on the wire; `answer_not_captured`: it took an answer the capture did not see; recorded as `server_unavailable` with `capture_failed: ` leading the detail), `answer_too_large` (the server sent a frame past the host's answer limit, which the host cut off; recorded as `server_unavailable`, the detail worded by the core from the limit), or the classes `server_unavailable` and `check_timeout` with the host's own detail"),
	}, faultFields...)
	// logResult are the members of a record's log and of log_verify's answer.
	logResult = []Field{
		need("included", "bool", "the entry is in the tree the proof's checkpoint commits to"),
		need("index", "number or null", "the entry's index, when included"),
		need("checkpoint", "object or null", "the proof's checkpoint when it verified: `{origin, size, root_hash, key_id}`"),
		need("consistent", "bool or null", "with a kept checkpoint: the two are of one history (null: none kept, or the proof failed first)"),
		need("reason", "string or null", "why not (docs/log.md)"),
		need("keep", "string or null", "the checkpoint the host keeps from now on: the larger of two consistent ones, else the one it kept"),
	}
	logVerdict = []Field{
		need("valid", "bool", "included, and consistent with any kept checkpoint"),
		need("observation", "string or null", "`log_proof_invalid` or `log_inconsistent` when not valid"),
		need("detail", "string or null", "why, in words"),
	}
	evidenceFields  = []Field{need("observation", "string", "an observation a host may report"), may("detail", "any JSON", "")}
	pinnedKeyFields = []Field{need("kid", "string", ""), need("public_key", "string", "base64 Ed25519 public key")}
	seenNonceFields = []Field{need("nonce", "string", ""), need("expires_at", "time", "")}
	lockCheckResult = []Field{
		need("kind", "string", "`crawlcheck-mcp-lock-check`"),
		need("v", "number", "1"),
		need("verdict", "string", "`unchanged`, `changed` or `unreachable`"),
		need("decision", "string", "`connect` or `block`"),
		need("lock_tools_sha256", "string or null", "the lockfile's tools_sha256 (null for an agentgate.lock)"),
		need("tools_sha256", "string or null", "the observed list's tools_sha256 (null when unreachable)"),
		need("added", "array of strings", ""),
		need("removed", "array of strings", ""),
		need("modified", "array of strings", ""),
		need("modified_detail", "array", "one `diff` entry per modified tool"),
		need("blind_parts", "array of strings", "parts the lockfile cannot see"),
		need("unreachable", "object or null", "`{reason, detail}` when nothing was compared"),
	}
)

// continuityRequestFields are the request of continuity_check and continuity_handoff.
var continuityRequestFields = concat([]Field{
	need("now", "time", ""),
	may("mode", "string", "`observe`, `review` or `enforce` (default)"),
	need("lock", "document", "the approved lockfile"),
	may("server_name", "string", "agentgate: which server"),
	need("observed", "object `{"+joinNames(observedFields)+"}`", "what the host saw of the server"),
	may("policy", "document", "the operator's policy (default: the default policy)"),
	may("expected_policy_version", "string", ""),
}, keyFields, []Field{
	may("pinned_keys", "array of `{kid, public_key}`", "issuer keys the deployment pinned: the baseline is judged by guard's rule (a pinned key the directory holds by its status and window, one it does not hold as pinned); beside `key_directory` they are read and judge nothing (the operator's copy vouches for the baseline), so a host hands its pins as configured"),
	may("fetched_key_directory", "document", "instead of `key_directory`, with `pinned_keys`: the issuer's live directory as the host fetched it at this check (`GET /api/v1/keys`), handed over as received; only its pinned keys (same `kid` and `public_key`) are kept, and one the core cannot read is `issuer_keys_invalid` (the issuer's fault: check again without it, with `issuer.step` `key_directory` and the fault `keys_invalid`, or `response_malformed` for one that is not a UTF-8 JSON object; the session engine does so itself)"),
	may("require_signed_baseline", "bool", "overrides the policy"),
	may("evidence", "array of `{observation, detail?}`", "observations from signed evidence"),
	may("issuer", "object `{url, guard?, step?, fault?, status?, timeout_ms?, unavailable?}`", "what the issuer asked said: `guard` (its answer, judged), or `step` (`key_directory` or `lock_check`) and `fault` when it gave none — `connect_refused`, `timeout` (`timeout_ms`: the consultation's deadline), `session_ended`, `http_status` (`status`: the HTTP status, a redirect included), `answer_too_large` (past `limits.issuer_answer_bytes`), `response_malformed` (a 200 answer that is not a JSON object), `keys_invalid` (a key directory the core cannot read) — which also adds the evidence `service_unavailable` with detail `{issuer, operation, step, error, fallback}`, `error` worded by the core (docs/receipts.md); `unavailable` (text only, no evidence) is the older form"),
	may("prev_record_sha256", "string", "chains the record to the one before it"),
	may("refreshed", "bool", "the one re-check a refresh effect asks for"),
	may("recheck", "object `{coalesced, held_back_ms}`", "a re-check the server's `notifications/tools/list_changed` asked for: how many notifications it covers (those since the record before, at least 1) and how long the host's rate limit held it back after the first of them (0: not held back); more than one, or held back, is a storm, which the record says (`storm`)"),
	may("log", "object `{"+joinNames(logFields)+"}`", "the issuer's transparency-log proof for the lockfile (docs/log.md); needs `key_directory`, or `pinned_keys` (with `fetched_key_directory` when the directory was fetched): the baseline's keys. A proof that does not verify adds `log_proof_invalid`, a checkpoint not consistent with the kept one `log_inconsistent`"),
})

func concat(groups ...[]Field) []Field {
	var out []Field
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// opSpecs declares every op, in the order docs/abi.md shows them.
var opSpecs = []OpSpec{
	{Name: "version", Summary: "The ABI version, the engine, the hosts' default limits and the op table.",
		Result: []Field{
			need("abi", "number", "the ABI version"),
			need("engine", "string", "`crawlcheck-core/<semver>`"),
			need("limits", "object `{answer_bytes, check_timeout_ms, issuer_answer_bytes, issuer_timeout_ms, pages, pages_bytes, pilot_ack_bytes, pilot_answer_bytes, record_log_bytes, request_bytes}`", "the bounds every host applies, read at start (docs/abi.md, Limits): one server frame (the default when the caller sets none), one check's deadline (default), one issuer answer, one consultation of the issuer (default), the pages of a check, their bytes together (past it: `pages_over_cap`), a pilot ack file and the issuer's answer to one pilot upload (`pilot_queue`), a record log read, and one request"),
			need("ops", "array of strings", "every op, sorted"),
			need("rules_sha256", "string", "SHA-256 of the canonical rule table"),
		}},
	{Name: "rules", Summary: "The rule table (observations, default effects, classes, scopes, effect order, modes, and the `evidence` table by which receipts are judged, docs/receipts.md) and the default policy.",
		Result: []Field{
			need("rules", "object", "the rule table"),
			need("rules_sha256", "string", "SHA-256 of the canonical rule table"),
			need("default_policy", "object", "the policy in force when none is given"),
			need("default_policy_sha256", "string", ""),
			need("scan_rules", "object", "the approval scan's rule table (docs/scan.md)"),
			need("scan_rules_sha256", "string", "SHA-256 of the canonical scan rule table: the `rules_sha256` of every scan"),
		}},
	{Name: "canonicalize", Summary: "RFC 8785 canonical JSON of a document, parsed strictly.",
		Request: []Field{need("json", "string", "the document's bytes")},
		Result: []Field{
			need("canonical", "string", "the canonical bytes"),
			need("sha256", "string", "SHA-256 of the canonical bytes"),
		}},
	{Name: "hash_tools", Summary: "The hashes of a tool list (docs/hashing.md).",
		Request: toolSourceFields,
		Result: []Field{
			need("count", "number", "tools read"),
			need("tools_sha256", "string", "the list hash"),
			need("agentgate_surface_hash", "string", "agentgate's whole-server hash"),
			need("tools", "array", "`{name, sha256, parts: {name, description, inputSchema, annotations}, agentgate: {nameHash, descriptionHash, inputSchemaHash}}` per tool, in list order"),
			need("pages", "number", "pages read"),
			need("truncated", "string or null", "why the list was not read whole (`page_cap_reached`, `next_cursor_unfollowed`, `cursor_repeated`), null when it was"),
		}},
	{Name: "make_lock", Summary: "A new lockfile pinning a tool list that was read whole.",
		Request: concat(toolSourceFields, []Field{
			may("format", "string", "`crawlcheck` (default) or `agentgate`"),
			may("server", "object `{url?, protocol_version?, info?, client_capabilities?}`", "crawlcheck: the server pinned"),
			may("observed", "object, as `continuity_check`'s", "instead of a tool source and `server`: the facts the host saw; the tools are its pages, and a crawlcheck lockfile pins its endpoint, protocol version and `server_info` (only when an object). One with a `failure` is `bad_request`"),
			need("approved_at", "time", "the approval time (agentgate: `generatedAt`)"),
			may("name", "string", "agentgate: the server's name (required)"),
			may("generated_by", "string", "agentgate: `generatedBy` (default: this engine)"),
			may("into", "document", "agentgate: an agentgate.lock to add the server to, or replace it in"),
			may("provenance", "object `{source, by}`", "crawlcheck: the provenance the signer states (docs/issuer.md, Trust model), written in the lockfile's signed part: `source` `observed` (only with `observed`: the signer read the server itself) or `submitted` (tools or pages handed to it), `by` `operator`, `tenant:<id>` or `anonymous` (never with `submitted`)"),
		}),
		Result: []Field{need("lock", "string", "the exact bytes to write (indented, trailing newline); a crawlcheck lockfile carries `scan_at_approval`, the `scan` answer for the same tools")}},
	{Name: "scan", Summary: "The approval scan of a tool list (docs/scan.md): the `scan_at_approval` object make_lock pins. Findings are ordered by tool (the server's instructions first, then canonical name order), part (name, description, schema, annotations, then title, outputSchema, execution, _meta, _meta.ui and unknown members, each in canonical member order), offset and rule; at most `max_findings` are listed, the most severe kept, and `kinds` counts them all. A truncated list is `bad_request`: a scan of part of a list would call the rest clean.",
		Request: concat(toolSourceFields, []Field{
			may("names", "array of strings", "tools of the list whose findings to keep (the whole list still counts for references between tools)"),
			may("instructions", "string", "the server's instructions (the handshake's), scanned first as text the model reads: their findings have `tool` \"\" and `part` `/instructions`, and `names` does not filter them"),
			may("handshake_result", "document", "instead of `instructions`: the handshake's result as the server sent it (`observed.handshake_result`), whose instructions the core reads and scans"),
		}),
		Result: []Field{
			need("findings", "array", "`{tool, part, key, offset, length, kind, rule, severity, span, hidden?}`: `part` a JSON Pointer into the tool (`/name`, `/description`, `/inputSchema/…`, `/annotations/…`, `/title`, `/outputSchema/…`, `/_meta/…`, an unknown member's name), or `/instructions` with `tool` \"\", `key` true when the text is the member name there, `offset` and `length` in bytes of the text's UTF-8, `span` the matched text (at most `max_span` bytes), `hidden` the ASCII tag characters spell"),
			need("kinds", "object", "kind → number of findings, all of them"),
			need("rules_sha256", "string", "the `scan_rules_sha256` of the rules that scanned"),
			need("severity", "string", "the highest finding's: `none`, `low`, `medium` or `high`"),
		}},
	{Name: "verify_lock", Summary: "Parses a lockfile strictly and verifies its signature; untrusted is an answer, not an error.",
		Request: concat([]Field{
			need("lock", "document", "the lockfile"),
			need("now", "time", "the time keys are judged at"),
		}, keyFields, []Field{
			may("require_signed", "bool", "refuse an unsigned lockfile (default: when operator_keys are given)"),
			may("server_name", "string", "agentgate: the server to apply the lockfile to"),
		}),
		Result: []Field{
			need("format", "string", "`crawlcheck-mcp-lock` or `agentgate.lock`"),
			need("trust", "string", "`verified`, `operator_signed`, `unsigned` or `untrusted`"),
			need("reason", "string or null", "why untrusted"),
			need("key_id", "string or null", "the key that signed it"),
			need("content_sha256", "string", "the content digest (what a record's baseline.sha256 names)"),
			need("parts", "string", "`signed`, `unsigned`, `absent`, `ignored` or `not_applicable` (agentgate)"),
			need("servers", "array of strings", "an agentgate.lock's servers (`[]` for a crawlcheck lockfile)"),
			need("server_name", "string or null", "the server the lockfile applies to: the one `server_name` names (an unknown name is `bad_request`), else the only one, else null"),
			may("sha256", "string or null", "crawlcheck: the lockfile's stored sha256"),
			may("count", "number", "crawlcheck: tools pinned"),
			may("tools_sha256", "string", "crawlcheck: the pinned list hash"),
			may("url", "string or null", "crawlcheck: the endpoint the lockfile pins (`server.url`), null when it pins none"),
			may("provenance", "object or null", "crawlcheck: the lockfile's `provenance` `{source, by}` as it states it (vouched for as far as `trust` says), null when it states none"),
		}},
	{Name: "sign_lock", Summary: "Signs a crawlcheck lockfile; a signature it had is replaced. An agentgate.lock has no signature (`lock_unsupported`).",
		Request: []Field{
			need("lock", "document", "a crawlcheck lockfile"),
			need("private_key", "string", "base64 of the 32-byte Ed25519 seed"),
			may("key_id", "string", "default: the operator key id `op_<16 hex>`"),
		},
		Result: []Field{
			need("lock", "string", "the signed file's bytes"),
			need("sha256", "string", ""),
			need("key_id", "string", ""),
		}},
	{Name: "public_key", Summary: "The public key and operator key id of a seed (the core draws no randomness: the host supplies the seed).",
		Request: []Field{need("private_key", "string", "base64 Ed25519 seed")},
		Result: []Field{
			need("public_key", "string", "base64"),
			need("key_id", "string", "`op_…`"),
		}},
	{Name: "convert_lock", Summary: "Converts between the lockfile formats where the information allows; `lost` names what the target format cannot carry.",
		Request: []Field{
			need("lock", "document", "the lockfile to convert"),
			need("to", "string", "`crawlcheck` or `agentgate`"),
			may("name", "string", "the agentgate server name (to agentgate: required; from agentgate: which server)"),
			may("server", "object `{url?, protocol_version?, info?, client_capabilities?}`", "to crawlcheck: the server pinned"),
			may("approved_at", "time", "to crawlcheck: default the agentgate.lock's generatedAt"),
			may("generated_by", "string", "to agentgate: `generatedBy`"),
			may("tools", "array of tool objects", "to crawlcheck: the tools, which must match the agentgate entry (or `pages`)"),
			may("pages", "array of page strings", "to crawlcheck: the tools as raw pages"),
		},
		Result: []Field{
			need("lock", "string", "the converted file's bytes"),
			need("lost", "array of strings", ""),
		}},
	{Name: "instructions_diff", Summary: "What one reading of a server's handshake says of its instructions beside those read before (the issuer's registry sweep, docs/issuer.md): the instructions as a check reads them, their digest (a record's `server.instructions_sha256`) and, when they differ from `old`, the word diff and the approval scan of the new text. A server that gives no instructions gives `null`, a state of its own: instructions appearing or going away is a change. A handshake the core cannot read is `malformed` and compares nothing.",
		Request: []Field{
			need("handshake_result", "page string", "the handshake's result (of `initialize` or `server/discover`, or the JSON-RPC response carrying it) as the server sent it"),
			may("old", "document", "the `instructions_json` answered for the reading before (absent: none was read)"),
		},
		Result: []Field{
			need("instructions_json", "string or null", "the instructions as canonical JSON (a string, or `null` when the server gave none): what a host keeps and hands back as `old`; null when `malformed`"),
			need("sha256", "string or null", "the SHA-256 of `instructions_json`; null when `malformed`"),
			need("malformed", "string or null", "why the handshake could not be read"),
			need("changed", "bool", "`old` was given and the instructions differ from it"),
			need("diff", "array or null", "when changed: the word diff `{op, text}` from the old instructions to the new (no instructions: no words)"),
			need("scan", "object or null", "when changed to instructions: the approval scan of the new text (findings with part `/instructions`)"),
		}},
	{Name: "diff", Summary: "What changed between an old side (a lockfile, a tool array, one `tools/list` page or `{\"pages\": [...]}`) and a new tool list (the same, never a lockfile).",
		Request: []Field{
			need("old", "document", "a lockfile, a tool array, one page, or `{\"pages\": [...]}` (the pages of one walk, each its text or the page itself)"),
			need("new", "document", "a tool array, one page or `{\"pages\": [...]}` (the whole list: a page with `nextCursor` is refused, and so are pages that end with one)"),
			may("server_name", "string", "agentgate `old`: which server"),
		},
		Result: []Field{
			need("added", "array of strings", ""),
			need("removed", "array of strings", ""),
			need("modified", "array", "`{name, parts, tool_changed, description_diff?, schema_paths?, classes?, class_evidence?}` per tool (classes: what the change introduces, strongest first, docs/scan.md, Change classes)"),
			need("unchanged", "number", ""),
			need("blind_parts", "array of strings", "parts the old side cannot see"),
		}},
	{Name: "lock_check", Summary: "The `crawlcheck-mcp-lock-check` answer: any difference blocks, and so does a list not read whole. A lockfile whose `sha256` no longer matches its content is `lock_invalid`; signatures are `verify_lock`'s business.",
		Request: concat([]Field{need("lock", "document", "the lockfile")}, toolSourceFields, []Field{
			may("server_name", "string", "agentgate: which server"),
			may("failure", "string", "instead of a tool source: a failure as `continuity_check`'s observed takes it, answered as `server_unavailable` or `check_timeout` with the detail `continuity_check` records"),
		}, faultFields),
		Result: lockCheckResult},
	{Name: "continuity_check", Summary: "The continuity check (docs/continuity.md); the result is the `crawlcheck-continuity-record`.",
		Request: continuityRequestFields,
		Result: []Field{
			need("kind", "string", "`crawlcheck-continuity-record`"),
			need("v", "number", "1"),
			need("checked_at", "time", ""),
			need("mode", "string", ""),
			need("effect", "string", "the session effect"),
			need("tools", "object", "tool name → effect"),
			may("would", "object", "observe mode: what enforce would have done"),
			need("observations", "array", "`{observation, tool, part, effect, detail, override, would?, exception?}`"),
			need("server", "object", "`{approved_url, observed_url, identity, protocol_version, handshake, info, instructions_sha256, launched?}`; `launched` `{approved, observed, not_resolved, spec, identity}` (identity `match`, `changed` or `not_compared`: docs/continuity.md, The launched package) only when the lockfile pins a launched package or the host named one"),
			need("baseline", "object", "`{format, server_name, sha256, tools_sha256, count, trust, trust_reason, key_id, approved_at, age_s, parts, coverage, blind_parts}`"),
			need("observed", "object", "`{tools_sha256, count, pages, truncated, truncation, failure, malformed}`"),
			need("policy", "object", "`{sha256, version, source, expected_version}`"),
			need("exceptions", "object", "`{applied, expired}`"),
			need("issuer", "object or null", ""),
			need("engine", "object", "`{version, rules_sha256}`"),
			may("log", "object", "when the request gave `log`: `{"+joinNames(logResult)+"}`"),
			may("storm", "object", "`{coalesced, held_back_ms}`, the request's `recheck`, when it was a storm's: more than one list_changed coalesced into this check, or the check held back"),
			may("prev_record_sha256", "string", "when the request chained it"),
			need("record_sha256", "string", "SHA-256 of the canonical record without this member"),
		}},
	{Name: "continuity_handoff", Summary: "`continuity_check` and what the host does with it (docs/continuity.md, The handoff): whether the session proceeds, stops or checks again, the exact tool objects to hand the framework (written by the core from what it hashed), the tools withheld, the names a call may reach and the instructions the model may be given. The request is `continuity_check`'s, and `tool_texts`.",
		Request: concat(continuityRequestFields, []Field{
			may("tool_texts", "bool", "false for a host that hands no tools on (a command line that prints the record): `tools` is then null and no tool object is written, nor a prompt's or resource's (`features` items keep their `key`, `item` null, so an item call on the session is judged as with texts); the rest of the answer is the same (default true)"),
		}),
		Result: []Field{
			need("record", "object", "the `crawlcheck-continuity-record`, as `continuity_check` answers it"),
			need("session", "string", "`proceed` (hand over `tools`, nothing else), `check_again` (a refresh: check once more with `refreshed`, hand over nothing before) or `stop` (pause or deny: hand over nothing, call nothing)"),
			need("tools", "array of `{name, tool}` or null", "the tools the model may be offered, in the server's order; `tool` is the JSON text to parse with the SDK's own types and hand over as it is; null when the request's `tool_texts` was false"),
			need("withheld", "array of strings", "offered tools not handed over, sorted"),
			need("calls", "object `{names, unlisted}`", "the names a `tools/call` may reach; `unlisted` true (observe mode only) lets a call to a name the list did not offer through, recorded"),
			need("instructions", "string or null", "the server's instructions the model may be given; null: give it none"),
			may("features", "object", "only when a prompts, resources or resource templates list was compared (issue 35): for each, `{items, withheld}`: `items` the `[{key, item}]` the host may hand over, in the server's order (`key` its name, uri or uriTemplate; `item` the JSON text of the object, written by the core with the members the lockfile pins one by one; null when `tool_texts` was false), `withheld` the keys of those offered and not handed over, sorted. A list not in it was not compared: hand none of it over, and refuse a `prompts/get` or `resources/read` of it"),
		}},
	{Name: "approve", Summary: "Re-approves the tools a record was made from, as a person's act. Refused (`approved` false, nothing to write) when an observation other than `unchanged`, `tool_removed` and `baseline_stale` is not about a named tool — approving one tool never approves another's change on the side, and a session observation (`server_identity_mismatch`, a list not read whole, evidence, ...) is never approvable — or when a name has no change. A record whose `record_sha256` does not match is `record_invalid`; one not made from this lock and these tools is `bad_request` (a `lock_check` answer is recomputed and must be identical). With `approve_features` it approves the prompts, resources, resource templates and ui:// templates too, as offered now (issue 35). Signing stays `sign_lock`.",
		Request: concat([]Field{
			need("record", "document", "the `continuity_check` record or `lock_check` answer made from the tools against `lock`"),
			need("lock", "document", "the lockfile the record was made against"),
		}, toolSourceFields, []Field{
			may("names", "array of strings", "the tools a person was shown and approved"),
			may("approve_instructions", "bool", "the person read the word diff of the server's instructions and approves them (`instructions_diffd`); needs `observed.handshake_result`"),
			may("approve_features", "bool", "the person read each changed prompt, resource, resource template and ui:// template with its scan and approves the lists as offered now (issue 35): each list `observed.features` holds is pinned as `make_lock` pins it (whole, or `bad_request`), a list it does not hold keeps the old lockfile's pin, and their observations (`prompt_changed`, `resource_added`, `ui_template_changed`, ...) need no name; never `features_incomplete`. Needs `observed.features`; crawlcheck lockfiles only. Without it the old lockfile's features are kept"),
			need("approved_at", "time", ""),
			may("server_name", "string", "agentgate: must be the server the record compared"),
			may("server", "object `{url?, protocol_version?, info?, client_capabilities?}`", "crawlcheck: the server to pin (default: what the record saw of it; for a `lock_check` answer, the old lockfile's)"),
			may("observed", "object, as `continuity_check`'s", "instead of a tool source and `server`: the facts the record was made from; the tools are its pages, and a crawlcheck lockfile pins the observed server as `make_lock` does. One with a `failure` is `bad_request`"),
		}),
		Result: []Field{
			need("approved", "bool", ""),
			need("lock", "string or null", "the new lockfile's bytes, of the old one's format (an agentgate.lock keeps its other servers); null when refused"),
			may("format", "string", "approved: `crawlcheck-mcp-lock` or `agentgate.lock`"),
			may("server_name", "string or null", "approved: the agentgate server replaced"),
			may("unnamed", "array of `{tool, observation}`", "refused: what no name approves (`tool` null for the session)"),
			may("not_changed", "array of strings", "refused: names with no change"),
			may("reason", "string", "refused: why, for a person"),
		}},
	{Name: "log_entry", Summary: "The transparency-log entry of a signed document (docs/log.md): canonical JSON `{kind: \"crawlcheck-log-entry\", v: 1, type, sha256, signature, subject}`, the document's kind, digest and signature and the endpoint it is about, never its tools; the issuer appends exactly these bytes.",
		Request: []Field{
			may("document", "document", "a signed lockfile or receipt (give `document` or `entry`)"),
			may("entry", "string", "an entry's text as the log holds it"),
		},
		Result: []Field{
			need("entry", "string", "the entry's bytes"),
			need("leaf_hash", "string", "base64 of SHA-256(0x00 || entry), the entry's leaf in the tree"),
		}},
	{Name: "log_verify", Summary: "Verifies a tlog-proof: its checkpoint is a signed note of the log `<key directory issuer>/log` by a directory key that may vouch at `now`, and the entry is at its index under the checkpoint's root (RFC 6962); with a kept checkpoint, that the two are consistent. Failing is an answer: `valid` false with the observation a check records.",
		Request: concat([]Field{
			may("document", "document", "the signed lockfile or receipt the proof is for (give `document` or `entry`)"),
			may("entry", "string", "the entry's text"),
			need("now", "time", "the time keys are judged at"),
			need("key_directory", "document", "the issuer's key directory"),
		}, logFields),
		Result: concat(logResult, logVerdict),
	},
	{Name: "log_consistency", Summary: "Verifies a checkpoint the log serves now (`new`, a signed note) and, with a kept checkpoint, that one tree is a prefix of the other by the consistency proof: what a monitor asks at every poll.",
		Request: []Field{
			need("new", "string", "the checkpoint the log serves (GET /log/checkpoint)"),
			may("checkpoint", "string", "the checkpoint kept"),
			may("consistency", "array of strings", "base64 hashes: the consistency proof between the two trees, smaller to larger"),
			need("now", "time", "the time keys are judged at"),
			need("key_directory", "document", "the issuer's key directory"),
		},
		Result: concat(logResult[2:], logVerdict),
	},
	{Name: "pilot_batch", Summary: "Judges a pilot's upload of records (the issuer's `POST /api/v1/pilot/{id}/records`, docs/issuer.md) line by line against the pilot's chain: `accepted` (a record in its canonical form, its `record_sha256` matching, following the head; it becomes the head), `duplicate` (named in `known`, or earlier in the batch), `edited` (refused, with the reason) or `chain_gap` (it does not follow the head: the batch stops there, naming the record expected). A pilot holding no record anchors at its first accepted one, never after a refused line. `entry` is the log entry committing to the new head when it is not the one the log holds.",
		Request: []Field{
			need("records", "string", "the upload's JSON lines"),
			may("head", "string", "the record_sha256 the pilot's chain ends at (absent: it holds none)"),
			may("logged_head", "string", "the head the log last committed to for this pilot (absent: none)"),
			may("known", "array of strings", "record_sha256 of the batch's records the issuer holds for this pilot (from a first call's `digests`)"),
		},
		Result: []Field{
			need("results", "array of `{record_sha256, status, reason, expected_prev_record_sha256}`", "one per line, in order, up to and including a `chain_gap`"),
			need("accepted", "number", "records accepted"),
			need("head", "string or null", "the pilot's head after the batch"),
			need("digests", "array of strings or nulls", "the record_sha256 each line names, every line (those after a gap too): what the issuer looks up for `known`"),
			need("entry", "string or null", "the log entry `{kind: crawlcheck-log-entry, v: 1, type: crawlcheck-pilot-batch, prev_head, head}` to append, when `head` is not `logged_head`"),
		}},
	{Name: "sign_pilot_upload", Summary: "Signs one upload of a pilot made with a record key (docs/issuer.md, Trust model): Ed25519 over `crawlcheck.sig.v1:crawlcheck-pilot-upload:<sha256>`, the digest of the canonical `{pilot_id, records_sha256}` (the SHA-256 of the upload's exact bytes). The issuer's `POST /api/v1/pilot/{id}/records` takes it in `X-Crawlcheck-Pilot-Signature`.",
		Request: []Field{
			need("private_key", "string", "the pilot's record key (base64 Ed25519 seed), as `POST /api/v1/pilot` answered it"),
			need("pilot_id", "string", "the pilot"),
			need("records", "string", "the upload's bytes, exactly as posted"),
		},
		Result: []Field{need("signature", "string", "`ed25519:op_<16 hex>:<base64url>`")}},
	{Name: "verify_pilot_upload", Summary: "Whether an upload is signed by the pilot's record key, for that pilot and those bytes (`sign_pilot_upload`); an unsigned or wrongly signed upload is an answer, not an error.",
		Request: []Field{
			need("public_key", "string", "the record key's public key (base64), as the issuer keeps it"),
			need("pilot_id", "string", "the pilot uploaded to"),
			need("records", "string", "the upload's bytes as received"),
			may("signature", "string", "the upload's signature (absent: unsigned)"),
		},
		Result: []Field{
			need("valid", "bool", "signed by that key over that pilot and those bytes"),
			need("reason", "string or null", "why not: `unsigned`, `bad_signature`, `malformed_signature`, `wrong_operator_key` (another key), or another of verify_lock's reasons"),
		}},
	{Name: "pilot_queue", Summary: "One step of a host's pilot upload (docs/preflight.md, The pilot upload): what to read of the record log, what to post and what the issuer's answer makes of the ack file `<log>.pilot-ack` (`END DIGEST START`: where the last acknowledged line ends, its record_sha256 or `-`, where it begins; empty: none). Asked with `ack` and `log_size`, it answers `read`; asked again with that window, `batch` (whole lines after the ack, at most 500 or 4 MiB, one record up to 8 MiB alone); asked again with the issuer's `answer`, the new `ack`: lines answered `accepted`, `duplicate` or `edited` are acknowledged, a `chain_gap` stops the pass there (`error`), and an answer that does not name the batch's records in order acknowledges nothing past them. An ack file that is not its form, or a log that ends before or no longer holds the acknowledged line, is `reset`: `ack` is empty and the pass starts again from byte 0 (the issuer answers duplicates). A host writes `ack` when it is not null, stops the pass with `error` (and backs off), and asks again from a fresh read while `more`. After a pass that failed (an `error`, an issuer it could not reach, a file it could not read), it asks with `failed_passes` alone (and `backoff_ms`), and waits a time it draws at random within the answer's `wait`, which a new record does not cut short.",
		Request: []Field{
			may("ack", "page string", "the ack file's bytes, at most `limits.pilot_ack_bytes` + 1 read (absent: there is none)"),
			may("log_size", "number", "the record log's size in bytes: required, except with `failed_passes`"),
			may("window_offset", "number", "with `window`: the `read.offset` answered"),
			may("window", "page string", "the log's bytes `read` named (fewer when the log ends sooner)"),
			may("answer", "object `{status, body}`", "the issuer's HTTP status and answer (at most `limits.pilot_answer_bytes`) to the POST of `batch`"),
			may("failed_passes", "number", "instead of the rest: how many passes failed in a row, this one included (at least 1); the answer is `wait`, every other member null"),
			may("backoff_ms", "object `{min, max}`", "with `failed_passes`: the back-off's bounds in milliseconds, replacing 1000 (`min`) and 300000 (`max`), each optional; one given alone moves the other's default to it (a `max` of 200 alone is a `min` of 200 too)"),
		},
		Result: []Field{
			need("reset", "string or null", "`ack_corrupt`, `log_truncated` or `log_rewritten` when the ack file was set aside"),
			need("read", "object or null", "`{offset, length}`: the window of the log to read and ask again with"),
			need("batch", "object or null", "`{offset, length, records}`: the log's bytes to POST to /api/v1/pilot/{id}/records"),
			need("ack", "string or null", "the ack file's new bytes, to write atomically"),
			need("error", "object or null", "`{code, message}`: why the pass stops: `issuer_status`, `answer_invalid`, `answer_mismatch`, `answer_short`, `chain_gap` or `record_too_large`"),
			need("acknowledged", "number", "lines the answer acknowledged"),
			need("more", "bool", "ask again at once, from a fresh read of the ack file and the log"),
			need("wait", "object or null", "with `failed_passes`: `{min, max}`, the milliseconds to wait before the next pass, drawn by the host within them: with d = min(max, min·2^min(failed_passes−1, 20)), [d/2, d]; null otherwise"),
		}},
	{Name: "sign_correction", Summary: "Writes and signs a correction (docs/issuer.md, Corrections): `{kind: crawlcheck-correction, v: 1, issuer, issued_at, target, version, supersedes, reason, reporter, rules_sha256, policy_version, key_id, sha256, signature}`, signed as a receipt is (`crawlcheck.sig.v1:crawlcheck-correction:<sha256>`). The original is never changed: a correction names it by digest, and a later one names the correction it supersedes.",
		Request: []Field{
			need("private_key", "string", "base64 Ed25519 seed of the issuer's key"),
			may("key_id", "string", "the key's id"),
			need("issuer", "string", "the issuer's name"),
			need("issued_at", "time", ""),
			need("target", "string", "the record_sha256 or receipt sha256 corrected"),
			need("version", "number", "1 for the first correction of the target, then one more each"),
			may("supersedes", "string", "from version 2: the sha256 of the correction before"),
			need("reason", "string", "what was wrong (at most 4096 bytes)"),
			need("reporter", "string", "who reported it"),
			may("rules_sha256", "string", "when a rule changes: the rule table that applies now"),
			may("policy_version", "string", "when a default changes: the policy version that applies now"),
		},
		Result: []Field{
			need("correction", "object", "the signed correction"),
			need("sha256", "string", ""),
			need("key_id", "string", ""),
		}},
	{Name: "resign_correction", Summary: "Signs a correction again with the key that signs now (docs/issuer.md, Corrections through a rotation), so that it still applies once the key that signed it is retired: the same members as first signed, with `resigns` (the sha256 of its first signing, kept when a re-signing is re-signed: the digest a later version's `supersedes` names) and `resigned_at`. Only a correction that verifies under `key_directory` (the issuer's history: every key it signed with) is re-signed; anything else is `bad_request`.",
		Request: []Field{
			need("private_key", "string", "base64 Ed25519 seed of the key that signs now"),
			may("key_id", "string", "the key's id"),
			need("resigned_at", "time", ""),
			need("correction", "document", "the correction as signed before (its first signing or a re-signing)"),
			need("key_directory", "document", "a directory under which the correction verifies: the issuer's history of keys"),
		},
		Result: []Field{
			need("correction", "object", "the re-signed correction"),
			need("sha256", "string", ""),
			need("key_id", "string", ""),
			need("resigns", "string", "the sha256 of the correction's first signing"),
		}},
	{Name: "corrections_apply", Summary: "Which corrections name the records of a record log: each record is named by its `record_sha256` and by the sha256 of the issuer's receipt it relied on (`issuer.receipt.sha256`). Without `corrections`, `targets` lists those digests (what a host asks the issuer for, GET /api/v1/corrections?target=); with them, `applies` pairs each record with each correction of its digests, by version, and each correction's signature judged against `key_directory` at `now`. A correction served more than once — its first signing and the issuer's re-signings of it (`resign_correction`), which name the first by `resigns` — is answered once: the newest signing the directory vouches for, else the first signing with its trust. A re-signing whose members are not those of its first signing served beside it (intact) is `untrusted` (`resigning_differs`).",
		Request: []Field{
			need("records", "string", "the log's JSON lines (a line that does not parse names nothing)"),
			may("corrections", "array of documents", "corrections as the issuer served them"),
			may("key_directory", "document", "with corrections: the issuer's key directory"),
			may("now", "time", "with corrections: the time keys are judged at"),
		},
		Result: []Field{
			need("targets", "array of strings", "the distinct digests the records name, in order"),
			need("applies", "array of `{line, record_sha256, target, target_kind, correction}`", "`target_kind` `record` or `receipt`; `correction` the correction as served without its `signature`, with `trust` and `trust_reason` (as verify_lock words them) beside its members"),
		}},
	{Name: "endpoint", Summary: "How an endpoint is written into a record, and read back. Given `url` or `command`: the endpoint string a record carries, an http(s) URL in its canonical form (scheme and host lower-cased, `:443`/`:80` dropped for https/http, an empty path made `/`, path and query kept byte for byte, fragment dropped; a host that is not ASCII is `bad_request`: write its punycode form), or `stdio:` and the command line, each argument left bare when made only of ASCII letters, digits and `@%+=:,./-_` and otherwise single-quoted with each `'` written `'\"'\"'` (Python's `shlex.quote`), `argv0` as typed. Given a written `endpoint` (a lockfile's `server.url`, or `stdio:` and a command line a person typed): its URL, or its argv split as a POSIX shell splits words without expansion (the inverse of that quoting), so every host starts the same program; one that is neither, or names no command, is `bad_request`. Every endpoint written hides a credential's value as `REDACTED`; `url` is the URL as given (what a host connects to).",
		Request: []Field{
			may("url", "string", "an http or https URL with a host (give one of `url`, `command` and `endpoint`)"),
			may("command", "array of strings", "argv of a stdio server"),
			may("endpoint", "string", "a written endpoint, to read back"),
		},
		Result: []Field{
			need("endpoint", "string", "the endpoint as a record writes it"),
			need("url", "string or null", "the URL, for a streamable HTTP server"),
			need("command", "array of strings or null", "the argv, for a stdio server"),
		}},
	{Name: "ci_plan", Summary: "Which servers `crawlcheck ci` checks, and where each is reached: for an agentgate.lock, each server it pins, found by its name in an MCP client config (`mcpServers`, as Claude Desktop and Cursor write it, or `servers`, as VS Code does; members read by their exact names, the config by the strict parser), and the config's servers the lockfile does not pin (each drifts: its tools were never approved); for a crawlcheck lockfile with a config, the entries that start or reach the server it pins (the same argv word for word, or the same URL), the others unlocked; without a config, its own endpoint. A host that reads a client's own format hands its entries here as this config, with each client's variables expanded: an entry `\"disabled\": true` is skipped (its client does not start it) and one with `refused` (what the host could not expand as the client does, by name) is not checked. A server of the lockfile missing from the config, an entry with neither `command` nor `url` (or of type `sse` without `url`), a `disabled` that is not a boolean, a `refused` that is not an array of strings, and an agentgate.lock without a config are `bad_request`.",
		Request: []Field{
			may("lock", "document", "the lockfile (crawlcheck or agentgate) of every server; required unless `locks`"),
			may("locks", "array", "instead of `lock`, `{server, lock}` per configured server: the crawlcheck lockfile it runs with (as `crawlcheck install` wrote it); an entry that starts another server than its lockfile pins is `mismatched`, one without a lockfile unlocked; a lockfile naming a server not in the config, an agentgate.lock, and `lock` given too are `bad_request`"),
			may("config", "document", "the MCP client config (required for an agentgate.lock and with `locks`); each entry `command`, `args`, `env`, `cwd`, or `url`, `type`, `headers`; `disabled`, `refused`"),
		},
		Result: []Field{
			need("servers", "array", "`{server_name, endpoint, url, sse, headers, command, env, cwd}` per server to check, in the lockfile's order (an agentgate.lock) or the config's: its `url` (streamable HTTP; with `sse` true, from an entry of type `sse`, the event stream of the legacy HTTP+SSE transport) and `headers` (`Name=value`, sorted; null when none) or `command` (argv), `env` (`KEY=value`, sorted) and `cwd` (null when none); `server_name` the config's name for it (null without a config), `endpoint` a crawlcheck lockfile's (null for an agentgate.lock), its `stdio:` command line split as the `endpoint` op reads it"),
			need("unlocked", "array of strings", "the config's servers the lockfile does not pin, sorted"),
			need("skipped", "array of strings", "the config's disabled servers, sorted"),
			need("refused", "array", "`{server, reasons}` per entry the host could not make what its client starts, in the config's order"),
			need("mismatched", "array", "with `locks`, `{server, endpoint}` per entry that starts another server than the one its lockfile pins (`endpoint`)"),
		}},
	{Name: "ci_verdict", Summary: "The verdict of `crawlcheck ci`: `ci_plan`'s request and what the host observed of each server the plan names, in its order; the answer is each server's `lock_check` and status (`unchanged`; `drifted`, any decision but `connect`; `unreachable`, the list not read: not drift; `unlocked`, configured and not pinned: drift; `mismatched`, its own lockfile pins another server: drift; `refused`, not checked; `disabled`, skipped), the line a person reads, and whether the gate passes: only when no server drifted, none was unreachable and none was refused. Checks not one per planned server are `bad_request`.",
		Request: []Field{
			may("lock", "document", "the lockfile (crawlcheck or agentgate), as `ci_plan` reads it"),
			may("locks", "array", "one crawlcheck lockfile per configured server, as `ci_plan` reads it"),
			may("config", "document", "the MCP client config, as `ci_plan` reads it"),
			need("checks", "array", "one observation per `ci_plan` server, in its order: a tool source (`tools` or `pages`, `page_cap_reached`) or a host fault (`failure`, `failure_detail`, `failure_at`, `failure_page`, `timeout_ms`, `resource_metadata`), as `lock_check` takes them"),
		},
		Result: []Field{
			need("servers", "array", "`{server, decision, status, drifted, unlocked, summary, answer}` per server: the planned servers in order, then the unlocked, the mismatched, the refused and the disabled ones; `server` the config's name for it or the crawlcheck lockfile's endpoint; `decision` the lock check's (`block` when unlocked, mismatched or refused, `skip` when disabled); `answer` its `lock_check` (null when not checked); `drifted` true for `drifted`, `unlocked` and `mismatched`; `summary` one line: `unchanged`, `unreachable: <reason>: <detail>`, `changed: added …; removed …; modified <tool> (<parts>)`, `not checked: <reasons>`, or why an unlocked or disabled server was not checked"),
			need("checked", "number", "how many servers the verdict covers"),
			need("drifted", "number", "how many of them drifted (unlocked and mismatched ones included)"),
			need("unreachable", "number", "how many could not be read"),
			need("refused", "number", "how many were not checked: refused"),
			need("skipped", "number", "how many were disabled in the config"),
			need("passes", "bool", "no server drifted, none was unreachable, none refused: the gate exits 0"),
		}},
	{Name: "replay_state", Summary: "The issuer replay-state file (`<log>.issuer-nonces.json` beside a record log), read and written by one rule: give the file as read, or `guard`'s `seen_nonces`; the answer is both the nonces `guard` takes and the bytes to write. A file not of the format (`kind` `crawlcheck-issuer-nonces`, `v` 1, `seen_nonces`) is `bad_request`: move it aside, never repair it.",
		Request: []Field{
			may("file", "document", "the state file as read (give `file` or `seen_nonces`)"),
			may("seen_nonces", "array of `{nonce, expires_at}`", "`guard`'s answer, to be written"),
		},
		Result: []Field{
			need("seen_nonces", "array", "`guard`'s `seen_nonces` for the next call"),
			need("file", "string", "the file's bytes: canonical JSON and a newline; write it atomically"),
		}},
	{Name: "next_page", Summary: "One step of a `tools/list` walk, so that no host keeps its own rule for when to stop following `nextCursor`: hand the page just read and the previous answer's `followed`; send `cursor` with the next `tools/list`, or stop and hand every page read (and `page_cap_reached`) to the check. The walk stops at the list's end, at the page cap, at a cursor already followed, and at a page the strict parser refuses (an empty or non-string cursor included), which the check records as `response_malformed`.",
		Request: []Field{
			need("page", "page string", "the page just read, as received (a string, `{\"base64\": …}` or an attachment, as a `pages` element)"),
			may("followed", "array of strings", "the previous answer's `followed`; absent or `[]` on the first page"),
			may("page_cap", "number", "the most pages to read, at least 1 (default 100; more than 1000 is 1000)"),
			may("list", "string", "the list walked: `tools/list` (default), `prompts/list`, `resources/list` or `resources/templates/list`"),
		},
		Result: []Field{
			need("cursor", "string or null", "the cursor to send with the next `tools/list`; null when the walk stops"),
			need("stop", "string or null", "why the walk stops: `list_end`, `page_cap_reached`, `cursor_repeated` or `response_malformed`; null while it goes on"),
			need("followed", "array of strings", "the cursors followed, `cursor` included: the next request's `followed`"),
			need("page_cap_reached", "bool", "the walk stopped at its page cap: `observed.page_cap_reached` of the check"),
		}},
	{Name: "ui_templates", Summary: "Which MCP Apps UI templates a host reads with `resources/read` beside the tools, at lock and check time (issue 35): the ui:// URIs the tools name in `_meta.ui.resourceUri`, distinct and sorted, at most 64. Hand each answer, as received, in `observed.features.ui_templates`; `make_lock` pins their contents and `_meta`, and a check compares them (`ui_template_changed`).",
		Request: toolSourceFields,
		Result: []Field{
			need("uris", "array of strings", "the ui:// URIs to read, sorted"),
			need("over", "bool", "the tools name more than 64: only the first 64 are named, and `make_lock` refuses the list"),
		}},
	{Name: "scan_items", Summary: "The approval scan of prompts, resources and resource templates (issue 35): every string of every item (name, title, description, arguments and their descriptions, unknown members) scanned as text a model reads, as a tool's description is (docs/scan.md). The lockfile keeps their hashes, not their texts, so a changed item has no word diff: this is what a person reads before approving it (the page, `approve`). Findings are in the lists' order (prompts, resources, resource templates), each list in the server's order, then by member (canonical order), offset and rule; at most 500 are listed, and `kinds` counts them all.",
		Request: scanItemsFields,
		Result: []Field{
			need("findings", "array", "`{list, item, part, kind, length, offset, rule, severity, span, hidden?}`: `item` the name, uri or uriTemplate, `part` a JSON Pointer into the item"),
			need("kinds", "object", "kind → number of findings, all of them"),
			need("rules_sha256", "string", "the `scan_rules_sha256` of the rules that scanned"),
			need("severity", "string", "the highest finding's: `none`, `low`, `medium` or `high`"),
		}},
	{Name: "ui_template_check", Summary: "Checks a ui:// template a host reads to render it (MCP Apps) against the pin of the lockfile the record compared (issue 35): a host renders nothing this does not answer `same` for. `same` is true only when the record was made from `lock`, its `baseline.features` is `signed` or `unsigned`, the lockfile pins `uri`, and the answer's `contents` and `_meta` hash as pinned.",
		Request: []Field{
			need("record", "document", "the continuity record the host acts on"),
			need("lock", "document", "the lockfile the record compared"),
			need("uri", "string", "the ui:// URI read"),
			need("result", "page string", "the `resources/read` answer as received"),
		},
		Result: []Field{
			need("same", "bool", "render it: the template is the one approved"),
			need("parts", "array of strings", "the parts that differ (`_meta`, `contents`)"),
			need("reason", "string or null", "why nothing was compared: `not_compared` (the record did not use the lockfile's features), `not_approved` (the lockfile pins no such URI), `malformed` (an answer it cannot read, an error answer included)"),
			need("template", "string or null", "with `same`, the JSON text of the result a host hands its renderer, `{\"contents\":[…]}` (the content items compared, in canonical JSON), never the host's parse of the answer: the result's other members are in no part's hash; null otherwise"),
		}},
	{Name: "escape_text", Summary: "The one rule for showing a string from a server, a lockfile or a record to a person (core/textsafe; the CLI prints through the same Go function). C0 controls (tab and newline included), DEL, C1 controls, bidirectional controls, zero-width and other invisible characters and the tag block are written `\\u{HEX}` (upper-case hex, at least two digits); a backslash followed by `u{` or `x{` is written `\\u{5C}`, so every `\\u{` in the answer is an escape and every other backslash is a backslash. The full table is in docs/cli.md (\"What a person reads\"). Show the answer, never the input.",
		Request: []Field{need("text", "string", "the string to show (may be empty)")},
		Result:  []Field{need("text", "string", "the string, shown safely")}},
	{Name: "resource_metadata", Summary: "The resource_metadata URL (RFC 9728, section 5.1) of a 401's or a 403's WWW-Authenticate lines, which a host's fault `unauthorized` or `forbidden` carries (docs/continuity.md, Host faults). The lines are read as go-sdk's `oauthex.ParseWWWAuthenticate` reads them: challenges split at a comma not followed by a `key=`, parameters `key=token` or `key=\"quoted\"` with backslash escapes and keys in any case, a malformed challenge on any line failing the whole header, the first challenge naming the parameter winning; a URL over 2048 bytes is not kept. A host hands the lines over as the server sent them (each header line a string, text that is not UTF-8 read with U+FFFD) and keeps the answer; the vectors are testdata/www-authenticate.json's cases. The URL is the server's text: show it through `escape_text`.",
		Request: []Field{need("www_authenticate", "array of strings", "the response's WWW-Authenticate lines, in order ([] when there are none)")},
		Result:  []Field{need("resource_metadata", "string", "the URL, \"\" when none is kept")}},
	{Name: "refusal", Summary: "Why a record refuses a call or a session, in the words every host's refusal error carries (Go `RefusedError`, JS and Python `ContinuityRefused`): `crawlcheck: session denied (deny): server_identity_mismatch (approved https://a/mcp, answering https://b/mcp) (record …)`, or for a tool `crawlcheck: tool \"get_item\" withheld (pause_tool): description_changed (get_item description: inserted \"…\") (record …)`. The observations named are the tool's (and the session's) that did not proceed, all of them when every one did; the first says what differed (its tool and part, a diff's inserted and deleted text, an identity's approved and answering endpoints, any other detail member by name and value, each value clipped to 120 bytes). Every string from the record is shown through `escape_text`. A tool the record does not list is `refused: not in the checked tool list`. With `would`, an observe-mode record's notice instead: what enforce would have refused (the record's `would`, each observation's `would`), the line a host shows a person once in observe mode (stderr, `console.warn`): `crawlcheck: observe mode let this through; enforce would have: tool \"get_item\" withheld (pause_tool): description_changed (…) (record …)` — a session enforce would stop alone, else every tool it would withhold in name order (five named, the rest counted); `text` is null when enforce would have refused nothing.",
		Request: []Field{
			need("record", "document", "the continuity record that decided"),
			may("tool", "string", "the tool a call asked for; absent for the session"),
			may("would", "bool", "word what enforce would have refused in an observe-mode record (no `tool`)"),
			may("item", "object `{"+joinNames(refusalItemFields)+"}`", "a prompt, resource, resource template or ui:// template a host refuses (no `tool`, no `would`; issue 35): `crawlcheck: prompt \"triage\" withheld (pause_tool): prompt_changed (description) (record …)`, `refused: not in the checked list`, `refused: the check compared no prompts (…)`, or `crawlcheck: UI template \"ui://…\" refused: its contents changed since it was approved (record …)`"),
		},
		Result: []Field{need("text", "string or null", "the message, safe to show; null only with `would` when enforce would have refused nothing")}},
	{Name: "verify_record", Summary: "Recomputes a record's `record_sha256`; a mismatch is an answer.",
		Request: []Field{need("record", "document", "a continuity record")},
		Result: []Field{
			need("valid", "bool", ""),
			need("record_sha256", "string", "as stored"),
			need("computed_sha256", "string", ""),
			need("reason", "string or null", ""),
		}},
	{Name: "verify_chain", Summary: "Verifies a JSON-lines log of records: every line one record in canonical form, each hash, each `prev_record_sha256` link, and the anchors: the first record starts the chain or follows `after`; with `head`, the last record is it (docs/continuity.md, What the chain proves). A torn last line is set aside, not an edit.",
		Request: []Field{need("records", "string", "the log's JSON lines, as read: an attachment (or `{\"base64\": …}`) may hold bytes that are not UTF-8, as a last line a crash cut inside a character does (a torn tail)"),
			may("after", "string", "the record_sha256 the first record must follow (a log continued from a rotated one)"),
			may("head", "string", "the record_sha256 the last record must be (a head kept elsewhere)")},
		Result: []Field{
			need("valid", "bool", ""),
			need("count", "number", "records verified"),
			need("broken_at", "number or null", "index of the first bad record"),
			need("reason", "string or null", ""),
			need("head", "string or null", "record_sha256 of the last good record"),
			need("torn_tail", "bool", ""),
			need("keep_bytes", "number", "how many bytes of `records` a log appended to keeps: all of them, or, with `torn_tail`, those before the torn last line (cut at its last newline); all of them when not `valid`"),
			need("add_newline", "bool", "a whole last record lacks its newline: a log appended to writes one before its next record, so that record starts a line of its own"),
		}},
	{Name: "guard", Summary: "Judges an issuer's receipt (spec §7): the `crawlcheck-guard-answer`, the observations for `continuity_check`'s `evidence` and the updated `seen_nonces` (docs/receipts.md). Whatever the receipt holds is an answer, never an error; at least one of `key_directory` and `pinned_keys` is required.",
		Request: []Field{
			need("receipt", "document", "the lock check's answer as received, bytes a host does not judge: one that is not a UTF-8 JSON object is `issuer_fault` `{step: lock_check, fault: response_malformed}`"),
			need("expected_subject", "string", ""),
			may("expected_operation", "string", "the operation the receipt must be of; default `mcp.lock.check`, what a host asks at `POST /api/v1/mcp/lock/check`"),
			need("now", "time", ""),
			may("key_directory", "document", "the operator's copy of the issuer's key directory, trusted as it is"),
			may("fetched_key_directory", "document", "instead of `key_directory`, with `pinned_keys`: the directory as fetched from the issuer, as received; only its pinned keys (same `kid` and `public_key`) are kept, none kept means the pins alone decide; one that is not a UTF-8 JSON object, or that the core cannot read, is `issuer_fault` at the step `key_directory` (`response_malformed`, `keys_invalid`), judged before the receipt"),
			may("pinned_keys", "array of `{kid, public_key}`", ""),
			may("seen_nonces", "array of `{nonce, expires_at}`", ""),
			need("lock", "document", "the approved lockfile"),
			may("policy", "document", ""),
			may("observed_tools_sha256", "string", ""),
		},
		Result: []Field{
			need("kind", "string", "`crawlcheck-guard-answer`"),
			need("v", "number", ""),
			need("receipt", "object", ""),
			need("unreadable", "object or null", ""),
			need("integrity_valid", "bool", ""),
			need("issuer_trusted", "bool", ""),
			need("key_policy_valid", "bool", ""),
			need("freshness_valid", "bool", ""),
			need("replay_safe", "bool", ""),
			need("subject_matches", "bool", ""),
			need("operation_matches", "bool", ""),
			need("baseline_matches", "bool", ""),
			need("assessment_complete", "bool", ""),
			need("authority", "string", ""),
			need("evidence_level", "string", ""),
			need("evidence_assurance", "string", ""),
			need("policy_result", "object", ""),
			need("policy_source", "string", ""),
			need("effect", "string", ""),
			need("reasons", "array", ""),
			need("observations", "array", "for `continuity_check`'s `evidence`"),
			need("seen_nonces", "array", "the updated replay state"),
			need("engine", "object", ""),
			may("issuer_fault", "object `{step, fault}`", "present when the issuer's answers give nothing to judge (`fetched_key_directory` or `receipt` above): the step and fault a host hands `continuity_check` as its `issuer` member instead of `guard`, keeping neither this answer nor its `seen_nonces`"),
		}},
	{Name: "replay_decision", Summary: "Recomputes a receipt's decision from its inputs (docs/receipts.md).",
		Request: []Field{
			need("receipt", "document", ""),
			may("lock", "document", "required when the receipt carries only the lockfile's digest"),
		},
		Result: []Field{
			need("kind", "string", ""),
			need("operation", "string", ""),
			need("receipt_sha256", "string", ""),
			need("decision", "string", ""),
			need("replayed_decision", "string or null", ""),
			need("reproducible", "bool", ""),
			need("reason", "string or null", ""),
			need("differs", "array of strings", ""),
			need("same_rules", "bool", ""),
			need("receipt_rules_sha256", "string", ""),
			need("rules_sha256", "string", ""),
			need("replayed", "any JSON", "the recomputed result"),
			need("error", "object or null", "`{code, message}` when the inputs could not be replayed"),
		}},
	{Name: "sign_receipt", Summary: "Issues a signed receipt (the test issuer's op; docs/receipts.md).",
		Request: []Field{
			may("kind", "string", "lock-check (default) or decision receipt"),
			need("private_key", "string", ""),
			may("key_id", "string", ""),
			need("issuer", "string", ""),
			need("issued_at", "time", ""),
			need("expires_at", "time", ""),
			need("nonce", "string", ""),
			need("subject", "string", ""),
			need("inputs", "object", "the `lock_check` or `continuity_check` request the receipt answers"),
			may("carry_lock", "bool", "keep the lockfile in the receipt's inputs"),
			may("log_entry", "bool", "also answer the receipt's transparency-log entry: what an issuer appends, without handing the receipt back to `log_entry`"),
		},
		Result: []Field{
			need("receipt", "object", ""),
			need("sha256", "string", ""),
			need("key_id", "string", ""),
			may("log_entry", "string", "with `log_entry` true: the entry `log_entry` answers for this receipt"),
		}},
	sessionStepSpec,
	documentKindSpec,
}

// specOf maps op names to their declarations.
var specOf = func() map[string]*OpSpec {
	m := make(map[string]*OpSpec, len(opSpecs))
	for i := range opSpecs {
		m[opSpecs[i].Name] = &opSpecs[i]
	}
	return m
}()

// Specs returns the op declarations, in documentation order.
func Specs() []OpSpec { return opSpecs }

func joinNames(fs []Field) string {
	out := ""
	for i, f := range fs {
		if i > 0 {
			out += ", "
		}
		out += f.Name
		if f.Optional {
			out += "?"
		}
	}
	return out
}
