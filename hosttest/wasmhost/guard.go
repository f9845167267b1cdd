package wasmhost

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// The deadline guard.
//
// wazero's own guard, RuntimeConfig.WithCloseOnContextDone, compiles a call
// back into Go at every loop header and function entry of the module, and
// watches each call's context from a new goroutine: per call that is several
// times the cost of the call itself for this module (BenchmarkGuard). And
// closing a module from another goroutine without it does not stop the
// machine code that is running: wazero checks the closed flag only when the
// call returns.
//
// So the guard uses the calls the module makes anyway. The Go runtime inside
// the module reads the clock (clock_time_get) at every garbage collection and
// scheduling decision, and yields (sched_yield) when it has nothing to run;
// a call that computes for long allocates, so it collects. Those two imports
// are replaced by versions that first look at the instance's expired flag,
// set from context.AfterFunc when the caller's context ends, and trap if it
// is set. The trap unwinds the guest, the call returns the context's error
// and the instance is discarded: its Go runtime was interrupted mid-flight.
//
// Cost per call: one context.AfterFunc registration when the context can end
// (none for context.Background), and an atomic load per clock read.
// Limit: a loop that neither allocates nor yields is not interrupted; the
// core has none (every op is linear in its input, which is capped).

// instanceKey carries the *instance in the context of its guest calls.
type instanceKey struct{}

// checkpoint traps the guest if the instance's caller has given up.
func checkpoint(ctx context.Context) {
	if in, ok := ctx.Value(instanceKey{}).(*instance); ok && in.expired.Load() {
		panic(sys.NewExitError(sys.ExitCodeDeadlineExceeded))
	}
}

// WASI errno values (wasi_snapshot_preview1).
const (
	errnoSuccess = 0
	errnoFault   = 21
	errnoInval   = 28
)

// epoch anchors the monotonic clock the module sees.
var epoch = time.Now()

// instantiateWASI adds wasi_snapshot_preview1 to rt with the two
// checkpointed imports in place of wazero's.
func instantiateWASI(ctx context.Context, rt wazero.Runtime) error {
	b := rt.NewHostModuleBuilder(wasi_snapshot_preview1.ModuleName)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(b)
	b.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(clockTimeGet),
			[]api.ValueType{api.ValueTypeI32, api.ValueTypeI64, api.ValueTypeI32},
			[]api.ValueType{api.ValueTypeI32}).
		WithParameterNames("id", "precision", "result_timestamp").
		Export("clock_time_get")
	b.NewFunctionBuilder().
		WithGoFunction(api.GoFunc(func(ctx context.Context, stack []uint64) {
			checkpoint(ctx)
			stack[0] = errnoSuccess
		}), nil, []api.ValueType{api.ValueTypeI32}).
		Export("sched_yield")
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("wasmhost: instantiate %s: %w", wasi_snapshot_preview1.ModuleName, err)
	}
	return nil
}

// clockTimeGet is WASI clock_time_get for the realtime (0) and monotonic (1)
// clocks, as wazero's, behind a checkpoint.
func clockTimeGet(ctx context.Context, mod api.Module, stack []uint64) {
	checkpoint(ctx)
	var t int64
	switch id := uint32(stack[0]); id {
	case 0:
		t = time.Now().UnixNano()
	case 1:
		t = int64(time.Since(epoch))
	default:
		stack[0] = errnoInval
		return
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(t))
	if !mod.Memory().Write(uint32(stack[2]), b[:]) {
		stack[0] = errnoFault
		return
	}
	stack[0] = errnoSuccess
}
