// Command wasm is the CrawlCheck core as a WASI preview 1 reactor:
// crawlcheck.wasm, loaded by wazero, Node (node:wasi) and browsers (a shim).
//
// It is the binary interface and nothing else (docs/abi.md): every decision
// is core.Call's or core.CallRaw's. The host runs _initialize once, then for
// each call writes the op, the request and (ABI 2, call_raw) the attachments
// into buffers from malloc, calls call or call_raw, reads the response it
// points to and frees it. The module imports one function besides WASI,
// crawlcheck.sha256 (sha256.go).
//
// Buffers are Go slices kept reachable in a map keyed by their address until
// free: Go's collector does not move objects, so an address handed to the
// host stays valid exactly as long as the map holds the slice.
//
// Build with `make wasm`: the Makefile's wasm target holds the flags (a few
// cold core packages compiled without inlining) and, after go build, rewrites
// the data section as one segment (wasm/mergedata), which gzips 82 KB smaller:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -tags=crawlcheck_nodoc $(WASM_GCFLAGS) -o build/crawlcheck.wasm ./wasm
//	go run ./wasm/mergedata build/crawlcheck.wasm
package main

import (
	"runtime"
	"unsafe"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/core/cerr"
)

// pinned holds every buffer handed to the host, by address, until free.
// A reactor runs one call at a time, so the map needs no lock.
var pinned = map[uint32][]byte{}

// beforeCall is nil in release builds; the crawlcheck_testpanic build sets it
// to panic inside this layer, to prove the layer's own recover works.
var beforeCall func(op string)

func main() {}

// Garbage collection must finish between calls.
//
// A reactor's Go runtime only runs while the host is inside an export, and
// an export runs on one goroutine that never blocks: the collector's
// background mark workers get scheduled only if it blocks. A cycle started
// inside a call is then driven by allocation assists alone and may stretch
// over many calls, and everything allocated while it runs is kept as if
// live; each such cycle set a larger heap goal than the last, so a
// long-lived instance grew by kilobytes per call until it ran out of its
// 4 GiB (issue 9). So the module also collects by itself after a call, once
// the calls since its last full collection have allocated gcBudget bytes:
// runtime.GC finishes any cycle in progress and runs a whole one while
// almost nothing is live, which is cheap, and the heap goal starts again
// from what is really live. The linear memory settles at about the largest
// call's high-water mark plus gcBudget.
//
// Inside a call the pacer still runs, with GOGC at 800 rather than 100: a
// collection inside a call marks the call's whole working set (the parsed
// page) on the caller's only thread, while one between calls finds almost
// nothing live. At 800 the first goal is 32 MiB, so a check of 1,000 tools
// runs without one and the module collects between calls instead (3–5 ms
// under wazero, against 40–200 ms more for a call that collected twice);
// larger checks still collect as they go. The pacer must run at all: a
// host's deadline guard (hosttest/wasmhost/guard.go) stops a runaway call
// at the clock reads that collections make.
const gcBudget = 16 << 20

// allocsAtGC is the bytes allocated (MemStats.TotalAlloc) when collect last
// collected. ReadMemStats, not runtime/metrics, whose tables cost 30 KB of
// code: with one thread its stop-the-world is a few microseconds.
var allocsAtGC uint64

func init() { setGCPercent(800) }

// collect runs a full collection if gcBudget bytes were allocated since
// the last one it ran. runtime.GC blocks until the cycle and its sweep are
// done, which lets the collector's goroutines run.
func collect() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if m.TotalAlloc-allocsAtGC < gcBudget {
		return
	}
	runtime.GC()
	runtime.ReadMemStats(&m)
	allocsAtGC = m.TotalAlloc
}

//go:wasmexport abi_version
func abi_version() uint32 { return core.ABIVersion }

// malloc returns a buffer of size bytes the host may write into, or 0 if
// size exceeds the request cap, so a host learns of an over-cap request
// before it copies a byte in. A zero size still gets a distinct address.
//
//go:wasmexport malloc
func malloc(size uint32) uint32 {
	if size > core.MaxRequestBytes {
		return 0
	}
	p, _ := alloc(int(size))
	return p
}

// free releases a buffer from malloc or a response from call; an unknown
// address is ignored, so a double free cannot corrupt anything.
//
//go:wasmexport free
func free(ptr uint32) { delete(pinned, ptr) }

// call runs op on the request and returns ptr<<32|len of the response, which
// the host must free. The request is read in place (the host still owns it).
// A host with a request over the cap passes its length and any non-zero
// address without copying it in: core.Call refuses a request by its length
// before reading a byte of it (hosttest pins this with an address whose
// every byte is outside memory).
//
//go:wasmexport call
func call(opPtr unsafe.Pointer, opLen uint32, reqPtr unsafe.Pointer, reqLen uint32) uint64 {
	return respond(guardedCall(opPtr, opLen, func(op string) []byte {
		if reqPtr == nil && reqLen > 0 {
			return nullWithLength("req", reqLen)
		}
		return core.Call(op, guestBytes(reqPtr, reqLen))
	}))
}

// call_raw is call with attachments (ABI 2, core.CallRaw): documents as raw
// bytes beside the request, which name them {"$raw": i}. Both buffers are
// read in place; over the cap (request and attachments together) neither is
// read.
//
//go:wasmexport call_raw
func call_raw(opPtr unsafe.Pointer, opLen uint32, reqPtr unsafe.Pointer, reqLen uint32, attPtr unsafe.Pointer, attLen uint32) uint64 {
	return respond(guardedCall(opPtr, opLen, func(op string) []byte {
		switch {
		case reqPtr == nil && reqLen > 0:
			return nullWithLength("req", reqLen)
		case attPtr == nil && attLen > 0:
			return nullWithLength("att", attLen)
		}
		return core.CallRaw(op, guestBytes(reqPtr, reqLen), guestBytes(attPtr, attLen))
	}))
}

// nullWithLength is the answer to a null pointer passed with a length, the
// words the C library uses.
func nullWithLength(what string, n uint32) []byte {
	return core.ErrorEnvelope(cerr.BadRequest, cerr.New(cerr.BadRequest, "%s is NULL with %s_len %d", what, what, n).Msg)
}

// respond hands the response to the host as ptr<<32|len, then collects if
// it is time to.
func respond(resp []byte) uint64 {
	// A copy: the core may return a slice it shares or that aliases the
	// request, and the host must get an address of its own to free.
	p, buf := alloc(len(resp))
	copy(buf, resp)
	collect()
	return uint64(p)<<32 | uint64(len(resp))
}

func guardedCall(opPtr unsafe.Pointer, opLen uint32, run func(op string) []byte) (resp []byte) {
	defer func() {
		if r := recover(); r != nil {
			resp = core.ErrorEnvelope(cerr.Internal, cerr.New(cerr.Internal, "panic in wasm call: %v", r).Msg)
		}
	}()
	if refusal != "" {
		return core.ErrorEnvelope(cerr.Internal, refusal)
	}
	// A null pointer with a length is the host's mistake, answered as the
	// C library answers it (bad_request), not as a panic (internal).
	if opPtr == nil && opLen > 0 {
		return nullWithLength("op", opLen)
	}
	op := string(guestBytes(opPtr, opLen))
	if beforeCall != nil {
		beforeCall(op)
	}
	return run(op)
}

// guestBytes views n bytes of linear memory at ptr without copying.
func guestBytes(ptr unsafe.Pointer, n uint32) []byte {
	if n == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(ptr), n)
}

// alloc returns a new n-byte buffer and its address, and keeps it until
// free. The address is unique among live buffers, also for n == 0.
func alloc(n int) (uint32, []byte) {
	buf := make([]byte, n+1) // +1: a distinct, non-nil address even for n == 0
	p := uint32(uintptr(unsafe.Pointer(&buf[0])))
	pinned[p] = buf
	return p, buf[:n]
}

// setGCPercent is runtime/debug.SetGCPercent without runtime/debug, which
// links fmt and os (and through fmt reflect) into the module for its stack
// and build-info printers. The runtime defines this symbol itself for
// runtime/debug (a push linkname in runtime/mgcpacer.go); if a Go release
// drops it the module fails to link, it never runs with GOGC 100 unnoticed.
//
//go:linkname setGCPercent runtime/debug.setGCPercent
func setGCPercent(percent int32) int32
