// Package listening is both sides of how the project's test servers — the
// scenario MCP server and the test issuer — are started: Serve is the
// server's (listen, print the URL alone on the first line of stdout, serve
// until told to stop), Start the test's (run the command with --listen
// 127.0.0.1:0, read the URL it prints, and stop it with SIGTERM when the
// test is done).
package listening

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Serve listens on addr, prints url(the address it listens on) alone on one
// line of stdout, and serves h until ctx is done (a test server's SIGINT or
// SIGTERM). It then closes the server rather than shut it down gracefully:
// a request a test server holds on purpose (a hang knob) would hold a
// graceful shutdown open forever.
func Serve(ctx context.Context, addr string, url func(hostport string) string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if _, err := fmt.Println(url(ln.Addr().String())); err != nil {
		ln.Close()
		return err
	}
	hs := &http.Server{Handler: h}
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	if err := hs.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}

// Timeout bounds the wait for the URL line.
const Timeout = 10 * time.Second

// Start runs cmd and returns the URL it prints and a function that stops it.
// A command that prints something else, or nothing within Timeout, is
// stopped and reported as an error.
func Start(cmd *exec.Cmd) (url string, stop func(), err error) {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- strings.TrimSpace(l)
	}()
	select {
	case url = <-line:
		if !strings.HasPrefix(url, "http://127.0.0.1:") {
			stop()
			return "", nil, fmt.Errorf("%s printed %q, not its URL", cmd.Path, url)
		}
		return url, stop, nil
	case <-time.After(Timeout):
		stop()
		return "", nil, fmt.Errorf("%s printed no URL within %s", cmd.Path, Timeout)
	}
}
