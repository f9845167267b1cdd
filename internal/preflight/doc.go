// Package preflight implements bindings/go/preflight, the Go side of the
// CrawlCheck continuity check for clients of the official Go MCP SDK, and
// holds the lower layers the hosts of this module with their own loop use
// (the crawlcheck CLI is one): Wrap, Connect and Observe give an
// Observation, Check turns it into a Record, CheckLock is the drift gate,
// MakeLock pins an observation, Approve re-approves, Log keeps the records
// chained, IssuerClient asks an issuer. A go-sdk user imports
// bindings/go/preflight, whose names are aliases of the types here: this
// package is internal so that its surface can change with the hosts that
// use it, while the public one stays what a session needs.
//
// Why bytes and not the SDK's types: the SDK's Tool drops unknown fields,
// writes false for annotations the server never sent and skips null entries,
// so the typed list is not what other clients hand their model. The
// Transport returned by Wrap records every frame below the SDK, and Observe
// drives tools/list through the SDK (so the session's protocol rules still
// apply) while taking each page from the recorded bytes.
//
// The context bounds the whole observation: a server that never answers
// becomes the fault FaultTimeout, one that cannot be reached
// FaultConnectRefused (a fault is a code the core words into the record's
// check_timeout or server_unavailable: docs/continuity.md, Host faults). A
// page that is not JSON is kept verbatim and ends the listing; the core
// reports it as response_malformed. See docs/preflight.md.
package preflight
