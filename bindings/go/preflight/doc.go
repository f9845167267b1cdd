// Package preflight is the Go side of the CrawlCheck continuity check for
// clients of the official Go MCP SDK: it observes what an MCP server offers,
// byte for byte, before the agent's first tool call, hands the facts to the
// core (op continuity_check), and follows the record the core answers with.
// It decides nothing itself: hashing, comparison and policy are the core's.
//
// Why bytes and not the SDK's types: the SDK's Tool drops unknown fields,
// writes false for annotations the server never sent and skips null entries,
// so the typed list is not what other clients hand their model. The session
// records every frame below the SDK and drives tools/list through the SDK
// (so the session's protocol rules still apply) while taking each page from
// the recorded bytes; what it hands the model is the core's answer of the
// exact tool objects the record covers (continuity_handoff).
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
//	sess.ConfirmInstructions() // a person read the instructions' word diff and approved it
//	sess.ConfirmFeatures()     // a person read the changed prompts/resources and their scan
//
// The mode is enforce. Settings.Mode "observe" withholds nothing; the
// first time enforce would have withheld a tool or stopped the session, a
// line on stderr says so in the core's words, naming the tool and the
// record, once for each distinct change (Config.Warn takes it instead).
//
// With Config.Issuer set, every check also asks an issuer for a signed lock
// check of the pages read, judges the answer with the core's guard, and
// hands guard's observations to the check as evidence; an issuer that
// cannot be asked is service_unavailable, and the local comparison stands
// as the fallback.
//
// The context bounds the whole check: a server that never answers is
// recorded as check_timeout, one that cannot be reached as
// server_unavailable. A page that is not JSON is kept verbatim and ends the
// listing; the core reports it as response_malformed. See docs/preflight.md.
//
// This package is the API a go-sdk user calls. The implementation, and the
// lower layers hosts of this module with a loop of their own use (the
// crawlcheck CLI: the raw capture, lock_check, make_lock, the record log),
// are internal/preflight; the names here are aliases of its types.
package preflight
