package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/internal/benchdata"
)

// Memory per input byte: the peak resident memory of one make_lock (what
// `crawlcheck lock --tools` asks) and one continuity_check of a tool list
// against its lockfile, natively, for lists of 1, 10 and 50
// MB of two kinds — realistic tools (benchdata), and one tool whose schema
// is an enum of zeros (many small values: the worst case per byte). Each
// case runs in a process of its own (the bench re-executed with -mem-child),
// which reads the request, collects, resets its peak (/proc/self/clear_refs)
// and makes the one call; the figure is the peak above the resident memory
// just before the call, divided by the list's bytes. Target: at most 20×.

// memSizes are the list sizes measured, in bytes.
var memSizes = []int{1 << 20, 10 << 20, 50 << 20}

// memTarget is the target peak per list byte.
const memTarget = 20

type memRow struct {
	op        string
	kind      string
	listBytes int
	reqBytes  int
	peak      int64 // bytes above the resident memory before the call
	elapsed   time.Duration
}

// memoryReport measures every case and returns the report's section.
func memoryReport(dir string) (string, error) {
	var rows []memRow
	for _, op := range []string{"make_lock", "continuity_check"} {
		for _, kind := range []string{"realistic", "small values"} {
			for _, size := range memSizes {
				r, err := measureMemory(dir, op, kind, size)
				if err != nil {
					return "", fmt.Errorf("memory, %s %s %d MB: %w", op, kind, size>>20, err)
				}
				rows = append(rows, r)
				fmt.Fprintf(os.Stderr, "bench: memory %s %s %d MB: %.1f× (%d MB peak)\n", op, kind, size>>20, float64(r.peak)/float64(r.listBytes), r.peak>>20)
			}
		}
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("\n## Memory per input byte, native\n\n")
	p("`make_lock` of one tools/list page (what `crawlcheck lock --tools` asks), and `continuity_check`\n")
	p("of the page against its own lockfile, each case in a fresh process (GOGC %s). Peak is\n", gogc())
	p("the peak resident memory above what the process held just before the call (the request\n")
	p("already read); \"per byte\" divides it by the list's bytes. Realistic: benchdata's tools (about\n")
	p("1 KB each). Small values: one tool whose schema is an enum of zeros (`0,` is two bytes). A check\n")
	p("whose request (page and lockfile) exceeds the core's 64 MiB cap is not made: the host records it\n")
	p("as a server fault instead.\n\n")
	p("| op | list | bytes | request bytes | peak | per list byte | time | target ≤ %d× |\n", memTarget)
	p("|---|---|---:|---:|---:|---:|---:|---|\n")
	for _, r := range rows {
		if r.reqBytes > core.MaxRequestBytes {
			p("| %s | %s, %d MB | %d | %d | over the request cap | | | |\n", r.op, r.kind, r.listBytes>>20, r.listBytes, r.reqBytes)
			continue
		}
		per := float64(r.peak) / float64(r.listBytes)
		met := "met"
		if per > memTarget {
			met = "**missed**"
		}
		p("| %s | %s, %d MB | %d | %d | %.0f MB | %.1f× | %s | %s |\n", r.op, r.kind, r.listBytes>>20, r.listBytes, r.reqBytes, float64(r.peak)/(1<<20), per, dur(r.elapsed), met)
	}
	p("%s", memoryBefore)
	return b.String(), nil
}

// memoryBefore is where the figures came from; it does not change from run
// to run.
const memoryBefore = `
Before issue 10 a Value was 72 bytes and a long array's elements went through a stack grown by
append and then copied: small values took 135× (1 MB) to 150× (10 MB) their bytes here, and the
issue measured 6.9 GB for 50 MB (about 140×). Values are now 24 bytes and a long array's element
stack is sized once from its element count and handed to the array (core/canon).
`

func gogc() string {
	if v := os.Getenv("GOGC"); v != "" {
		return v
	}
	return "100, the default"
}

// measureMemory writes the case's request to a file and runs the child.
func measureMemory(dir, op, kind string, size int) (memRow, error) {
	page := memPage(kind, size)
	req := memLockRequest(page)
	if op == "continuity_check" {
		lock, err := memLock(req)
		if err != nil {
			return memRow{}, err
		}
		req, _ = json.Marshal(map[string]any{
			"now": benchdata.Now, "mode": "enforce", "lock": lock,
			"observed": map[string]any{"endpoint": "https://bench.example/mcp", "pages": []string{string(page)}},
		})
	}
	row := memRow{op: op, kind: kind, listBytes: len(page), reqBytes: len(req)}
	if len(req) > core.MaxRequestBytes {
		return row, nil
	}
	path := filepath.Join(dir, "mem-request.json")
	if err := os.WriteFile(path, req, 0o644); err != nil {
		return memRow{}, err
	}
	defer os.Remove(path)
	self, err := os.Executable()
	if err != nil {
		return memRow{}, err
	}
	cmd := exec.Command(self, "-mem-child", op+":"+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return memRow{}, fmt.Errorf("child: %w", err)
	}
	var base, hwm, ns int64
	if _, err := fmt.Sscanf(string(out), "%d %d %d", &base, &hwm, &ns); err != nil {
		return memRow{}, fmt.Errorf("child said %q: %w", out, err)
	}
	row.peak, row.elapsed = hwm-base, time.Duration(ns)
	return row, nil
}

// memPage is a tools/list result of about size bytes.
func memPage(kind string, size int) []byte {
	if kind == "realistic" {
		per := len(benchdata.Page(100)) / 100
		return benchdata.Page(max(1, size/per))
	}
	head := `{"tools":[{"name":"zeros","inputSchema":{"type":"object","properties":{"z":{"enum":[`
	tail := `]}}}}]}`
	n := (size - len(head) - len(tail) + 1) / 2
	var b bytes.Buffer
	b.Grow(len(head) + 2*n + len(tail))
	b.WriteString(head)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('0')
	}
	b.WriteString(tail)
	return b.Bytes()
}

// memLockRequest is the make_lock request of the page.
func memLockRequest(page []byte) []byte {
	mk, _ := json.Marshal(map[string]any{"pages": []string{string(page)}, "approved_at": "2026-11-01T00:00:00Z",
		"server": map[string]any{"url": "https://bench.example/mcp"}})
	return mk
}

// memLock is the lockfile make_lock makes.
func memLock(mk []byte) (string, error) {
	var made struct {
		OK     bool
		Result struct{ Lock string }
		Error  struct{ Message string }
	}
	if err := json.Unmarshal(core.Call("make_lock", mk), &made); err != nil || !made.OK {
		return "", fmt.Errorf("make_lock: %v %s", err, made.Error.Message)
	}
	return made.Result.Lock, nil
}

// memChild is the child process: one call, then "base peak nanoseconds".
// arg is OP:FILE.
func memChild(arg string) error {
	op, path, _ := strings.Cut(arg, ":")
	req, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	runtime.GC()
	debug.FreeOSMemory()
	// Writing 5 resets the peak (VmHWM) to the current resident size.
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return fmt.Errorf("resetting the peak: %w", err)
	}
	base, err := procStatus("VmRSS")
	if err != nil {
		return err
	}
	start := time.Now()
	resp := core.Call(op, req)
	elapsed := time.Since(start)
	if !bytes.HasPrefix(resp, []byte(`{"ok":true`)) {
		return fmt.Errorf("%s: %.300s", op, resp)
	}
	hwm, err := procStatus("VmHWM")
	if err != nil {
		return err
	}
	runtime.KeepAlive(req)
	fmt.Printf("%d %d %d\n", base, hwm, elapsed.Nanoseconds())
	return nil
}

// procStatus reads a kB line of /proc/self/status, in bytes.
func procStatus(field string) (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}

// memoryMain runs the child (path set) or the memory cases alone.
func memoryMain(path string) error {
	if path != "" {
		return memChild(path)
	}
	dir, err := os.MkdirTemp("", "bench-mem-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	report, err := memoryReport(dir)
	fmt.Print(report)
	return err
}

// setMemSizes sets memSizes from "1,10,50" (MB).
func setMemSizes(s string) error {
	memSizes = nil
	for _, f := range strings.Split(s, ",") {
		mb, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || mb <= 0 {
			return fmt.Errorf("%q is not a size in MB", f)
		}
		memSizes = append(memSizes, mb<<20)
	}
	return nil
}
