package core

// sessionStepSpec declares session_step (its place in opSpecs is the
// documentation's order, after the ops a session uses).
var sessionStepSpec = OpSpec{Name: "session_step", Summary: "The session engine (docs/abi.md, The session engine): the session's `state` as the host kept it (absent for a new session) and one `event`, answered with the new `state` and the `actions` the host executes in order. Events: `check` (the observation is ready: `check` is `continuity_handoff`'s request without `recheck` and `refreshed`, which the engine sets; `seen` the list_changed notifications the host had seen when it began observing; `oversized` the number of pages the host left out after the core refused this event as `input_too_large`), `list_changed` and `timer` (`at_ms`, the host's monotonic clock), `call` (`name`: a tools/call the framework wants to make), `log_proof` (`proof` and the `checkpoint` kept). Actions: `append_record` (`record`: the record's canonical JSON, the line to append, as a string), `keep_checkpoint` (`checkpoint`), `hand` (the handoff: `session`, `tools`, `withheld`, `calls`, `instructions`), `check_again` (observe again and send one more `check`), `recheck` (`held_back_ms`: observe and send a `check`), `wake` (`at_ms`: send `timer` then), `allow`, `refuse` (`text`), `ask_consistency` (`from`, `to`: the issuer's consistency proof between the trees, for the check's `log`; `kept_size` and `proof_size` say which tree is which). The engine makes a check the issuer's unreadable key directory refused again without it (the record: `service_unavailable` at `key_directory`) and one whose pages the core cannot take again as `pages_over_cap`; a refresh is exactly one more check; re-checks after list_changed are paced (1 s, doubling to 60 s in a storm) and their records carry `recheck`.",
	Request: []Field{
		may("state", "document", "the `state` of the previous answer, as it was (the string, or an attachment of its bytes); absent or null for a new session"),
		need("event", "object", "`{type, …}`: `check` {check, seen?, oversized?}, `list_changed` {at_ms}, `timer` {at_ms}, `call` {name}, `log_proof` {proof, checkpoint?}"),
	},
	Result: []Field{
		need("state", "string", "the session's state to keep and hand back with the next event: the canonical text of `{kind: \"crawlcheck-session-state\", v: 1, record, session, calls, changes, seen, refresh, held_ms, pace}`, the core's to read; hosts keep it as the string's bytes"),
		need("actions", "array of `{action, …}`", "`{action, …}` in the order the host executes them (see the summary)"),
	},
}
