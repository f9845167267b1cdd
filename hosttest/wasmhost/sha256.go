package wasmhost

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// instantiateSHA256 adds the module "crawlcheck" with the one function the
// wasm imports besides WASI: sha256(data_ptr, data_len, out_ptr) -> i32
// (docs/abi.md). It writes the digest at out_ptr and returns 1, or returns
// 0 when sum says the host has none; data outside memory traps the call.
func instantiateSHA256(ctx context.Context, rt wazero.Runtime, sum func([]byte) ([32]byte, bool)) error {
	if sum == nil {
		sum = func(b []byte) ([32]byte, bool) { return sha256.Sum256(b), true }
	}
	fn := func(ctx context.Context, mod api.Module, stack []uint64) {
		mem := mod.Memory()
		data, ok := mem.Read(uint32(stack[0]), uint32(stack[1]))
		if !ok {
			panic(fmt.Errorf("crawlcheck.sha256: [%d, +%d) is outside memory", uint32(stack[0]), uint32(stack[1])))
		}
		d, ok := sum(data)
		if !ok {
			stack[0] = 0
			return
		}
		if !mem.Write(uint32(stack[2]), d[:]) {
			panic(fmt.Errorf("crawlcheck.sha256: out pointer %d is outside memory", uint32(stack[2])))
		}
		stack[0] = 1
	}
	i32 := api.ValueTypeI32
	_, err := rt.NewHostModuleBuilder("crawlcheck").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(fn), []api.ValueType{i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("data_ptr", "data_len", "out_ptr").
		Export("sha256").
		Instantiate(ctx)
	if err != nil {
		return fmt.Errorf("wasmhost: instantiate crawlcheck: %w", err)
	}
	return nil
}
