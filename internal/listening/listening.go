// Package listening starts the project's test servers — the scenario MCP
// server and the test issuer — the way every test does: run the command with
// --listen 127.0.0.1:0, read the URL it prints alone on its first line, and
// stop it with SIGTERM when the test is done.
package listening

import (
	"bufio"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

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
