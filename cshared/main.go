// Command cshared is the CrawlCheck core as a C shared library,
// libcrawlcheck.so, for ctypes and C hosts.
//
// It is the binary interface and nothing else (docs/abi.md, crawlcheck.h):
// every decision is core.Call's or core.CallRaw's. The request (and the
// attachments of crawlcheck_call_raw) is read in place from C memory
// (no copy; core.Call keeps nothing after it returns) and the response is
// copied once into malloc'd memory the caller frees, so no Go pointer ever
// crosses to C. A request over the cap is refused by core.Call by its length
// before a byte is read (hosttest pins this by passing unreadable memory),
// so this layer needs no cap of its own.
//
// Build (see the Makefile's cshared target):
//
//	go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o build/libcrawlcheck.so ./cshared
package main

/*
#include <stdlib.h>
#include <stdint.h>
*/
import "C"

import (
	"unsafe"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/core/cerr"
)

// beforeCall is nil in release builds; the crawlcheck_testpanic build sets it
// to panic inside this layer, to prove the layer's own recover works.
var beforeCall func(op string)

func main() {}

// The public functions of crawlcheck.h are C (forkguard.c): each first
// checks that this is the process that loaded the library, since a Go
// runtime does not survive fork and entering it in a forked child hangs.
// Only then do they call these.

//export crawlcheck_go_abi_version
func crawlcheck_go_abi_version() C.uint32_t { return core.ABIVersion }

//export crawlcheck_go_call
func crawlcheck_go_call(op *C.char, req *C.uint8_t, reqLen C.size_t, outLen *C.size_t) *C.uint8_t {
	if outLen == nil {
		return nil
	}
	return respond(guardedCall(op, req, reqLen, nil, 0, false), outLen)
}

// crawlcheck_go_call_raw is crawlcheck_go_call with attachments (ABI 2):
// documents as raw bytes beside the request, which names them {"$raw": i}.
//
//export crawlcheck_go_call_raw
func crawlcheck_go_call_raw(op *C.char, req *C.uint8_t, reqLen C.size_t, att *C.uint8_t, attLen C.size_t, outLen *C.size_t) *C.uint8_t {
	if outLen == nil {
		return nil
	}
	return respond(guardedCall(op, req, reqLen, att, attLen, true), outLen)
}

// respond copies the response into malloc'd memory for the caller.
func respond(resp []byte, outLen *C.size_t) *C.uint8_t { // One byte more for a NUL terminator, so the response is also a C
	// string (JSON escapes every NUL inside it) and malloc never sees 0.
	// cgo's C.malloc aborts rather than return NULL.
	out := C.malloc(C.size_t(len(resp) + 1))
	buf := unsafe.Slice((*byte)(out), len(resp)+1)
	buf[copy(buf, resp)] = 0
	*outLen = C.size_t(len(resp))
	return (*C.uint8_t)(out)
}

func guardedCall(op *C.char, req *C.uint8_t, reqLen C.size_t, att *C.uint8_t, attLen C.size_t, raw bool) (resp []byte) {
	defer func() {
		if r := recover(); r != nil {
			resp = core.ErrorEnvelope(cerr.Internal, cerr.New(cerr.Internal, "panic in C call: %v", r).Msg)
		}
	}()
	if req == nil && reqLen > 0 {
		return core.ErrorEnvelope(cerr.BadRequest, cerr.New(cerr.BadRequest, "req is NULL with req_len %d", uint64(reqLen)).Msg)
	}
	if att == nil && attLen > 0 {
		return core.ErrorEnvelope(cerr.BadRequest, cerr.New(cerr.BadRequest, "att is NULL with att_len %d", uint64(attLen)).Msg)
	}
	var name string
	if op != nil {
		name = C.GoString(op)
	}
	if beforeCall != nil {
		beforeCall(name)
	}
	if uint64(reqLen) > core.MaxRequestBytes || uint64(attLen) > core.MaxRequestBytes-uint64(reqLen) {
		// Refused by its length, as core.Call would: a length such as
		// SIZE_MAX fits no Go slice (and the sum may overflow).
		total := uint64(reqLen) + uint64(attLen)
		if total < uint64(reqLen) {
			total = ^uint64(0)
		}
		return core.Oversized(name, total, raw)
	}
	if raw {
		return core.CallRaw(name, cBytes(req, reqLen), cBytes(att, attLen))
	}
	return core.Call(name, cBytes(req, reqLen))
}

// cBytes views n bytes of C memory without copying or reading them.
func cBytes(p *C.uint8_t, n C.size_t) []byte {
	if n == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n))
}
