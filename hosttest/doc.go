// Package hosttest proves that the two builds of the core, crawlcheck.wasm
// and libcrawlcheck.so, answer every call with the bytes native core.Call
// answers. Its tests build both artifacts from the current source (package
// artifact), load the wasm with the host Go programs use (package wasmhost)
// and the library from a C program (hosttest/c/harness.c, driven by package
// chost), and compare byte for byte: the shared vectors in testdata/
// (package vectors), a seeded differential run (package gen), malformed
// input, concurrency, memory growth, the request cap, and recovered panics.
//
// Flags: -diff.n (differential cases, default 10,000), -diff.seed (first
// case seed; a failure prints the seed that replays it), -update-abi
// (rewrite wasm/exports.txt, wasm/imports.txt and wasm/packages.txt from the built module).
package hosttest
