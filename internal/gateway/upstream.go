package gateway

import (
	"io"
	"syscall"
	"time"

	"github.com/crawlcheck/verifier/internal/preflight"
)

// upstream is the server side of a gateway: the frames the gateway sends
// the server, and the server's frames, one a line, as the gateway reads
// them from a stdio server's stdout. A child process is one (child.go); a
// remote server over streamable HTTP or the legacy HTTP+SSE transport is
// the other (httpup.go), so that everything the gateway does between the
// two streams holds for both.
type upstream interface {
	// write sends one frame and its newline to the server.
	write(line []byte) (int, error)
	// output is the server's frames, one a line.
	output() io.Reader
	// done is closed once the server is gone (a child exited, an HTTP
	// session ended) and exitStatus is set.
	done() <-chan struct{}
	exitStatus() int
	// closeInput says the client is going (a child's stdin is closed).
	closeInput()
	// waitFor waits at most d for done, reporting whether it came.
	waitFor(d time.Duration) bool
	// stop ends the server as its transport says a client ends it, within
	// grace; kill ends it at once. Both return once it is gone.
	stop(grace time.Duration)
	kill()
	signal(sig syscall.Signal)
}

func (c *child) write(line []byte) (int, error) { return c.stdin.Write(line) }
func (c *child) output() io.Reader              { return c.stdout }
func (c *child) done() <-chan struct{}          { return c.exited }
func (c *child) exitStatus() int                { return c.status }
func (c *child) closeInput()                    { c.stdin.Close() }

// startUpstream starts the server the configuration names: the remote one
// when Remote.URL is set, else the command as the gateway's child.
func (g *Gateway) startUpstream() (upstream, error) {
	if g.cfg.Remote.URL != "" {
		return newHTTPUpstream(g), nil
	}
	c, err := startChild(g.cfg.Command, g.cfg.Stderr)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// endpointOf is the endpoint a configuration's records name: the remote
// URL as the core writes it, or "stdio:" and the command line.
func endpointOf(cfg Config) (string, error) {
	if cfg.Remote.URL != "" {
		return preflight.URLEndpoint(cfg.Remote.URL)
	}
	return preflight.StdioEndpoint(cfg.Command)
}

// goneFault is the fault of a listing the server went away before
// answering: a child's exit, or the end of an HTTP session.
func (g *Gateway) goneFault() string {
	if _, ok := g.child.(*httpUpstream); ok {
		return preflight.FaultSessionEnded
	}
	return preflight.FaultProcessExited
}
