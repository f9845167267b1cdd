// Command relay is make bench's bare byte relay: what a gateway that
// checks nothing costs. It starts the command after "--" and copies stdin
// to it and its stdout back, unread, and exits with its status. The gateway
// rows (hosttest/bench/gateway.go) set `crawlcheck run` beside it and
// beside the server started directly.
//
//	relay -- CMD ARGS...
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) < 3 || os.Args[1] != "--" {
		fmt.Fprintln(os.Stderr, "usage: relay -- CMD ARGS...")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	go func() {
		io.Copy(in, os.Stdin)
		in.Close()
	}()
	cmd.Wait()
	os.Exit(cmd.ProcessState.ExitCode())
}
