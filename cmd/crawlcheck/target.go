package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/preflight"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// target is where a tool list comes from: a live server over stdio,
// streamable HTTP or the legacy HTTP+SSE transport, or a file holding one
// page.
type target struct {
	args      []string // stdio: the command line
	env       []string // stdio: extra environment (from an MCP client config)
	dir       string   // stdio: the working directory (from an MCP client config), "" for ours
	headers   []string // HTTP: "Name=value" headers to send (from an MCP client config)
	url       string   // HTTP: the endpoint; with toolsFile, only the server's name
	sse       bool     // url is the event stream of the legacy HTTP+SSE transport (protocol 2024-11-05)
	toolsFile string   // a file: a JSON array of tools, a tools/list result or a JSON-RPC response
	// noFeatures reads no prompts, resources or UI templates (lock
	// --features=false): a lockfile made so pins none of them.
	noFeatures bool
}

// sourceFlags are --tools, --server, --url and --sse, and the headers an
// HTTP server is sent (headerFlags).
type sourceFlags struct {
	tools, server, url, sse string
	headers                 headerFlags
}

func (s *sourceFlags) register(fs *flag.FlagSet) {
	s.headers.register(fs)
	fs.StringVar(&s.tools, "tools", "", "read the tool list from `FILE` (one page) instead of a server")
	fs.StringVar(&s.server, "server", "", "start the stdio server `\"CMD ARGS\"` (words split as a POSIX shell does, without expansion)")
	fs.StringVar(&s.url, "url", "", "connect to the streamable HTTP server at `URL`; with --tools, only names the server")
	fs.StringVar(&s.sse, "sse", "", "connect to the legacy HTTP+SSE server (protocol 2024-11-05) whose event stream is at `URL`")
}

// target returns the target the flags name, ok false when none is given.
func (s *sourceFlags) target() (target, bool, error) {
	switch {
	case s.sse != "" && (s.tools != "" || s.url != "" || s.server != ""):
		return target{}, false, usagef("--sse cannot be combined with --tools, --url or --server")
	case s.headers.given() && (s.tools != "" || s.server != ""):
		return target{}, false, usagef("--header, --header-env, --bearer-env and --header-file go with --url or --sse: they are sent to an HTTP server")
	case s.sse != "":
		headers, err := s.headers.resolve()
		return target{url: s.sse, sse: true, headers: headers}, err == nil, err
	case s.server != "" && (s.tools != "" || s.url != ""):
		return target{}, false, usagef("--server cannot be combined with --tools or --url")
	case s.tools != "":
		return target{toolsFile: s.tools, url: s.url}, true, nil
	case s.server != "":
		// The command line is read as the stdio endpoint it writes into a
		// lockfile, so that ci later starts the same argv.
		tg, err := endpointTarget("stdio:" + s.server)
		if err != nil {
			return target{}, false, usagef("--server: %v", err)
		}
		return tg, true, nil
	case s.url != "":
		headers, err := s.headers.resolve()
		return target{url: s.url, headers: headers}, err == nil, err
	}
	return target{}, false, nil
}

// endpointTarget is the server a written endpoint names (a lockfile's
// server.url: "stdio:" and a command line, or an http(s) URL), read by the
// core's one rule (the endpoint op), never split here.
func endpointTarget(ep string) (target, error) {
	var read struct {
		URL     *string  `json:"url"`
		Command []string `json:"command"`
	}
	if err := corecall.Into("endpoint", map[string]any{"endpoint": ep}, &read); err != nil {
		return target{}, err
	}
	if read.URL != nil {
		return target{url: *read.URL}, nil
	}
	return target{args: read.Command}, nil
}

// live reports whether the target is a server rather than a file.
func (t target) live() bool { return t.toolsFile == "" }

// observe reads the target's tool list. A file that cannot be read is an
// error; everything a server does wrong is in the Observation.
func (t target) observe(c *cli) (preflight.Observation, error) {
	if !t.live() {
		page, err := readInput("the tool list", t.toolsFile)
		if err != nil {
			return preflight.Observation{}, err
		}
		return preflight.Observation{Endpoint: t.url, Pages: [][]byte{page}}, nil
	}
	// --timeout bounds the whole check, closing the session included: a
	// server that lingers after its stdin closes (or an HTTP DELETE that
	// hangs) is not waited for past the deadline.
	deadline := time.Now().Add(c.timeout)
	var inner mcp.Transport
	var cmd *exec.Cmd
	if t.args != nil {
		var forget func()
		cmd, forget = commandOf(t.args)
		defer forget()
		cmd.Env = append(os.Environ(), t.env...)
		cmd.Dir = t.dir
		// The server's stderr is the server's text: shown, never obeyed.
		stderr := &lineEscaper{w: c.stderr}
		defer stderr.Close()
		cmd.Stderr = stderr
		cmd.WaitDelay = 100 * time.Millisecond // a grandchild holding stderr open cannot hold the check
		inner = &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	} else if t.sse {
		t.headers = t.withLogin(c)
		inner = &mcp.SSEClientTransport{Endpoint: t.url, HTTPClient: &http.Client{Timeout: c.timeout, Transport: withHeaders(t.url, t.headers)}}
	} else {
		t.headers = t.withLogin(c)
		inner = &mcp.StreamableClientTransport{Endpoint: t.url, MaxRetries: -1, HTTPClient: &http.Client{Timeout: c.timeout, Transport: withHeaders(t.url, t.headers)}}
	}
	tr, err := preflight.Wrap(inner)
	if err != nil {
		return preflight.Observation{}, err
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	caps, err := clientCapabilities(c.capabilities)
	if err != nil {
		return preflight.Observation{}, usagef("%v", err)
	}
	sopts, err := sessionOptions(c.handshake)
	if err != nil {
		return preflight.Observation{}, usagef("%v", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "crawlcheck", Version: "1"}, &mcp.ClientOptions{Capabilities: caps})
	cs, obs := preflight.Connect(ctx, client, tr, sopts, &preflight.Options{PageCap: c.pageCap, MaxAnswerBytes: int64(c.maxInput), CheckOnly: true, Features: !t.noFeatures})
	if cs != nil {
		closeBy(cs, cmd, deadline)
	}
	if cmd != nil && cmd.Process != nil && groupAlive(cmd.Process) {
		// The session is over, and something the server started lives on
		// in its process group: it ends with the check too.
		endGroup(cmd.Process)
	}
	if cmd != nil {
		stopIfSignalled()
	}
	obs.Timeout = c.timeout // the deadline a timeout's record names
	// Read once the session is over: npx installs a package on its first
	// run, so what ran is in its cache by now.
	lctx, lcancel := context.WithTimeout(context.Background(), c.timeout)
	obs.Launched = t.launched(lctx)
	lcancel()
	if cmd != nil && obs.Failure == preflight.FaultTimeout && obs.FailureAt == preflight.AtHandshake {
		// The README's own example is "npx -y my-server": its first run
		// downloads the server inside the deadline, and a person reads only
		// "no answer within 10 s". Which flag helps is this program's to say.
		say(c.stderr, "crawlcheck: the server did not answer its handshake within --timeout %s; a command that fetches its server first (npx -y, uvx, docker run) can take longer on its first run: try --timeout 60s\n", c.timeout)
	}
	for _, p := range obs.Pages {
		inputRead(len(p))
	}
	return obs, nil
}

// withLogin is the target's headers and, unless they carry an
// Authorization of their own, the token of the login kept for its
// endpoint (crawlcheck login), which is sent to that endpoint alone.
func (t target) withLogin(c *cli) []string {
	for _, kv := range t.headers {
		if name, _, _ := strings.Cut(kv, "="); strings.EqualFold(name, "Authorization") {
			return t.headers
		}
	}
	if auth := storedToken(c, t.url); auth != "" {
		return append(slices.Clip(t.headers), auth)
	}
	return t.headers
}

// withHeaders is the default transport, sending headers ("Name=value": a
// config's, or --header's) with every request to the endpoint's origin, as
// the client a config belongs to does, when there are any.
func withHeaders(endpoint string, headers []string) http.RoundTripper {
	if len(headers) == 0 {
		return nil
	}
	h := http.Header{}
	for _, kv := range headers {
		name, value, _ := strings.Cut(kv, "=")
		h.Set(name, value)
	}
	return preflight.HeaderTransport(http.DefaultTransport, endpoint, h)
}

// closeBy closes the session, waiting no later than the deadline: then a
// stdio server is killed (and its exit waited for briefly), an HTTP
// session's DELETE abandoned.
func closeBy(cs *mcp.ClientSession, cmd *exec.Cmd, deadline time.Time) {
	closed := make(chan struct{})
	go func() {
		cs.Close()
		close(closed)
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-closed:
		return
	case <-timer.C:
	}
	if cmd != nil && cmd.Process != nil {
		cmd.Process.Kill()
		select {
		case <-closed:
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// The --handshake values.
const (
	handshakeNewest     = "newest"
	handshakeInitialize = "initialize"
)

// sessionOptions reads --handshake. go-sdk speaks server/discover (protocol
// 2026-07-28) to a server that answers it, as mcp 2.x's servers do, where
// the JS SDK clients (1.x and 2.x) and Python's (mcp 1.x and 2.x) speak
// initialize at 2025-11-25: the record names the handshake and the
// protocol version, so a check speaks what the agent's client speaks to
// be the agent's record byte for byte. initialize asks go-sdk for
// 2025-11-25, with which it speaks initialize alone.
func sessionOptions(handshake string) (*mcp.ClientSessionOptions, error) {
	switch handshake {
	case handshakeNewest:
		return nil, nil
	case handshakeInitialize:
		return &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}, nil
	}
	return nil, fmt.Errorf("--handshake: unknown handshake %q (newest or initialize)", handshake)
}

// readKey reads a key file: the base64 key on one line.
func readKey(what, path string) (string, error) {
	data, err := readInput(what, path)
	if err != nil {
		return "", err
	}
	key := strings.TrimSpace(string(data))
	if key == "" {
		return "", fmt.Errorf("%s %s is empty", what, path)
	}
	return key, nil
}

// defaultCapabilities are none: what the framework clients declare (the
// agents' MCP clients of LangChain, OpenAI Agents and CrewAI declare no
// roots), so that a lockfile made without the flag matches them. The
// lockfile records what it was made with (server.client_capabilities).
const defaultCapabilities = "none"

// clientCapabilities reads --capabilities: a comma-separated list of roots,
// sampling and elicitation, or none. A server may offer tools according to
// what the client declares (server-everything offers get-roots-list only to
// a client declaring roots), so a lockfile pins what a client declaring
// these capabilities is offered.
func clientCapabilities(list string) (*mcp.ClientCapabilities, error) {
	caps := &mcp.ClientCapabilities{}
	for _, name := range strings.Split(list, ",") {
		switch strings.TrimSpace(name) {
		case "none", "":
		case "roots":
			caps.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
		case "sampling":
			caps.Sampling = &mcp.SamplingCapabilities{}
		case "elicitation":
			caps.Elicitation = &mcp.ElicitationCapabilities{}
		default:
			return nil, fmt.Errorf("--capabilities: unknown capability %q (roots, sampling, elicitation or none)", name)
		}
	}
	return caps, nil
}
