//go:build crawlcheck_nodoc

package core

// need declares a required field by its name alone. The build tag
// crawlcheck_nodoc is the wasm module's (the Makefile's wasm target): no op's
// answer or error holds a field's type or words, which only generate
// docs/abi.md and the SDKs' op layers in the tests of a native build, and
// inlined here they leave the module, about 20 KB of its npm package (issue
// 36, npm size, round 2). hosttest's TestVectors runs every vector through
// this build.
func need(name, _, _ string) Field { return Field{Name: name} }

// may declares an optional field by its name alone, as need does.
func may(name, _, _ string) Field { return Field{Name: name, Optional: true} }
