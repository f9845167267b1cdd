// Package preflight is the Go side of the CrawlCheck continuity check for
// clients of the official Go MCP SDK: it observes what an MCP server offers,
// byte for byte, before the agent's first tool call. It decides nothing; the
// core (package core, op continuity_check) hashes, compares and applies the
// policy to the Observation this package returns.
//
// Why bytes and not the SDK's types: the SDK's Tool drops unknown fields,
// writes false for annotations the server never sent and skips null entries,
// so the typed list is not what other clients hand their model. The
// Transport returned by Wrap records every frame below the SDK, and Observe
// drives tools/list through the SDK (so the session's protocol rules still
// apply) while taking each page from the recorded bytes.
//
//	t, err := preflight.Wrap(&mcp.CommandTransport{Command: exec.Command("server")})
//	...
//	cs, obs := preflight.Connect(ctx, client, t, nil, nil)
//	// obs.Pages, obs.Unfollowed, obs.Failure, obs.Endpoint, ... go to the core.
//
// The context bounds the whole check: a server that never answers becomes
// FailureTimeout, one that cannot be reached FailureUnavailable. A page that
// is not JSON is kept verbatim and ends the listing; the core reports it as
// response_malformed.
package preflight
