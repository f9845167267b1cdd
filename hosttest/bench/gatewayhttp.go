package main

// The gateway's rows over HTTP (issue 32, item 3: everything issue 31 asks
// of `run` holds for `run --url`, speed rows included): `crawlcheck run
// --url` in front of the scenario server serving streamable HTTP, against
// the direct HTTP session of the same client (this harness's own raw
// JSON-RPC client, httpPeer), with the targets of issue 31, item 5. The
// server runs for the whole group, as a remote server does; a direct
// session start is a new connection's initialize + notifications/initialized
// + tools/list, the gateway's is the spawn of `run --url` to the list's
// answer over its stdio (the gateway makes its own HTTP session and checks
// the list first). Wall time only: a direct session's CPU is this
// process's, not separable from the harness's.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// rpcPeer is a raw JSON-RPC client, over stdio or HTTP.
type rpcPeer interface {
	request(method, params string) ([]byte, error)
}

// httpPeer is a raw JSON-RPC client of a streamable HTTP endpoint: each
// message a POST, its answer the POST's JSON body or the data of its event
// stream; the session's id and protocol version sent once known.
type httpPeer struct {
	url     string
	client  *http.Client
	session string
	version string
	next    int
}

func newHTTPPeer(url string) *httpPeer {
	// A transport of its own: a new session opens a new connection, as a
	// new client's does.
	return &httpPeer{url: url, client: &http.Client{Transport: &http.Transport{}}}
}

// post sends one message and returns the response.
func (p *httpPeer) post(body string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, p.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if p.session != "" {
		req.Header.Set("Mcp-Session-Id", p.session)
	}
	if p.version != "" {
		req.Header.Set("Mcp-Protocol-Version", p.version)
	}
	return p.client.Do(req)
}

func (p *httpPeer) request(method, params string) ([]byte, error) {
	p.next++
	id := strconv.Itoa(p.next)
	resp, err := p.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("%s: HTTP %d: %s", method, resp.StatusCode, b)
	}
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		p.session = s
	}
	match := func(msg []byte) ([]byte, bool, error) {
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(msg, &m) != nil || string(m.ID) != id {
			return nil, false, nil
		}
		if m.Error != nil {
			return nil, true, fmt.Errorf("%s: %s", method, m.Error)
		}
		return msg, true, nil
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		if err != nil {
			return nil, err
		}
		if msg, ok, err := match(b); ok || err != nil {
			return msg, err
		}
		return nil, fmt.Errorf("%s: not its answer: %.200s", method, b)
	}
	r := bufio.NewReaderSize(resp.Body, 1<<20)
	var data []byte
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%s: the event stream ended: %w", method, err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(d, []byte(" "))...)
			continue
		}
		if len(line) == 0 && len(data) > 0 {
			if msg, ok, err := match(data); ok || err != nil {
				return msg, err
			}
			data = nil
		}
	}
}

// open makes the handshake and lists the tools.
func (p *httpPeer) open() error {
	if _, err := p.request("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`); err != nil {
		return err
	}
	p.version = "2025-11-25"
	resp, err := p.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("notifications/initialized: HTTP %d", resp.StatusCode)
	}
	list, err := p.request("tools/list", `{}`)
	if err != nil {
		return err
	}
	if !bytes.Contains(list, []byte(`"tools":[{`)) {
		return fmt.Errorf("tools/list: %.200s", list)
	}
	return nil
}

// close ends the session as a client does: DELETE, then its connections.
func (p *httpPeer) close() {
	if p.session != "" {
		if req, err := http.NewRequest(http.MethodDelete, p.url, nil); err == nil {
			req.Header.Set("Mcp-Session-Id", p.session)
			if resp, err := p.client.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}
	p.client.CloseIdleConnections()
}

// gatewayHTTP measures the rows over HTTP: session start and the
// 1,000-tool list against the 1,000-tool scenario, calls against the
// 10-tool one.
func (e *tableEnv) gatewayHTTP() ([]tableRow, error) {
	var rows []tableRow
	sc, err := e.scenario(1000)
	if err != nil {
		return nil, err
	}
	srv, url, err := e.httpServer(sc)
	if err != nil {
		return nil, err
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	lock, err := e.lock("gateway-http-1000", "-url", url)
	if err != nil {
		return nil, err
	}
	gw := []string{e.cli, "run", "--lock", lock, "--url", url}

	// Session start, interleaved.
	what := "`crawlcheck run --url` session start (initialize + tools/list), 1,000 tools (the scenario server), streamable HTTP"
	fmt.Fprintf(os.Stderr, "bench: %s\n", what)
	ours, direct, err := interleave(pairs(15), sessionStart(gw), func() (sample, error) {
		p := newHTTPPeer(url)
		defer p.close()
		start := time.Now()
		err := p.open()
		return sample{wall: time.Since(start)}, err
	})
	if err != nil {
		return nil, err
	}
	gwall, dwall := medianD(walls(ours)), medianD(walls(direct))
	r := float64(gwall) / float64(max(dwall, 1))
	rows = append(rows, tableRow{what, fmt.Sprintf("%s wall (the gateway's process %s CPU)", dur(gwall), dur(medianD(cpus(ours)))),
		dur(dwall) + " wall, a direct HTTP session (no process to start)", fmt.Sprintf("%.2f× (wall)", r), "≤ 1.1× direct", metIf(r <= 1.1) + " (wall)"})

	// Warm sessions: the 1,000-tool list, then calls.
	gp, err := startPeer(gw)
	if err != nil {
		return nil, err
	}
	defer gp.close()
	if _, err := gp.open(); err != nil {
		return nil, err
	}
	dp := newHTTPPeer(url)
	defer dp.close()
	if err := dp.open(); err != nil {
		return nil, err
	}
	peers := map[string]rpcPeer{"gateway": gp, "direct": dp}
	order := []string{"gateway", "direct"}
	measure := func(n int, method, params string, check func([]byte) bool) (map[string][]time.Duration, error) {
		lat := map[string][]time.Duration{}
		for i := range n {
			for k := range order {
				name := order[(i+k)%len(order)]
				start := time.Now()
				got, err := peers[name].request(method, params)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
				lat[name] = append(lat[name], time.Since(start))
				if !check(got) {
					return nil, fmt.Errorf("%s %s: %.200s", name, method, got)
				}
			}
		}
		return lat, nil
	}
	fmt.Fprintln(os.Stderr, "bench: gateway tools/list over HTTP, 1,000 tools, warm")
	n := pairs(200)
	lat, err := measure(n, "tools/list", `{}`, func(b []byte) bool {
		return bytes.Contains(b, []byte(`"tool_01000"`)) || bytes.Contains(b, []byte(`"tool_00999"`))
	})
	if err != nil {
		return nil, err
	}
	g, d := medianD(lat["gateway"]), medianD(lat["direct"])
	r = float64(g) / float64(max(d, 1))
	rows = append(rows, tableRow{fmt.Sprintf("`crawlcheck run --url` tools/list, 1,000 tools, warm session, streamable HTTP (p50 of %d each)", n),
		dur(g) + " wall", dur(d) + " direct HTTP session", fmt.Sprintf("%.2f× (wall)", r), "≤ 1.5× direct", metIf(r <= 1.5) + " (wall)"})

	fmt.Fprintln(os.Stderr, "bench: gateway tools/call over HTTP")
	calls := pairs(3000)
	lat, err = measure(calls, "tools/call", `{"name":"tool_00001","arguments":{"id":"a"}}`, func(b []byte) bool { return bytes.Contains(b, []byte(`"result"`)) })
	if err != nil {
		return nil, err
	}
	pct := func(xs []time.Duration, p float64) time.Duration {
		s := slices.Clone(xs)
		slices.Sort(s)
		return s[min(len(s)-1, int(float64(len(s))*p))]
	}
	for _, q := range []struct {
		name   string
		p      float64
		target float64
	}{{"p50", 0.5, 1.2}, {"p99", 0.99, 1.5}} {
		g, d := pct(lat["gateway"], q.p), pct(lat["direct"], q.p)
		r := float64(g) / float64(max(d, 1))
		rows = append(rows, tableRow{fmt.Sprintf("`crawlcheck run --url` tools/call %s, warm session, streamable HTTP (%d calls each)", q.name, calls),
			dur(g) + " wall", dur(d) + " direct HTTP session", fmt.Sprintf("%.2f× (wall)", r), fmt.Sprintf("≤ %.1f× direct", q.target), metIf(r <= q.target) + " (wall)"})
	}
	return rows, nil
}
