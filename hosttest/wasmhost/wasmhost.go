// Package wasmhost runs crawlcheck.wasm under wazero and exposes the core's
// one entry point, Call, to Go programs.
//
// It is what every Go host of the module needs, and what the byte-identity
// tests use, so the tests exercise the same code a host ships:
//
//   - The compiler engine, with a compilation cache on disk in a directory
//     named after the wazero version and the module's SHA-256, so a cache is
//     never shared between builds it does not belong to and a warm start
//     skips compilation.
//   - The module is a WASI reactor: wazero would not run its start function,
//     so each instance is created with no start functions and _initialize is
//     called explicitly, once.
//   - A pool of instances, one per concurrent caller, created on demand and
//     reused. A wasm instance runs one call at a time; the pool is how Host
//     is safe for concurrent use.
//   - A deadline without WithCloseOnContextDone (see guard.go for why and
//     what it costs).
//   - Requests over the 64 MiB cap are refused before a byte is copied into
//     the module.
//   - The module's one non-WASI import, crawlcheck.sha256, is Go's
//     crypto/sha256 (sha256.go), unless Config says otherwise.
package wasmhost

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// MaxRequest is the request cap of docs/abi.md, in bytes.
const MaxRequest = 64 << 20

// ABIVersion is the abi_version this host speaks.
const ABIVersion = 2

// Config tunes a Host. The zero Config is ready to use.
type Config struct {
	// CacheRoot is the directory under which the compilation cache lives;
	// "" means os.UserCacheDir()/crawlcheck, or no disk cache if there is
	// no user cache directory.
	CacheRoot string

	// SHA256 answers the module's crawlcheck.sha256 import: the digest and
	// true, or false for a host with no SHA-256 to offer, which makes the
	// module use its own. nil is crypto/sha256. Tests set it to run the
	// module's own SHA-256, and to prove a wrong one is refused.
	SHA256 func(data []byte) (sum [32]byte, ok bool)
}

// Host runs calls on a pool of instances of one compiled module.
// It is safe for concurrent use; Close it to release the runtime.
type Host struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	cacheDir string

	mu     sync.Mutex
	idle   []*instance
	closed bool
}

// New compiles the module (or loads it from the compilation cache) and
// checks its abi_version on a first instance, which it keeps in the pool.
func New(ctx context.Context, wasm []byte, cfg Config) (*Host, error) {
	h, err := Compile(ctx, wasm, cfg)
	if err != nil {
		return nil, err
	}
	inst, err := h.instantiate(ctx)
	if err != nil {
		h.Close(ctx)
		return nil, err
	}
	h.put(inst)
	return h, nil
}

// Compile is New without the first instance: the module compiled (or
// loaded from the cache) and nothing run yet. Benchmarks use it to time
// compilation and instantiation apart.
func Compile(ctx context.Context, wasm []byte, cfg Config) (*Host, error) {
	return compile(ctx, wasm, cfg, wazero.NewRuntimeConfigCompiler())
}

// compile is Compile on a given runtime configuration; BenchmarkGuard
// compares against wazero's own guard with it.
func compile(ctx context.Context, wasm []byte, cfg Config, rc wazero.RuntimeConfig) (*Host, error) {
	sum := sha256.Sum256(wasm)
	dir, err := cacheDir(cfg.CacheRoot, hex.EncodeToString(sum[:]))
	if err != nil {
		return nil, err
	}
	if dir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(dir)
		if err != nil {
			return nil, fmt.Errorf("wasmhost: compilation cache %s: %w", dir, err)
		}
		rc = rc.WithCompilationCache(cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if err := instantiateWASI(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	if err := instantiateSHA256(ctx, rt, cfg.SHA256); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("wasmhost: compile module: %w", err)
	}
	return &Host{rt: rt, compiled: compiled, cacheDir: dir}, nil
}

// CacheDir is the compilation cache directory in use, "" if none.
func (h *Host) CacheDir() string { return h.cacheDir }

// Compiled is the compiled module, for callers that inspect its imports
// and exports.
func (h *Host) Compiled() wazero.CompiledModule { return h.compiled }

// Prewarm adds one instance to the pool, so the next caller does not pay
// for instantiation.
func (h *Host) Prewarm(ctx context.Context) error {
	inst, err := h.instantiate(ctx)
	if err != nil {
		return err
	}
	h.put(inst)
	return nil
}

// Call runs op on request in a pooled instance and returns the response
// envelope. The error is for what the module could not answer: a deadline
// or cancellation of ctx (the instance is then discarded), a trap, a closed
// Host. Everything the core says, errors included, is in the envelope.
//
// A request over MaxRequest is answered by the module with input_too_large
// without being copied in.
func (h *Host) Call(ctx context.Context, op string, request []byte) ([]byte, error) {
	return h.CallRaw(ctx, op, request, nil)
}

// CallRaw is Call through the ABI-2 export call_raw: documents travel as
// attachments beside the request (docs/abi.md). Nil attachments make it
// Call, through the ABI-1 export call; empty ones go through call_raw.
func (h *Host) CallRaw(ctx context.Context, op string, request, attachments []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("wasmhost: call %s: %w", op, err)
	}
	inst, err := h.get(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := inst.run(ctx, op, request, attachments)
	if err != nil {
		inst.close()
		return nil, fmt.Errorf("wasmhost: call %s: %w", op, err)
	}
	h.put(inst)
	return resp, nil
}

// Close closes every instance and the runtime. Calls in flight fail.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	h.idle = nil
	h.mu.Unlock()
	return h.rt.Close(ctx)
}

// Idle is the number of instances waiting in the pool.
func (h *Host) Idle() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.idle)
}

// MemoryBytes is the linear memory of the instances waiting in the pool, in
// bytes: what the module holds of the host's memory. A wasm memory never
// shrinks, so a long-lived host watches this to see that it stays flat.
func (h *Host) MemoryBytes() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	var n uint64
	for _, inst := range h.idle {
		n += uint64(inst.mem.Size())
	}
	return n
}

var errClosed = errors.New("wasmhost: host is closed")

func (h *Host) get(ctx context.Context) (*instance, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, errClosed
	}
	if n := len(h.idle); n > 0 {
		inst := h.idle[n-1]
		h.idle = h.idle[:n-1]
		h.mu.Unlock()
		return inst, nil
	}
	h.mu.Unlock()
	return h.instantiate(ctx)
}

func (h *Host) put(inst *instance) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		inst.close()
		return
	}
	h.idle = append(h.idle, inst)
	h.mu.Unlock()
}

// instantiate creates an instance, runs _initialize and checks abi_version.
func (h *Host) instantiate(ctx context.Context) (*instance, error) {
	mc := wazero.NewModuleConfig().
		WithName(""). // anonymous: many instances of one module in one runtime
		WithStartFunctions().
		WithRandSource(rand.Reader)
	mod, err := h.rt.InstantiateModule(ctx, h.compiled, mc)
	if err != nil {
		return nil, fmt.Errorf("wasmhost: instantiate: %w", err)
	}
	inst := &instance{mod: mod, mem: mod.Memory()}
	inst.ctx = context.WithValue(context.Background(), instanceKey{}, inst)
	fail := func(err error) (*instance, error) {
		mod.Close(ctx)
		return nil, fmt.Errorf("wasmhost: instantiate: %w", err)
	}
	fns := map[string]*api.Function{"malloc": &inst.malloc, "free": &inst.free, "call": &inst.call, "call_raw": &inst.callRaw}
	for name, fn := range fns {
		if *fn = mod.ExportedFunction(name); *fn == nil {
			return fail(fmt.Errorf("module does not export %s", name))
		}
	}
	if inst.mem == nil {
		return fail(errors.New("module does not export memory"))
	}
	init, version := mod.ExportedFunction("_initialize"), mod.ExportedFunction("abi_version")
	if init == nil || version == nil {
		return fail(errors.New("module does not export _initialize and abi_version"))
	}
	if _, err := init.Call(inst.ctx); err != nil {
		return fail(fmt.Errorf("_initialize: %w", err))
	}
	v, err := version.Call(inst.ctx)
	if err != nil {
		return fail(fmt.Errorf("abi_version: %w", err))
	}
	if uint32(v[0]) != ABIVersion {
		return fail(fmt.Errorf("module speaks abi %d, this host %d", uint32(v[0]), ABIVersion))
	}
	return inst, nil
}

// cacheDir returns the compilation cache directory for a module, creating
// it: <root>/wazero-<version>-<module sha256>.
func cacheDir(root, sum string) (string, error) {
	if root == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", nil // no per-user cache: compile in memory every time
		}
		root = filepath.Join(base, "crawlcheck")
	}
	dir := filepath.Join(root, "wazero-"+wazeroVersion()+"-"+sum)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("wasmhost: compilation cache: %w", err)
	}
	return dir, nil
}

// wazeroVersion is the wazero module version this program was built with,
// "devel" if neither the build information nor the source path names it.
func wazeroVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/tetratelabs/wazero" {
				if dep.Replace != nil {
					dep = dep.Replace
				}
				if dep.Version != "" && dep.Version != "(devel)" {
					return dep.Version
				}
			}
		}
	}
	// Test binaries carry no dependency list, but a function compiled from
	// the module cache has the version in its source path.
	f := runtime.FuncForPC(reflect.ValueOf(wazero.NewRuntime).Pointer())
	if f != nil {
		file, _ := f.FileLine(f.Entry())
		if _, after, ok := strings.Cut(file, "tetratelabs/wazero@"); ok {
			if v, _, _ := strings.Cut(after, "/"); v != "" {
				return v
			}
		}
	}
	return "devel"
}
