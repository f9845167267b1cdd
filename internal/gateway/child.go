package gateway

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// child is the server the gateway runs: started with the argv and the
// environment it was given, exactly (argv[0] is looked up on PATH as a
// client's launcher does, and stays as typed in the child's argv), in a
// process group of its own so that the gateway's signals reach the
// server's own children too (an npx or uv launcher's node or python).
type child struct {
	cmd    *exec.Cmd
	tree   processTree // what the child starts, ended with it
	stdin  *os.File    // the gateway's end of the child's stdin
	stdout *os.File    // the gateway's end of the child's stdout
	// exited is closed once the child has exited and status is set.
	exited chan struct{}
	status int
}

// startChild starts argv with its stdin and stdout on pipes the gateway
// holds and its stderr on stderr (the server's log, which clients show).
// The pipes are plain files, not exec's copying goroutines, so that the
// child can be waited for at any time, even while a grandchild still holds
// its stdout.
func startChild(argv []string, stderr io.Writer) (*child, error) {
	if len(argv) == 0 {
		return nil, errors.New("no server command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, stderr
	// The server's stderr, when the gateway's is not a file, is copied by
	// exec; a grandchild holding it open must not hold the exit forever.
	cmd.WaitDelay = time.Second
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
		return nil, err
	}
	inR.Close()
	outW.Close()
	tree, note, err := contain(cmd)
	if err != nil {
		inW.Close()
		outR.Close()
		cmd.Wait()
		return nil, err
	}
	if note != "" {
		io.WriteString(stderr, "crawlcheck run: "+note+"\n")
	}
	c := &child{cmd: cmd, tree: tree, stdin: inW, stdout: outR, exited: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		c.status = exitStatus(cmd.ProcessState, err)
		close(c.exited)
	}()
	return c, nil
}

// exitStatus is the status the gateway exits with for the child's: its
// exit code, or 128 plus the signal that ended it (as a shell says it).
func exitStatus(ps *os.ProcessState, err error) int {
	if ps == nil {
		if err != nil {
			return 1
		}
		return 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// signal sends sig to the child's process group or Job object (the child
// and what it started), and to the child itself should that fail.
func (c *child) signal(sig syscall.Signal) {
	select {
	case <-c.exited:
		return
	default:
	}
	if c.tree.signal(c.cmd.Process.Pid, sig) != nil {
		c.cmd.Process.Signal(sig)
	}
}

// stop ends the child as the MCP stdio transport says a client ends its
// server: close its stdin and wait up to grace, then SIGTERM and wait up to
// grace, then SIGKILL (its process group). It returns once the child has
// exited.
func (c *child) stop(grace time.Duration) {
	c.stdin.Close()
	if c.waitFor(grace) {
		return
	}
	c.signal(syscall.SIGTERM)
	if c.waitFor(grace) {
		return
	}
	c.kill()
}

// kill SIGKILLs the child's process group and waits for the child.
func (c *child) kill() {
	c.signal(syscall.SIGKILL)
	<-c.exited
}

func (c *child) waitFor(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.exited:
		return true
	case <-t.C:
		return false
	}
}
