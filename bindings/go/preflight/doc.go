// Package preflight is the Go side of the CrawlCheck continuity check for
// clients of the official Go MCP SDK: it observes what an MCP server offers,
// byte for byte, before the agent's first tool call, hands the facts to the
// core (op continuity_check), and follows the record the core answers with.
// It decides nothing itself: hashing, comparison and policy are the core's.
//
// Why bytes and not the SDK's types: the SDK's Tool drops unknown fields,
// writes false for annotations the server never sent and skips null entries,
// so the typed list is not what other clients hand their model. The
// Transport returned by Wrap records every frame below the SDK, and Observe
// drives tools/list through the SDK (so the session's protocol rules still
// apply) while taking each page from the recorded bytes.
//
// Most callers want a Session:
//
//	sess, err := preflight.Open(ctx, impl, nil,
//		&mcp.CommandTransport{Command: exec.Command("server")}, nil,
//		preflight.Config{LockPath: "crawlcheck.lock.json", LogPath: "records.jsonl"})
//	...
//	sess.ListTools(ctx, nil) // the checked tools, withheld ones left out
//	sess.CallTool(ctx, p)    // *RefusedError for a withheld tool or a stopped session
//	sess.Confirm("get_item") // a person approved the change: new lockfile, new record
//
// The lower layers are there for hosts with their own loop (the CLI is
// one): Connect and Observe give an Observation, Check turns it into a
// Record, MakeLock pins it, Log keeps the records chained.
//
// With Config.Issuer set, every check also asks an issuer for a signed lock
// check of the pages read, judges the answer with the core's guard, and
// hands guard's observations to the check as evidence; an issuer that
// cannot be asked is service_unavailable, and the local comparison stands
// as the fallback. IssuerClient is that path for hosts with their own loop.
//
// The context bounds the whole observation: a server that never answers
// becomes FailureTimeout, one that cannot be reached FailureUnavailable. A
// page that is not JSON is kept verbatim and ends the listing; the core
// reports it as response_malformed. See docs/preflight.md.
package preflight
