// Command bench measures the builds of the core and writes
// docs/benchmarks.md (make bench-detail).
//
// It times a continuity check of 10 to 10,000 tools natively, in wazero,
// from C through libcrawlcheck.so, and in Node (crawlcheck.wasm under
// node:wasi, hosttest/bench/node/bench.mjs) against a plain-JS peer written
// for the bench; settled (the median of repeated calls) and one-shot (a
// fresh Node process: load and first check). Every host sends the page and
// the lockfile as ABI-2 attachments, the wasm hosts hash through their own
// SHA-256 (crawlcheck.sha256). At 1,000 tools it also times Python calling
// the .so by ctypes against a plain-Python pass (bench/python/bench.py). The
// module's size is measured too. The targets are reported, not asserted: a
// slow machine should not fail a build, but the numbers should be in front
// of whoever changes the core.
//
// With -table it measures issue 23's table instead (table.go, make bench;
// BENCH_ROWS=cli,... measures only those rows of it).
//
// Usage: go run ./hosttest/bench [-table] [-o docs/benchmarks.md]
package main

import (
	"bytes"
	"compress/gzip"
	"context"
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
	"github.com/crawlcheck/verifier/internal/benchdata"
)

func main() {
	out := flag.String("o", "docs/benchmarks.md", "where to write the report")
	memOnly := flag.Bool("mem", false, "measure memory per input byte only, and print it (memory.go)")
	child := flag.String("mem-child", "", "internal: one memory case, `OP:FILE` (the request in FILE)")
	wasmSize := flag.String("wasm-size", "", "print the code bytes each package contributes to `MODULE` (a wasm build keeping its name section; wasmsize.go)")
	table := flag.Bool("table", false, "measure issue 23's table only (table.go) and write its section of -o")
	peakRSS := flag.Bool("peak-rss", false, "internal: run the command after the flags and print its peak resident memory in bytes (table.go's memory row)")
	flag.Func("mem-sizes", "list sizes of the memory cases in MB, comma-separated (default 1,10,50)", setMemSizes)
	flag.Parse()
	if *child != "" || *memOnly {
		if err := memoryMain(*child); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *peakRSS {
		if err := peakRSSMain(flag.Args()); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *wasmSize != "" {
		if err := wasmSizeReport(os.Stdout, *wasmSize); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *table {
		if err := tableMain(*out); err != nil {
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

// sizes are the tool counts of the latency tables.
var sizes = []int{10, 100, 1000, 10000}

const op = "continuity_check"

type row struct {
	tools            int
	native, wasm, so time.Duration
	node             nodeSettled // settled, interleaved in one Node process
	nodeOnce, jsOnce nodeOneShot // fresh processes, medians
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
	var rows []row
	var py pythonResult
	req := []byte(benchdata.RawContinuityRequest)
	for _, n := range sizes {
		page, lock := benchdata.Documents(n)
		if resp := core.CallRaw(op, req, benchdata.Attachments(page, lock)); !bytes.HasPrefix(resp, []byte(`{"ok":true`)) {
			return fmt.Errorf("%s for %d tools: %.300s", op, n, resp)
		}
		pagePath, lockPath := filepath.Join(dir, fmt.Sprintf("page-%d.json", n)), filepath.Join(dir, fmt.Sprintf("lock-%d.json", n))
		if err := os.WriteFile(pagePath, page, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(lockPath, lock, 0o644); err != nil {
			return err
		}
		// Each call's page is one the core has not kept (the walk memo keeps
		// pages by their bytes), in every host: a settled check reads it.
		unseen := benchdata.UnseenAttachments(page, lock)
		r := row{tools: n}
		nativeAtt, wasmAtt := benchdata.Cycle(unseen), benchdata.Cycle(unseen)
		r.native = perCall(func() { core.CallRaw(op, req, nativeAtt()) })
		r.wasm = perCall(func() {
			if _, err = h.CallRaw(ctx, op, req, wasmAtt()); err != nil {
				panic(err)
			}
		})
		cycle := make([]chost.Request, len(unseen))
		for i, a := range unseen {
			cycle[i] = chost.Request{Op: op, Body: req, Attachments: a}
		}
		stdout, err := chost.Run(set.Harness, set.Lib, cycle, "bench_cycle")
		if err != nil {
			return err
		}
		var iters int
		var ns float64
		if _, err := fmt.Sscanf(string(stdout), "%d %f", &iters, &ns); err != nil {
			return fmt.Errorf("harness bench said %q: %w", stdout, err)
		}
		r.so = time.Duration(ns)
		if r.node, err = nodeSettledRun(set.WASM, pagePath, lockPath); err != nil {
			return err
		}
		if r.nodeOnce, r.jsOnce, err = nodeOneShots(set.WASM, pagePath, lockPath); err != nil {
			return err
		}
		if n == 1000 {
			if py, err = pythonRun(set.Lib, pagePath, lockPath); err != nil {
				return err
			}
		}
		rows = append(rows, r)
		fmt.Fprintf(os.Stderr, "bench: %d tools done\n", n)
	}

	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(wasm)
	zw.Close()

	scanReport, err := scanSection(ctx, h)
	if err != nil {
		return err
	}
	memory, err := memoryReport(dir)
	if err != nil {
		return err
	}
	report := render(rows, py, len(wasm), gz.Len(), cold, cached, instantiate) + keptSection(out, whereHeading) + scanReport + memory
	fmt.Print(report)
	return rewriteDetail(out, report)
}

// rewriteDetail writes make bench-detail's report to out, keeping what it
// does not measure: the sections written by hand (handHeadings) after the
// report, make load's section at the end, and make bench's table with the
// notes on the session rows (written by hand) before the first section,
// where they were.
func rewriteDetail(out, report string) error {
	table := keptSection(out, tableHeading) + keptSection(out, sessionsHeading)
	var hand strings.Builder
	for _, h := range handHeadings {
		hand.WriteString(keptSection(out, h))
	}
	if err := os.WriteFile(out, []byte(report+hand.String()+keptSection(out, issuerHeading)), 0o644); err != nil || table == "" {
		return err
	}
	return writeSection(out, tableHeading, strings.TrimPrefix(table, "\n"))
}

// sessionsHeading starts the notes written by hand on where a session's time
// goes in Node and Python (issue 23): no run measures them.
const sessionsHeading = "## Where a session's time goes"

// handHeadings start the sections written by hand from measurements no run
// of make bench-detail makes (the scan and classifier rounds of issue 38,
// the issuer's attack runs and profiles, the core's state of issue 33):
// kept, in this order, after the report.
var handHeadings = []string{
	"## The scan and the change classes together (issue 38 item 4)",
	"## The issuer under attack (`make attack-issuer`)",
	"## Where the issuer's CPU goes (a profile)",
	"## The core's state (issue 33)",
}

// issuerHeading starts the section make load writes (hosttest/issuerload):
// make bench and make bench-detail measure other things and keep it as it is.
const issuerHeading = "## The issuer under load (`make load`)"

// keptSection is the section of the file at path that starts with heading,
// up to the next section, or "" when it has none.
func keptSection(path, heading string) string {
	old, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	text := string(old)
	i := strings.Index(text, heading)
	if i < 0 {
		return ""
	}
	rest := text[i:]
	if j := strings.Index(rest[len(heading):], "\n## "); j >= 0 {
		rest = rest[:len(heading)+j+1]
	}
	return "\n" + strings.TrimRight(rest, "\n") + "\n"
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

func render(rows []row, py pythonResult, raw, gz int, cold, cached, instantiate time.Duration) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Benchmarks\n\n")
	p("Generated by `make bench-detail` (hosttest/bench) on %s/%s, %d cores, %s, wazero compiler engine, %s.\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), nodeVersion())
	p("Numbers are from one machine and one run: compare ratios, not absolutes.\n")
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		p("Load average when written: %s (other work on the machine inflates every column).\n", strings.Join(strings.Fields(string(load))[:3], " "))
	}
	p("\n## Latency per call: `%s`, settled\n\n", op)
	p("One page of n tools (about 1.1 KB each, `internal/benchdata`) against the lockfile approving it: the\n")
	p("re-check every `list_changed` causes. Every host sends the page and the lockfile as ABI-2 attachments\n")
	p("(`call_raw`), building the request each call; the wasm hosts give the module their own SHA-256.\n")
	p("Each call's page is followed by 0 to %d spaces in turn (`benchdata.UnseenAttachments`): the core keeps\n", benchdata.Unseen-1)
	p("the pages it read often by their bytes (the walk memo), and a settled check must read its page.\n")
	p("The .so column is timed inside the C harness (hosttest/c/harness.c). Node and the plain-JS peer are\n")
	p("interleaved in one process (medians); the peer (`hosttest/bench/node/bench.mjs`) is `JSON.parse`, an\n")
	p("RFC 8785 canonicalizer and `node:crypto`: it hashes every tool and compares it with the lockfile's\n")
	p("entry, and parses the lockfile every time, where the core keeps the lockfile it parsed last.\n\n")
	p("| tools | native Go | wazero | wazero / native | .so from C | Node (wasm) | plain JS | Node / JS |\n")
	p("|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		p("| %d | %s | %s | %.2f× | %s | %s | %s | %.2f× |\n", r.tools, dur(r.native), dur(r.wasm),
			float64(r.wasm)/float64(r.native), dur(r.so), ms(r.node.Wasm), ms(r.node.JS), r.node.Wasm/r.node.JS)
	}
	p("\n## One-shot: a fresh Node process loads and checks once\n\n")
	p("Medians of %d processes each, timed inside the process from the start of the script (Node's own\n", oneShots)
	p("start-up, the same for both, excluded). Load is reading, compiling and instantiating the module\n")
	p("and `_initialize`; the first check includes reading the page and lockfile files.\n\n")
	p("| tools | Node: load | Node: first check | Node: load + check | plain JS: check | ratio |\n")
	p("|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		p("| %d | %s | %s | %s | %s | %.2f× |\n", r.tools, ms(r.nodeOnce.Load), ms(r.nodeOnce.First), ms(r.nodeOnce.Total),
			ms(r.jsOnce.Total), r.nodeOnce.Total/r.jsOnce.Total)
	}
	p("\n## Python at 1,000 tools\n\n")
	p("`hosttest/bench/python/bench.py`, interleaved in one process, medians of %d; each call builds its\n", py.Samples)
	p("request from the page and lockfile bytes.\n\n")
	p("| | per call |\n|---|---:|\n")
	p("| plain Python pass (`json` + `hashlib`, every tool hashed) | %s |\n", ms(py.Plain))
	p("| .so by ctypes, ABI 2 (`crawlcheck_call_raw`, documents as attachments) | %s |\n", ms(py.SORaw))
	p("| .so by ctypes, ABI 1 (`crawlcheck_call`, documents escaped into the JSON) | %s |\n", ms(py.SOABI1))
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
	nodeRatio := at1000.node.Wasm / at1000.node.JS
	onceRatio := at1000.nodeOnce.Total / at1000.jsOnce.Total
	p("| target | measured | |\n|---|---:|---|\n")
	p("| Node settled ≤ 1.5× the plain-JS peer at 1,000 tools | %.2f× | %s |\n", nodeRatio, check(nodeRatio <= 1.5))
	p("| Node one-shot ≤ 2× the peer's one-shot at 1,000 tools | %.2f× | %s |\n", onceRatio, check(onceRatio <= 2))
	p("| Node load ≤ 150 ms | %s | %s |\n", ms(at1000.nodeOnce.Load), check(at1000.nodeOnce.Load <= 150))
	p("| wazero ≤ 5× native at 1,000 tools | %.2f× | %s |\n", wasmRatio, check(wasmRatio <= 5))
	p("| .so from Python (request built) no slower than plain Python at 1,000 tools | %s vs %s | %s |\n", ms(py.SORaw), ms(py.Plain), check(py.SORaw <= py.Plain))
	p("| wasm ≤ 3.5 MB raw | %.2f MB | %s |\n", float64(raw)/1e6, check(raw <= 3_500_000))
	p("| wasm ≤ 1.0 MB gzipped | %.2f MB | %s |\n", float64(gz)/1e6, check(gz <= 1_000_000))
	p("| cached compile + instantiate ≤ 200 ms (wazero) | %s | %s |\n", dur(cached+instantiate), check(cached+instantiate <= 200*time.Millisecond))
	return b.String()
}

// whereHeading starts the section of notes written by hand as each issue
// measured (where the wasm's time and size go, the CLI's profiles): no run
// measures them, so make bench-detail keeps the section as the file has it.
const whereHeading = "## Where the wasm time and size go"

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
