package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/tetratelabs/wazero/api"
)

// instance is one instantiated module: one call at a time.
//
// It keeps its op, request and attachment buffers between calls (growing
// one when a larger input comes), so a call costs two guest calls, call and
// free, instead of six or eight.
type instance struct {
	mod                         api.Module
	mem                         api.Memory
	malloc, free, call, callRaw api.Function

	// ctx is what every guest call runs under: it carries the instance to
	// the WASI checkpoints of guard.go.
	ctx context.Context
	// expired is set when the caller's context ends during a call; the next
	// checkpoint traps and the instance is discarded.
	expired atomic.Bool

	op, req, att buffer
	stack        [6]uint64 // parameters and results of guest calls, reused
}

// buffer is a guest allocation the instance keeps.
type buffer struct{ ptr, size uint32 }

// run makes one call. An error means the instance must not be reused.
func (in *instance) run(ctx context.Context, op string, request, attachments []byte) ([]byte, error) {
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { in.expired.Store(true) })
		resp, err := in.exchange(op, request, attachments)
		if !stop() { // the context ended during the call
			return nil, context.Cause(ctx)
		}
		return resp, err
	}
	return in.exchange(op, request, attachments)
}

// exchange makes one call: call for nil attachments, else call_raw.
func (in *instance) exchange(op string, request, attachments []byte) ([]byte, error) {
	opPtr, err := in.write(&in.op, []byte(op))
	if err != nil {
		return nil, fmt.Errorf("op: %w", err)
	}
	// An over-cap request is not copied in: the module refuses it by its
	// length. Its address is the end of memory, so a module that read it
	// anyway would trap instead of answering.
	reqPtr, attPtr := in.mem.Size(), in.mem.Size()
	if len(request)+len(attachments) <= MaxRequest {
		if reqPtr, err = in.write(&in.req, request); err != nil {
			return nil, fmt.Errorf("request: %w", err)
		}
		if attachments != nil {
			if attPtr, err = in.write(&in.att, attachments); err != nil {
				return nil, fmt.Errorf("attachments: %w", err)
			}
		}
	}
	in.stack = [6]uint64{uint64(opPtr), uint64(len(op)), uint64(reqPtr), uint64(min(len(request), 1<<32-1)),
		uint64(attPtr), uint64(min(len(attachments), 1<<32-1))}
	fn := in.call
	if attachments != nil {
		fn = in.callRaw
	}
	if err := fn.CallWithStack(in.ctx, in.stack[:]); err != nil {
		return nil, err
	}
	ptr, n := uint32(in.stack[0]>>32), uint32(in.stack[0])
	view, ok := in.mem.Read(ptr, n)
	if !ok {
		return nil, fmt.Errorf("response [%d, +%d) is outside memory (%d bytes)", ptr, n, in.mem.Size())
	}
	resp := append([]byte(nil), view...)
	in.stack[0] = uint64(ptr)
	if err := in.free.CallWithStack(in.ctx, in.stack[:1]); err != nil {
		return nil, fmt.Errorf("free response: %w", err)
	}
	return resp, nil
}

// write copies b into the kept buffer *buf, reallocating it if too small.
func (in *instance) write(buf *buffer, b []byte) (uint32, error) {
	if uint32(len(b)) > buf.size || buf.ptr == 0 {
		size := min(max(uint32(len(b)), 2*buf.size, 256), MaxRequest)
		if buf.ptr != 0 {
			in.stack[0] = uint64(buf.ptr)
			if err := in.free.CallWithStack(in.ctx, in.stack[:1]); err != nil {
				return 0, fmt.Errorf("free: %w", err)
			}
			*buf = buffer{}
		}
		in.stack[0] = uint64(size)
		if err := in.malloc.CallWithStack(in.ctx, in.stack[:1]); err != nil {
			return 0, fmt.Errorf("malloc(%d): %w", size, err)
		}
		if in.stack[0] == 0 {
			return 0, fmt.Errorf("malloc(%d) refused", size)
		}
		*buf = buffer{ptr: uint32(in.stack[0]), size: size}
	}
	if !in.mem.Write(buf.ptr, b) {
		return 0, errors.New("buffer outside memory")
	}
	return buf.ptr, nil
}

func (in *instance) close() { in.mod.Close(context.Background()) }
