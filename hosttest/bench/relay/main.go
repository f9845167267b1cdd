// Command relay is make bench's bare byte relay: what a gateway that
// checks nothing costs. It starts the command after "--" and copies stdin
// to it and its stdout back, unread, and exits with its status. The gateway
// rows (hosttest/bench/gateway.go) set `crawlcheck run` beside it and
// beside the server started directly.
//
// With -lines it reads the server's stdout too, line by line, and writes
// each line on: the least any gateway that sees the server's answers does
// (crawlcheck run must: list_changed, its own listing's answers, the
// handshake's instructions). The server's answer then crosses two pipes
// and wakes two threads of this process, where the byte relay hands the
// server its own stdout to the client (one pipe, one wake).
//
//	relay [-lines] -- CMD ARGS...
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	args := os.Args[1:]
	lines := len(args) > 0 && args[0] == "-lines"
	if lines {
		args = args[1:]
	}
	if len(args) < 2 || args[0] != "--" {
		fmt.Fprintln(os.Stderr, "usage: relay [-lines] -- CMD ARGS...")
		os.Exit(2)
	}
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	var out io.ReadCloser
	if lines {
		r, w, err := os.Pipe()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		cmd.Stdout, out = w, r
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if out != nil {
		cmd.Stdout.(*os.File).Close()
		go copyLines(os.Stdout, out)
	}
	go func() {
		io.Copy(in, os.Stdin)
		in.Close()
	}()
	cmd.Wait()
	os.Exit(cmd.ProcessState.ExitCode())
}

// copyLines writes each line read from r to w as it comes, in one write.
func copyLines(w io.Writer, r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(buf) > 0 {
			w.Write(buf)
			buf = buf[:0]
		}
		if err != nil {
			return
		}
	}
}
