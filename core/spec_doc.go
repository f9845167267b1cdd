//go:build !crawlcheck_nodoc

package core

// need declares a required field, with its type and documentation: what
// docs/abi.md's tables, the SDKs' generated op layers and TestResultFields
// read. Every build but the wasm module's keeps them (spec_nodoc.go).
func need(name, typ, doc string) Field { return Field{Name: name, Type: typ, Doc: doc} }

// may declares an optional field, as need does a required one.
func may(name, typ, doc string) Field { return Field{Name: name, Type: typ, Optional: true, Doc: doc} }
