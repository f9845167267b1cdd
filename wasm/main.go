// Command wasm is the CrawlCheck core as a WASI preview 1 reactor:
// crawlcheck.wasm, loaded by wazero, Node (node:wasi) and browsers (a shim).
//
// It is the binary interface and nothing else (docs/abi.md): every decision
// is core.Call's. The host runs _initialize once, then for each call writes
// the op and the request into buffers from malloc, calls call, reads the
// response it points to and frees all three.
//
// Buffers are Go slices kept reachable in a map keyed by their address until
// free: Go's collector does not move objects, so an address handed to the
// host stays valid exactly as long as the map holds the slice.
//
// Build (see the Makefile's wasm target):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o build/crawlcheck.wasm ./wasm
package main

import (
	"runtime/debug"
	"strings"
	"unsafe"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/core/canon"
	"github.com/crawlcheck/verifier/core/cerr"
)

// pinned holds every buffer handed to the host, by address, until free.
// A reactor runs one call at a time, so the map needs no lock.
var pinned = map[uint32][]byte{}

// beforeCall is nil in release builds; the crawlcheck_testpanic build sets it
// to panic inside this layer, to prove the layer's own recover works.
var beforeCall func(op string)

func main() {}

// A call's garbage is freed by the next collections; in WebAssembly the
// collector runs on the caller's only thread and every cycle is paid for in
// latency, so the module collects less often than a native process would:
// a 1,000-tool check allocates about 16 MB, and the default (GOGC=100)
// would collect several times inside that one call.
func init() { debug.SetGCPercent(400) }

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
	resp := guardedCall(opPtr, opLen, reqPtr, reqLen)
	// A copy: core.Call may return a slice it shares or that aliases the
	// request, and the host must get an address of its own to free.
	p, buf := alloc(len(resp))
	copy(buf, resp)
	return uint64(p)<<32 | uint64(len(resp))
}

func guardedCall(opPtr unsafe.Pointer, opLen uint32, reqPtr unsafe.Pointer, reqLen uint32) (resp []byte) {
	defer func() {
		if r := recover(); r != nil {
			resp = errorEnvelope(cerr.Internal, cerr.New(cerr.Internal, "panic in wasm call: %v", r).Msg)
		}
	}()
	// A null pointer with a length is the host's mistake, answered as the
	// C library answers it (bad_request), not as a panic (internal).
	if opPtr == nil && opLen > 0 {
		return errorEnvelope(cerr.BadRequest, cerr.New(cerr.BadRequest, "op is NULL with op_len %d", opLen).Msg)
	}
	if reqPtr == nil && reqLen > 0 {
		return errorEnvelope(cerr.BadRequest, cerr.New(cerr.BadRequest, "req is NULL with req_len %d", reqLen).Msg)
	}
	op := string(guestBytes(opPtr, opLen))
	if beforeCall != nil {
		beforeCall(op)
	}
	return core.Call(op, guestBytes(reqPtr, reqLen))
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

// errorEnvelope is the canonical (RFC 8785) error envelope of docs/abi.md,
// for the failures this layer answers itself. The message is made valid
// UTF-8 first: a panic value may carry any bytes.
func errorEnvelope(code cerr.Code, msg string) []byte {
	b := append([]byte(`{"error":{"code":"`), code...)
	b = append(b, `","message":`...)
	b = canon.AppendString(b, strings.ToValidUTF8(msg, "\uFFFD"))
	return append(b, `},"ok":false}`...)
}
