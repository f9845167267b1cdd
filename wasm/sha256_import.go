//go:build wasip1

package main

import "unsafe"

// hostSHA256 writes the SHA-256 of the n bytes at data to the 32 bytes at
// out and returns 1, or returns 0 if the host has none to offer.
//
//go:wasmimport crawlcheck sha256
//go:noescape
func hostSHA256(data unsafe.Pointer, n uint32, out unsafe.Pointer) uint32
