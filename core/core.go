// Package core is the CrawlCheck verifier: every decision the project makes —
// canonical bytes, tool hashes, lockfile checks, signatures, policy effects and
// continuity records — is made here, and only here.
//
// The package has one entry point, Call, which takes an operation name and a
// JSON request and returns a JSON envelope. The wasm module (wasm/) and the C
// library (cshared/) expose exactly this function, so every language that
// loads one of them gets the bytes native Go gets. The core performs no I/O,
// reads no clock and draws no randomness: "now" and key seeds are inputs, so
// every output is reproducible from its request.
//
// The ops, their request and response shapes and the closed list of error
// codes are documented in docs/abi.md.
package core
