// Command bench measures the three builds of the core and writes
// docs/benchmarks.md (make bench).
//
// It times a continuity check of 10 to 10,000 tools natively, in wazero
// and from C through libcrawlcheck.so, and the wasm module's size, cold and
// cached compilation and instantiation. The targets are reported, not
// asserted: a slow machine should not fail a build, but the numbers should
// be in front of whoever changes the core.
//
// Usage: go run ./hosttest/bench [-o docs/benchmarks.md]
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/hosttest/artifact"
	"github.com/crawlcheck/verifier/hosttest/chost"
	"github.com/crawlcheck/verifier/hosttest/wasmhost"
)

func main() {
	out := flag.String("o", "docs/benchmarks.md", "where to write the report")
	memOnly := flag.Bool("mem", false, "measure memory per input byte only, and print it (memory.go)")
	child := flag.String("mem-child", "", "internal: one memory case, `OP:FILE` (the request in FILE)")
	flag.Func("mem-sizes", "list sizes of the memory cases in MB, comma-separated (default 1,10,50)", setMemSizes)
	flag.Parse()
	if *child != "" || *memOnly {
		if err := memoryMain(*child); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// sizes are the tool counts of the latency table.
var sizes = []int{10, 100, 1000, 10000}

type row struct {
	tools            int
	native, wasm, so time.Duration
}

func run(out string) error {
	dir, err := os.MkdirTemp("", "bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	set, err := artifact.Build(dir)
	if err != nil {
		return err
	}
	wasm, err := os.ReadFile(set.WASM)
	if err != nil {
		return err
	}
	ctx := context.Background()

	// Compilation and instantiation.
	cacheRoot := filepath.Join(dir, "cache")
	start := time.Now()
	h, err := wasmhost.Compile(ctx, wasm, wasmhost.Config{CacheRoot: cacheRoot})
	if err != nil {
		return err
	}
	cold := time.Since(start)
	h.Close(ctx)
	start = time.Now()
	h, err = wasmhost.Compile(ctx, wasm, wasmhost.Config{CacheRoot: cacheRoot})
	if err != nil {
		return err
	}
	cached := time.Since(start)
	defer h.Close(ctx)
	const instances = 5
	start = time.Now()
	for range instances {
		if err := h.Prewarm(ctx); err != nil {
			return err
		}
	}
	instantiate := time.Since(start) / instances

	// Latency per call.
	op := "continuity_check"
	if !listed(op) {
		op = "version" // the plumbing, until the core has the op
	}
	var rows []row
	for _, n := range sizes {
		req, err := request(op, n)
		if err != nil {
			return err
		}
		r := row{tools: n}
		r.native = perCall(func() { core.Call(op, req) })
		r.wasm = perCall(func() {
			if _, err = h.Call(ctx, op, req); err != nil {
				panic(err)
			}
		})
		stdout, err := chost.Run(set.Harness, set.Lib, []chost.Request{{Op: op, Body: req}}, "bench")
		if err != nil {
			return err
		}
		var iters int
		var ns float64
		if _, err := fmt.Sscanf(string(stdout), "%d %f", &iters, &ns); err != nil {
			return fmt.Errorf("harness bench said %q: %w", stdout, err)
		}
		r.so = time.Duration(ns)
		rows = append(rows, r)
		fmt.Fprintf(os.Stderr, "bench: %d tools done\n", n)
	}

	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(wasm)
	zw.Close()

	memory, err := memoryReport(dir)
	if err != nil {
		return err
	}
	report := render(op, rows, len(wasm), gz.Len(), cold, cached, instantiate) + memory
	fmt.Print(report)
	return os.WriteFile(out, []byte(report), 0o644)
}

// perCall is the time of one call of f, by testing.Benchmark's rules.
func perCall(f func()) time.Duration {
	res := testing.Benchmark(func(b *testing.B) {
		for b.Loop() {
			f()
		}
	})
	return time.Duration(res.NsPerOp())
}

func listed(op string) bool {
	var env struct {
		Result struct {
			Ops []string `json:"ops"`
		} `json:"result"`
	}
	json.Unmarshal(core.Call("version", []byte("{}")), &env)
	for _, o := range env.Result.Ops {
		if o == op {
			return true
		}
	}
	return false
}

// request is the call measured for n tools: a continuity check of n tools
// observed in one page against a lockfile of the same tools with one
// description changed since approval, so the whole path runs (hash, diff,
// policy, record).
func request(op string, n int) ([]byte, error) {
	if op == "version" {
		return []byte("{}"), nil
	}
	tools := func(changed int) string {
		ts := make([]string, n)
		for i := range ts {
			desc := fmt.Sprintf("Reads item %d of the catalogue and returns it as JSON.", i)
			if i == changed {
				desc += " Also sends it elsewhere."
			}
			ts[i] = fmt.Sprintf(`{"name":"tool_%05d","description":%q,"inputSchema":{"type":"object","properties":{"id":{"type":"string","description":"the item id"},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["id"]},"annotations":{"readOnlyHint":true}}`, i, desc)
		}
		return "[" + strings.Join(ts, ",") + "]"
	}
	lockResp := core.Call("make_lock", []byte(`{"tools":`+tools(-1)+`,"approved_at":"2026-10-01T00:00:00Z"}`))
	var env struct {
		OK     bool `json:"ok"`
		Result struct {
			Lock string `json:"lock"`
		} `json:"result"`
	}
	if err := json.Unmarshal(lockResp, &env); err != nil || !env.OK {
		return nil, fmt.Errorf("make_lock for %d tools: %s", n, lockResp)
	}
	page, _ := json.Marshal(`{"tools":` + tools(n/2) + `}`)
	lock, _ := json.Marshal(env.Result.Lock)
	req := []byte(`{"now":"2026-10-07T10:45:00Z","mode":"enforce","lock":` + string(lock) +
		`,"observed":{"endpoint":"https://mcp.example.com/mcp","pages":[` + string(page) + `]}}`)
	if resp := core.Call(op, req); !bytes.HasPrefix(resp, []byte(`{"ok":true`)) {
		return nil, fmt.Errorf("%s for %d tools: %.300s", op, n, resp)
	}
	return req, nil
}

func render(op string, rows []row, raw, gz int, cold, cached, instantiate time.Duration) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Benchmarks\n\n")
	p("Generated by `make bench` (hosttest/bench) on %s/%s, %d cores, %s, wazero compiler engine.\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	p("Numbers are from one machine and one run: compare ratios, not absolutes.\n")
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		p("Load average when written: %s (other work on the machine inflates every column).\n", strings.Join(strings.Fields(string(load))[:3], " "))
	}
	p("\n")
	if op == "version" {
		p("**The core has no continuity_check yet: the table times the `version` op (the plumbing only).**\n\n")
	}
	p("## Latency per call: `%s`\n\n", op)
	p("One page of n tools against a lockfile of the same tools, one description changed since approval.\n")
	p("The .so column is timed inside the C harness (hosttest/c/harness.c), without pipes.\n\n")
	p("| tools | native Go | wazero | wazero / native | .so from C | .so − native |\n")
	p("|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		p("| %d | %s | %s | %.2f× | %s | %s |\n", r.tools, dur(r.native), dur(r.wasm),
			float64(r.wasm)/float64(r.native), dur(r.so), dur(r.so-r.native))
	}
	p("\n## The wasm module\n\n")
	p("| measure | value |\n|---|---:|\n")
	p("| size, raw | %.2f MB (%d bytes) |\n", float64(raw)/1e6, raw)
	p("| size, gzip -9 | %.2f MB (%d bytes) |\n", float64(gz)/1e6, gz)
	p("| wazero compile, cold | %s |\n", dur(cold))
	p("| wazero compile, from the compilation cache | %s |\n", dur(cached))
	p("| instantiate (+ `_initialize`, abi check) | %s |\n", dur(instantiate))
	p("\n## Targets (reported, not asserted)\n\n")
	var at1000 row
	for _, r := range rows {
		if r.tools == 1000 {
			at1000 = r
		}
	}
	check := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**missed**"
	}
	wasmRatio := float64(at1000.wasm) / float64(at1000.native)
	soBound := time.Duration(1.3*float64(at1000.native)) + 2*time.Microsecond
	p("| target | measured | |\n|---|---:|---|\n")
	p("| wazero within 4× native at 1,000 tools | %.2f× | %s |\n", wasmRatio, check(wasmRatio <= 4))
	p("| .so within 1.3× native + 2 µs at 1,000 tools | %s vs %s | %s |\n", dur(at1000.so), dur(soBound), check(at1000.so <= soBound))
	p("| wasm ≤ 3.5 MB raw | %.2f MB | %s |\n", float64(raw)/1e6, check(raw <= 3_500_000))
	p("| cached compile + instantiate ≤ 200 ms | %s | %s |\n", dur(cached+instantiate), check(cached+instantiate <= 200*time.Millisecond))
	p("%s", whereWasmStands)
	return b.String()
}

// whereWasmStands explains the wasm rows, measured inside the guest; it does
// not change from run to run.
const whereWasmStands = `
## Where the wasm time and size go

Timed inside the guest under wazero: SHA-256 runs at about 42 MB/s (natively it uses the SHA
instructions, about 50× faster), and plain byte loops run about 6× slower than natively. A check
hashes about 2 MB for 1,000 tools (each tool once, the lockfile's canonical form once, part
hashes only for changed tools), so hashing alone keeps wazero far from 4× of native; the host's
own overhead is small. Inside the module GOGC is 400: a call's garbage is collected on the
caller's only thread.

Size: the Go wasm runtime, fmt (linked through math/big and encoding/hex even though the core
formats its own messages), and crypto/ed25519 with crypto/rand make most of the 4 MB; dropping
net/url and the core's own fmt use took it from 4.62 MB to 4.15 MB, and wasm-opt -Oz saves only
about 5% more.
`

// dur prints a duration with three significant digits in a fitting unit.
func dur(d time.Duration) string {
	neg := ""
	if d < 0 {
		neg, d = "−", -d
	}
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%s%.3g s", neg, d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%s%.3g ms", neg, float64(d)/1e6)
	case d >= time.Microsecond:
		return fmt.Sprintf("%s%.3g µs", neg, float64(d)/1e3)
	}
	return fmt.Sprintf("%s%d ns", neg, d.Nanoseconds())
}
