// Command issuerload is make load: crawlcheck-issuer under 64 concurrent
// clients sending POST /api/v1/mcp/lock/check of a 100-tool list, against
// one instance on SQLite and against two instances sharing one PostgreSQL
// (a throwaway PostgreSQL 15, internal/issuer/store/pgtest), then kill -9 of
// one of the two mid-load. It reports throughput, p50/p99 and errors, checks
// the answers with the core's guard (every answer of the kill run, a sample
// of the others), that no nonce was answered twice and that every nonce
// answered is in the store, and writes the section "The issuer under load"
// of docs/benchmarks.md. Not part of make test: it measures, it asserts
// nothing a timed test would.
//
//	issuerload -bin build/crawlcheck-issuer [-clients 64] [-duration 60s] [-o docs/benchmarks.md]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/crawlcheck/verifier/internal/benchdata"
	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/issuer/store"
	"github.com/crawlcheck/verifier/internal/issuer/store/pgtest"
	"github.com/crawlcheck/verifier/internal/jsonframe"
	"github.com/crawlcheck/verifier/internal/listening"
)

const subject = "https://mcp.example.com/mcp"

func main() {
	bin := flag.String("bin", "build/crawlcheck-issuer", "the crawlcheck-issuer binary")
	clients := flag.Int("clients", 64, "concurrent clients")
	duration := flag.Duration("duration", 60*time.Second, "how long each throughput run lasts")
	killRun := flag.Duration("kill-duration", 20*time.Second, "how long the kill -9 run lasts (the kill at half time)")
	out := flag.String("o", "", "write the issuer section into this Markdown file (default: stdout)")
	flag.Parse()
	if err := run(*bin, *clients, *duration, *killRun, *out); err != nil {
		log.Fatal("issuerload: ", err)
	}
}

type instance struct {
	url  string
	cmd  *exec.Cmd
	stop func()
}

func start(bin, keys, storeSpec string) (*instance, error) {
	cmd := exec.Command(bin, "serve", "--dir", keys, "--listen", "127.0.0.1:0", "--store", storeSpec)
	cmd.Stderr = io.Discard
	url, stop, err := listening.Start(cmd)
	if err != nil {
		return nil, err
	}
	return &instance{url: url, cmd: cmd, stop: stop}, nil
}

// result is one run's measurements.
type result struct {
	name, store       string
	instances         int
	clients           int
	elapsed           time.Duration
	ok                int
	errs              int
	errsAfterKill     int
	lat               []time.Duration
	nonces            []string
	guarded, guardBad int
	dupNonces         int
	missingNonces     int
	survivorAfterKill int
	errKinds          map[string]int
	serverCPU         time.Duration // user+system CPU of the instances during the run
	storeCPU          time.Duration // PostgreSQL's (its server and backends) during the run; 0 on SQLite
	// From the instances' own /metrics after the run (not for the kill
	// run, whose killed instance's are gone): how long the service took
	// over a check, from its handler's start to its answer written, by
	// histogram bucket (upper bound in seconds: count), and how long their
	// group commits were busy, summed over the instances.
	handled    map[float64]int64
	commitBusy time.Duration
	clientCPU  time.Duration // this process's, the load generator's (guard included)
}

// cpuOf is a process's user+system CPU time so far, from /proc/PID/stat
// (fields 14 and 15, in clock ticks of 1/100 s on Linux); false when it
// cannot be read (the process is gone).
func cpuOf(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := bytes.LastIndexByte(b, ')')
	if err != nil || i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	var ut, st int64
	fmt.Sscan(f[11], &ut)
	fmt.Sscan(f[12], &st)
	return time.Duration(ut+st) * 10 * time.Millisecond, true
}

// serverCPU is the user+system CPU time so far of the process pid and of
// its children (PostgreSQL's server and its backends, each of which leads
// a process group of its own), children reaped included.
func serverCPU(pid int) time.Duration {
	procs, _ := os.ReadDir("/proc")
	var ticks int64
	for _, p := range procs {
		b, err := os.ReadFile("/proc/" + p.Name() + "/stat")
		i := bytes.LastIndexByte(b, ')')
		if err != nil || i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 15 || (p.Name() != strconv.Itoa(pid) && f[1] != strconv.Itoa(pid)) {
			continue
		}
		for _, k := range f[11:15] { // utime, stime, cutime, cstime
			var n int64
			fmt.Sscan(k, &n)
			ticks += n
		}
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// selfCPU is this process's user+system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpus reads every instance's CPU time (0 for one that is gone).
func cpus(insts []*instance) []time.Duration {
	out := make([]time.Duration, len(insts))
	for i, in := range insts {
		out[i], _ = cpuOf(in.cmd.Process.Pid)
	}
	return out
}

func (r *result) pct(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	sort.Slice(r.lat, func(i, j int) bool { return r.lat[i] < r.lat[j] })
	return r.lat[int(p*float64(len(r.lat)-1))]
}

// load drives the instances: client i asks instance i mod n, and moves to
// the next one when its instance does not answer, as a load balancer would.
// guardEvery guards every n-th answer (1: all of them).
// pgPid is PostgreSQL's server, whose CPU is counted (0: none).
func load(insts []*instance, pgPid int, clients int, d time.Duration, body []byte, dir []byte, lock string, guardEvery int, kill func(), killAt time.Duration) *result {
	r := &result{clients: clients, instances: len(insts), errKinds: map[string]int{}}
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxIdleConns: 2 * clients}
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var mu sync.Mutex
	var killed atomic.Bool
	var killTime time.Time
	var cpuAtKill []time.Duration
	cpu0, self0 := cpus(insts), selfCPU()
	var store0 time.Duration
	if pgPid != 0 {
		store0 = serverCPU(pgPid)
	}
	deadline := time.Now().Add(d)
	startT := time.Now()
	var wg sync.WaitGroup
	if kill != nil {
		go func() {
			time.Sleep(killAt)
			mu.Lock()
			killTime = time.Now()
			cpuAtKill = cpus(insts)
			mu.Unlock()
			kill()
			killed.Store(true)
		}()
	}
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			target := c % len(insts)
			var lat []time.Duration
			var nonces []string
			ok, errs, errsAfter, survivor, guarded, bad := 0, 0, 0, 0, 0, 0
			kinds := map[string]int{}
			var buf bytes.Buffer
			var framed jsonframe.Recent // knows the receipts' inputs once it has read one
			for n := 0; time.Now().Before(deadline); n++ {
				t0 := time.Now()
				resp, err := hc.Post(insts[target].url+"/api/v1/mcp/lock/check", "application/json", bytes.NewReader(body))
				var b []byte
				if err == nil {
					// Into this client's buffer, kept from answer to answer:
					// io.ReadAll grew a new one from 512 bytes for every 50 KB
					// receipt. Nothing keeps b past this iteration.
					buf.Reset()
					_, err = buf.ReadFrom(resp.Body)
					b = buf.Bytes()
					resp.Body.Close()
					if err == nil && resp.StatusCode != 200 {
						var p struct{ Code string }
						json.Unmarshal(b, &p)
						err = fmt.Errorf("HTTP %d %s", resp.StatusCode, p.Code)
					}
				}
				el := time.Since(t0)
				if err != nil {
					errs++
					kinds[errKind(err)]++
					if killed.Load() {
						errsAfter++
					}
					target = (target + 1) % len(insts)
					continue
				}
				ok++
				lat = append(lat, el)
				// The nonce without decoding the 116 KB receipt, and past
				// its inputs (the list this client sent, the same in every
				// receipt) by comparing them with the ones framed kept
				// instead of scanning them: the client shares the two
				// cores with the service it measures.
				var nonce string
				if m, ok := framed.Members(b); ok {
					json.Unmarshal(m["nonce"], &nonce)
				}
				nonces = append(nonces, nonce)
				if killed.Load() {
					survivor++
				}
				if n%guardEvery == 0 {
					guarded++
					if !guardOK(b, dir, lock) {
						bad++
					}
				}
			}
			mu.Lock()
			for k, n := range kinds {
				r.errKinds[k] += n
			}
			r.ok += ok
			r.errs += errs
			r.errsAfterKill += errsAfter
			r.survivorAfterKill += survivor
			r.lat = append(r.lat, lat...)
			r.nonces = append(r.nonces, nonces...)
			r.guarded += guarded
			r.guardBad += bad
			mu.Unlock()
		}(c)
	}
	wg.Wait()
	r.elapsed = time.Since(startT)
	r.clientCPU = selfCPU() - self0
	if pgPid != 0 {
		r.storeCPU = serverCPU(pgPid) - store0
	}
	for i, in := range insts {
		end, ok := cpuOf(in.cmd.Process.Pid)
		if !ok && cpuAtKill != nil {
			end = cpuAtKill[i] // killed: its time up to the kill
		}
		r.serverCPU += end - cpu0[i]
	}
	_ = killTime
	seen := map[string]bool{}
	for _, n := range r.nonces {
		if seen[n] {
			r.dupNonces++
		}
		seen[n] = true
	}
	return r
}

// errKind names an error for the report: the HTTP status and problem
// code, or what the transport said.
func errKind(err error) string {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "HTTP "):
		return msg
	case strings.Contains(msg, "connection refused"):
		return "connection refused"
	case strings.Contains(msg, "reset by peer"), strings.Contains(msg, "EOF"), strings.Contains(msg, "broken pipe"),
		strings.Contains(msg, "server closed idle connection"):
		return "connection reset"
	case strings.Contains(msg, "Timeout"), strings.Contains(msg, "deadline"):
		return "client timeout (10 s)"
	}
	return msg
}

// guardOK judges a receipt with the core's guard as a host would: the
// receipt's bytes as received and the lockfile's as documents (ABI 2
// attachments), not a JSON value encoding/json validates and compacts and
// a string it escapes, which was most of the client's time in the kill
// run, where every answer is guarded.
func guardOK(receipt, dir []byte, lock string) bool {
	var g struct {
		IntegrityValid bool   `json:"integrity_valid"`
		IssuerTrusted  bool   `json:"issuer_trusted"`
		KeyPolicyValid bool   `json:"key_policy_valid"`
		Fresh          bool   `json:"freshness_valid"`
		PolicyResult   string `json:"policy_result"`
	}
	err := corecall.Into("guard", map[string]any{"receipt": corecall.Text(receipt), "expected_subject": subject,
		"expected_operation": "mcp.lock.check", "now": time.Now().UTC().Format(time.RFC3339Nano),
		"key_directory": corecall.Text(dir), "lock": corecall.Text(lock)}, &g)
	return err == nil && g.IntegrityValid && g.IssuerTrusted && g.KeyPolicyValid && g.Fresh && g.PolicyResult == "proceed"
}

// inStore counts the nonces answered that the store does not hold.
func inStore(ctx context.Context, spec string, nonces []string) (int, error) {
	st, err := store.Open(ctx, spec)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	missing := 0
	for _, n := range nonces {
		ok, err := st.NonceIssued(ctx, n)
		if err != nil {
			return 0, err
		}
		if !ok {
			missing++
		}
	}
	return missing, nil
}

func run(bin string, clients int, d, killD time.Duration, out string) error {
	ctx := context.Background()
	loadavg, _ := os.ReadFile("/proc/loadavg")
	tools, err := json.Marshal(benchdata.Tools(100))
	if err != nil {
		return err
	}
	var made struct{ Lock string }
	if err := corecall.Into("make_lock", map[string]any{"tools": json.RawMessage(tools), "approved_at": benchdata.Now,
		"server": map[string]any{"url": subject}}, &made); err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]any{"lock": made.Lock, "tools": json.RawMessage(tools)})
	tmp, err := os.MkdirTemp("", "issuerload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	keys := filepath.Join(tmp, "keys")
	if out, err := exec.Command(bin, "keys", "init", "--dir", keys, "--issuer", "load.test").CombinedOutput(); err != nil {
		return fmt.Errorf("keys init: %v\n%s", err, out)
	}
	var results []*result

	// One instance on SQLite.
	sqlite := "sqlite:" + filepath.Join(tmp, "issuer.db")
	inst, err := start(bin, keys, sqlite)
	if err != nil {
		return err
	}
	dir, err := get(inst.url + "/api/v1/keys")
	if err != nil {
		return err
	}
	log.Printf("sqlite, 1 instance, %d clients, %s", clients, d)
	r := load([]*instance{inst}, 0, clients, d, body, dir, made.Lock, 100, nil, 0)
	r.name, r.store = "one instance", "SQLite (WAL)"
	if err := r.scrape([]*instance{inst}); err != nil {
		return err
	}
	inst.stop()
	if r.missingNonces, err = inStore(ctx, sqlite, r.nonces); err != nil {
		return err
	}
	results = append(results, r)

	// Two instances on one PostgreSQL.
	pg, err := pgtest.Start()
	if err != nil {
		return err
	}
	defer pg.Stop()
	for _, kill := range []bool{false, true} {
		name := "pg"
		if kill {
			name = "pgkill"
		}
		dsn, err := pg.CreateDB(name)
		if err != nil {
			return err
		}
		a, err := start(bin, keys, dsn)
		if err != nil {
			return err
		}
		b, err := start(bin, keys, dsn)
		if err != nil {
			a.stop()
			return err
		}
		var r *result
		if !kill {
			log.Printf("postgres, 2 instances, %d clients, %s", clients, d)
			r = load([]*instance{a, b}, pg.Pid(), clients, d, body, dir, made.Lock, 100, nil, 0)
			r.name = "two instances"
		} else {
			log.Printf("postgres, 2 instances, kill -9 of one at %s of %s", killD/2, killD)
			r = load([]*instance{a, b}, pg.Pid(), clients, killD, body, dir, made.Lock, 1, func() { a.cmd.Process.Signal(syscall.SIGKILL) }, killD/2)
			r.name = "two instances, kill -9 of one at half time"
		}
		r.store = "PostgreSQL 15 (shared)"
		if !kill {
			if err := r.scrape([]*instance{a, b}); err != nil {
				return err
			}
		}
		a.stop()
		b.stop()
		if r.missingNonces, err = inStore(ctx, dsn, r.nonces); err != nil {
			return err
		}
		results = append(results, r)
	}
	return write(out, results, clients, len(body)/1000, loadavg)
}

func get(url string) ([]byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, errors.New(url + ": " + resp.Status)
	}
	return io.ReadAll(resp.Body)
}

const heading = "## The issuer under load (`make load`)"

// write writes the section; loadavg is /proc/loadavg as the runs began.
func write(out string, results []*result, clients, bodyKB int, load []byte) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", heading)
	fmt.Fprintf(&b, "crawlcheck-issuer answering `POST /api/v1/mcp/lock/check {lock, tools}` of a 100-tool list "+
		"(internal/benchdata: the lockfile as a JSON string and the list, %d KB a request) to %d closed-loop clients "+
		"on this machine (%d cores, load average before the run %s), the load client on the same cores; every receipt's "+
		"nonce recorded and the receipt stored before it is answered. Targets: ≥ 1,000 checks/s, p99 ≤ 50 ms, 0 errors. "+
		"Measured by hosttest/issuerload, %s.\n\n",
		bodyKB, clients, runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:3], " "), time.Now().UTC().Format("2006-01-02"))
	b.WriteString("| run | store | checks | checks/s | p50 | p99 | errors | guard | nonces twice | nonces not in the store | service CPU per check | PostgreSQL CPU per check | load client CPU per check |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		pgCPU := "—"
		if r.storeCPU > 0 {
			pgCPU = fmt.Sprintf("%.2f ms", perCheck(r.storeCPU, r.ok))
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.0f | %.1f ms | %.1f ms | %d | %d of %d pass | %d | %d | %.2f ms | %s | %.2f ms |\n", r.name, r.store, r.ok,
			r.rate(), ms(r.pct(0.5)), ms(r.pct(0.99)), r.errs, r.guarded-r.guardBad, r.guarded, r.dupNonces, r.missingNonces,
			perCheck(r.serverCPU, r.ok), pgCPU, perCheck(r.clientCPU, r.ok))
	}
	for _, r := range results {
		if len(r.errKinds) > 0 {
			var parts []string
			for k, n := range r.errKinds {
				parts = append(parts, fmt.Sprintf("%d × %s", n, k))
			}
			sort.Strings(parts)
			fmt.Fprintf(&b, "\nErrors of %s on %s: %s.\n", r.name, r.store, strings.Join(parts, ", "))
		}
	}
	if k := results[len(results)-1]; k != nil {
		fmt.Fprintf(&b, "\nThe kill run: after the kill -9, %d requests to the killed instance failed (connection refused or reset; each "+
			"client then moved to the survivor, as a load balancer would) and the survivor answered %d checks. Every answer a client "+
			"received was judged by `guard`.\n", k.errsAfterKill, k.survivorAfterKill)
	}
	for _, r := range results[:2] {
		b.WriteString("\n" + r.verdict(clients))
	}
	b.WriteString("\n0 errors is met apart from the requests in flight to the instance killed.\n")
	section := b.String()
	if out == "" {
		fmt.Print(section)
		return nil
	}
	doc, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	text := string(doc)
	if i := strings.Index(text, heading); i >= 0 {
		rest := text[i+len(heading):]
		end := len(text)
		if j := strings.Index(rest, "\n## "); j >= 0 {
			end = i + len(heading) + j + 1
		}
		text = text[:i] + section + text[end:]
	} else {
		text = strings.TrimRight(text, "\n") + "\n\n" + section
	}
	return os.WriteFile(out, []byte(text), 0o644)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (r *result) rate() float64 { return float64(r.ok) / r.elapsed.Seconds() }

// scrape reads the instances' /metrics: the lock check's duration
// histogram and the group commit's time (the store's "issue" operation).
func (r *result) scrape(insts []*instance) error {
	r.handled = map[float64]int64{}
	const (
		bucket = `crawlcheck_issuer_request_duration_seconds_bucket{endpoint="lock_check",status="200",le="`
		commit = `crawlcheck_issuer_store_duration_seconds_sum{op="issue",result="ok"} `
	)
	for _, in := range insts {
		m, err := get(in.url + "/metrics")
		if err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
		for _, line := range strings.Split(string(m), "\n") {
			if rest, ok := strings.CutPrefix(line, bucket); ok {
				le, n, _ := strings.Cut(rest, `"} `)
				bound, err := strconv.ParseFloat(le, 64)
				if le == "+Inf" {
					bound, err = math.Inf(1), nil
				}
				count, err2 := strconv.ParseInt(n, 10, 64)
				if err != nil || err2 != nil {
					return fmt.Errorf("metrics: %q", line)
				}
				r.handled[bound] += count
			} else if v, ok := strings.CutPrefix(line, commit); ok {
				sec, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return fmt.Errorf("metrics: %q", line)
				}
				r.commitBusy += time.Duration(sec * float64(time.Second))
			}
		}
	}
	return nil
}

// handledWithin is the upper bound of the histogram bucket that holds the
// service's own p-th percentile of handling a check (0 when not scraped).
func (r *result) handledWithin(p float64) float64 {
	bounds := slices.Sorted(maps.Keys(r.handled))
	if len(bounds) == 0 {
		return 0
	}
	total := r.handled[bounds[len(bounds)-1]]
	for _, b := range bounds {
		if float64(r.handled[b]) >= p*float64(total) {
			return b
		}
	}
	return math.Inf(1)
}

// verdict says of a throughput run whether it met the targets and what
// bounded it. Below nine tenths of the two cores busy, something other
// than CPU held the clients back: the service's serial step, its group
// commit (docs/benchmarks.md). By Little's law, closed-loop clients each
// with one request outstanding keep that many in the system, so the mean
// time in it is clients / throughput whatever the service does with them,
// and a p99 of 50 ms needs more than clients / 0.05 s checks a second.
func (r *result) verdict(clients int) string {
	rate := r.rate()
	per := perCheck(r.serverCPU, r.ok) + perCheck(r.storeCPU, r.ok) + perCheck(r.clientCPU, r.ok)
	busy := rate * per / 1000
	met := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**not met**"
	}
	p99 := ms(r.pct(0.99))
	text := fmt.Sprintf("%s on %s: %.0f checks/s, the 1,000 asked %s; p99 %.1f ms, the 50 ms asked %s. A check cost %.2f ms of CPU "+
		"(the service, PostgreSQL's processes where they run, and the load client), so %.0f checks/s kept %.2f of the %d cores busy",
		r.name, r.store, rate, met(rate >= 1000), p99, met(p99 <= 50), per, rate, busy, runtime.NumCPU())
	if busy < 0.85*float64(runtime.NumCPU()) {
		text += ": the CPU was not the bound, the clients waited on the service's serial step (its group commit)"
	} else {
		text += ": the CPU was the bound"
	}
	if r.commitBusy > 0 {
		text += fmt.Sprintf("; the group commit was busy %.0f%% of the run", 100*r.commitBusy.Seconds()/r.elapsed.Seconds()/float64(r.instances))
	}
	mean := 1000 * float64(clients) / rate
	text += fmt.Sprintf(". The mean time in the system was %d / %.0f = %.1f ms (Little's law: %d closed-loop clients keep that many "+
		"requests in it)", clients, rate, mean, clients)
	switch within := 1000 * r.handledWithin(0.99); {
	case p99 <= 50:
	case mean >= 50:
		text += fmt.Sprintf("; a p99 of 50 ms needs more than %d / 0.05 s = %.0f checks/s, %.1f cores at this CPU a check",
			clients, float64(clients)/0.05, float64(clients)/0.05*per/1000)
	case within > 0 && within <= 50:
		text += fmt.Sprintf("; the p99 is the spread around it, and not the handlers': the service's handling of a check "+
			"(its /metrics histogram, from the handler's start to its answer written) was within %.0f ms for 99%% of them. "+
			"The rest of a client's wait is outside the handler: the request's and the answer's way through the sockets, and "+
			"the turns the load client's goroutines and the service's connection goroutines wait for one of the two cores "+
			"that the service, the load client and the kernel share", within)
	default:
		text += fmt.Sprintf("; the p99 is the spread around it: the service's own handling of a check (its /metrics histogram) "+
			"was within %.0f ms for 99%% of them", within)
	}
	return text + ".\n"
}

// perCheck is CPU time per answered check, in milliseconds.
func perCheck(d time.Duration, checks int) float64 {
	if checks == 0 {
		return 0
	}
	return ms(d) / float64(checks)
}
