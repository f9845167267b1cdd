// Command issuerattack is make attack's issuer part (issue 37, F1-F3): a
// crawlcheck-issuer on SQLite answering honest POST /api/v1/mcp/lock/check
// traffic, first alone (the quiet run), then beside the attacks' shapes
// (the attack run):
//
//   - F1: 40 connections each declaring a 64 MiB body and sending it a byte
//     every two seconds;
//   - F2: POST /api/v1/mcp/lock of 40,000 one-line tools (2.2 MB), again and
//     again;
//   - F3: GET /api/v1/mcp/lock?url= of a server whose tools/list never ends,
//     each page 8 MiB.
//
// It fails (exit 1) unless the honest throughput of the attack run is
// within 20% of the quiet run's and the issuer's peak RSS (VmHWM) stays
// under 512 MiB. make test runs the quick versions of the same attacks
// (internal/issuer/service and fetch: TestSlowBodyHoldsOnlyWhatArrived,
// TestLockBounded, TestPagesBytesCap).
//
//	issuerattack -bin build/crawlcheck-issuer [-duration 15s] [-clients 8]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlcheck/verifier/internal/benchdata"
	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/listening"
)

func main() {
	bin := flag.String("bin", "build/crawlcheck-issuer", "the crawlcheck-issuer binary")
	d := flag.Duration("duration", 15*time.Second, "how long each run lasts")
	clients := flag.Int("clients", 8, "honest clients")
	flag.StringVar(&shapes, "shapes", "F1,F2,F3", "the attacks run beside the honest clients")
	flag.Parse()
	if err := run(*bin, *d, *clients); err != nil {
		log.Fatal("issuerattack: ", err)
	}
}

// pace is the least time between two requests of one F2 or F3 worker: 20
// a second, four times the rate a client is allowed, so the limits are
// met, not a flood of the loopback by the load generator itself, whose CPU
// is the honest clients' (they share this process and the machine's
// cores), where an attacker's is not the service's.
const pace = 50 * time.Millisecond

// attacker dials from 127.0.1.1.
var attacker = &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 1, 1)}}

// shapes are the attacks run (-shapes).
var shapes string

// outcome is one run's measurements.
type outcome struct {
	honest, honestErrs int64
	statuses           map[string]int64 // the attacks' answers, "shape status"
	peakRSS            int64            // the issuer's VmHWM, bytes
}

func run(bin string, d time.Duration, clients int) error {
	tmp, err := os.MkdirTemp("", "issuerattack-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	keys := filepath.Join(tmp, "keys")
	if out, err := exec.Command(bin, "keys", "init", "--dir", keys, "--issuer", "attack.test").CombinedOutput(); err != nil {
		return fmt.Errorf("keys init: %v\n%s", err, out)
	}
	// The attackers hold credentials (issue 37: "no credential or a free
	// pilot"): since the trust model, an anonymous POST lock or live
	// reading is 401 before anything is read, which would measure the
	// refusal and not the bounds. F2 is a tenant's (the cheapest principal
	// that may have tools signed); F3 the operator's, the only principal
	// whose readings may reach the pager on loopback (--allow-private is
	// the operator's, F12), and whose readings meet the same bounds.
	var creds credentials
	for _, c := range []struct {
		into *string
		args []string
	}{{&creds.tenant, []string{"tenant-token", "--dir", keys, "--tenant", "attacker"}}, {&creds.operator, []string{"operator-token", "--dir", keys}}} {
		out, err := exec.Command(bin, c.args...).Output()
		if err != nil {
			return fmt.Errorf("%s: %v", c.args[0], err)
		}
		*c.into = "Bearer " + strings.TrimSpace(string(out))
	}
	tools, _ := json.Marshal(benchdata.Tools(100))
	var made struct{ Lock string }
	if err := corecall.Into("make_lock", map[string]any{"tools": json.RawMessage(tools), "approved_at": benchdata.Now,
		"server": map[string]any{"url": "https://mcp.example.com/mcp"}}, &made); err != nil {
		return err
	}
	check, _ := json.Marshal(map[string]any{"lock": made.Lock, "tools": json.RawMessage(tools)})
	pager := endlessPager()
	defer pager.Close()

	quiet, err := once(bin, keys, filepath.Join(tmp, "quiet.db"), check, "", creds, d, clients)
	if err != nil {
		return err
	}
	attacked, err := once(bin, keys, filepath.Join(tmp, "attack.db"), check, "http://"+pager.Addr().String()+"/mcp", creds, d, clients)
	if err != nil {
		return err
	}
	ratio := float64(attacked.honest) / float64(max(quiet.honest, 1))
	fmt.Printf("quiet:  %d honest checks in %s (%d errors), peak RSS %d MiB\n", quiet.honest, d, quiet.honestErrs, quiet.peakRSS>>20)
	fmt.Printf("attack: %d honest checks in %s (%d errors), peak RSS %d MiB; honest throughput %.0f%% of quiet\n",
		attacked.honest, d, attacked.honestErrs, attacked.peakRSS>>20, 100*ratio)
	for k, v := range attacked.statuses {
		fmt.Printf("  %s: %d\n", k, v)
	}
	var fails []string
	if ratio < 0.8 {
		fails = append(fails, fmt.Sprintf("honest throughput under attack is %.0f%% of quiet (want at least 80%%)", 100*ratio))
	}
	if attacked.peakRSS >= 512<<20 {
		fails = append(fails, fmt.Sprintf("peak RSS %d MiB (want under 512 MiB)", attacked.peakRSS>>20))
	}
	if attacked.honestErrs > 0 || quiet.honestErrs > 0 {
		fails = append(fails, "honest checks failed")
	}
	if len(fails) > 0 {
		return fmt.Errorf("%s", strings.Join(fails, "; "))
	}
	return nil
}

// credentials are the attackers' Authorization headers.
type credentials struct{ tenant, operator string }

// once starts an issuer, runs the honest clients for d (and the attacks
// when pagerURL is set) and answers what it measured.
func once(bin, keys, db string, check []byte, pagerURL string, creds credentials, d time.Duration, clients int) (outcome, error) {
	cmd := exec.Command(bin, "serve", "--dir", keys, "--listen", "127.0.0.1:0", "--store", "sqlite:"+db,
		"--allow-http", "--allow-private", "127.0.0.0/8", "--sweep=false")
	cmd.Stderr = io.Discard
	base, stop, err := listening.Start(cmd)
	if err != nil {
		return outcome{}, err
	}
	defer stop()
	out := outcome{statuses: map[string]int64{}}
	var mu sync.Mutex
	count := func(shape string, status int) {
		mu.Lock()
		out.statuses[shape+" "+strconv.Itoa(status)]++
		mu.Unlock()
	}
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	var honest, honestErrs atomic.Int64
	hc := &http.Client{Timeout: 30 * time.Second}
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				resp, err := hc.Post(base+"/api/v1/mcp/lock/check", "application/json", bytes.NewReader(check))
				if err != nil {
					honestErrs.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					honest.Add(1)
				} else {
					honestErrs.Add(1)
				}
			}
		}()
	}
	if pagerURL != "" {
		// The attackers dial from another /24 of loopback than the honest
		// clients (127.0.1.1): one network attacking, another checking, as
		// the service's per-client bounds count clients.
		hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: attacker.DialContext}}
		addr := strings.TrimPrefix(base, "http://")
		for range 40 * strings.Count(shapes, "F1") {
			wg.Add(1)
			go func() { defer wg.Done(); slowBody(addr, deadline) }()
		}
		many := manyTools(40000)
		for range 2 * strings.Count(shapes, "F2") {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(deadline) {
					count("F2 POST lock of 40,000 tools (a tenant)", post(hc, base+"/api/v1/mcp/lock", creds.tenant, many))
					time.Sleep(pace)
				}
			}()
		}
		for range 2 * strings.Count(shapes, "F3") {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(deadline) {
					req, _ := http.NewRequest("GET", base+"/api/v1/mcp/lock?url="+pagerURL, nil)
					req.Header.Set("Authorization", creds.operator)
					resp, err := hc.Do(req)
					if err != nil {
						count("F3 GET lock?url= of endless 8 MiB pages (the operator)", 0)
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					count("F3 GET lock?url= of endless 8 MiB pages (the operator)", resp.StatusCode)
					time.Sleep(pace)
				}
			}()
		}
	}
	wg.Wait()
	out.honest, out.honestErrs = honest.Load(), honestErrs.Load()
	out.peakRSS = peakRSS(cmd.Process.Pid)
	return out, nil
}

func post(hc *http.Client, url, auth string, body []byte) int {
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", auth)
	resp, err := hc.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// slowBody keeps a connection declaring a 64 MiB body and sending a byte
// of it every two seconds until deadline (F1), dialling again when the
// issuer closes it.
func slowBody(addr string, deadline time.Time) {
	for time.Now().Before(deadline) {
		c, err := attacker.Dial("tcp", addr)
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		_, err = fmt.Fprintf(c, "POST /api/v1/mcp/lock/check HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"", 64<<20)
		for err == nil && time.Now().Before(deadline) {
			time.Sleep(2 * time.Second)
			_, err = c.Write([]byte("a"))
		}
		c.Close()
	}
}

// manyTools is F2's body: n one-line tools.
func manyTools(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"server":{"url":"https://mcp.example.com/mcp"},"tools":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"t%d","inputSchema":{}}`, i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// endlessPager is F3's server: its tools/list pages never end, each a tool
// with an 8 MiB description and a cursor to the next.
func endlessPager() net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	desc := strings.Repeat("x", 8<<20)
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Cursor string `json:"cursor"`
			} `json:"params"`
		}
		json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&m)
		w.Header().Set("Content-Type", "application/json")
		switch m.Method {
		case "initialize":
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"pager","version":"1"}}}`)
		case "tools/list":
			n, _ := strconv.Atoi(m.Params.Cursor)
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"tools":[{"name":"t`+strconv.Itoa(n)+`","description":"`+desc+`","inputSchema":{}}],"nextCursor":"`+strconv.Itoa(n+1)+`"}}`)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	return ln
}

// peakRSS is a process's peak resident set (VmHWM), in bytes.
func peakRSS(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
