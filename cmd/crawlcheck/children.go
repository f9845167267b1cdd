package main

import (
	"context"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// The servers crawlcheck starts (a stdio --server, a lockfile's stdio
// endpoint) end with it on every path: a normal end closes each session
// (stdin closed, SIGTERM, SIGKILL: the stdio transport's shutdown), and a
// signal to crawlcheck (kill -TERM, Ctrl-C, a closed terminal) ends each
// child's whole process group before crawlcheck exits (issue 34, item 5).
// A child runs in a process group of its own, so that what it started
// (npx's node, a wrapper script's server) ends with it.

// childEndWait bounds how long a child's group is given to exit after
// SIGTERM before SIGKILL, and how long crawlcheck waits for its children
// on a signal.
const childEndWait = time.Second

// running are the children started under the signal context.
var running struct {
	sync.Mutex
	ctx    context.Context
	ended  map[*exec.Cmd]chan struct{}
	signal os.Signal
	sigs   chan os.Signal // what watchSignals hears; nil before it
}

// watchSignals makes the context every child is started under: a signal
// cancels it, which ends each child's group (commandOf's Cancel), and
// crawlcheck exits with 128 and the signal's number once they have ended
// (at most childEndWait each).
func watchSignals() {
	ctx, cancel := context.WithCancel(context.Background())
	running.ctx = ctx
	running.ended = map[*exec.Cmd]chan struct{}{}
	ch := make(chan os.Signal, 1)
	running.sigs = ch
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-ch
		cancel()
		running.Lock()
		waits := make([]chan struct{}, 0, len(running.ended))
		for _, e := range running.ended {
			waits = append(waits, e)
		}
		running.Unlock()
		deadline := time.After(2 * childEndWait)
	wait:
		for _, e := range waits {
			select {
			case <-e:
			case <-deadline:
				break wait
			}
		}
		code := 128
		if n, ok := s.(syscall.Signal); ok {
			code += int(n)
		}
		os.Exit(code)
	}()
}

// leaveSignals hands the process's signals to a command that handles them
// itself: the gateway (run) forwards them to its server and exits with the
// server's status, where watchSignals would exit 128+N at once.
func leaveSignals() {
	if running.sigs != nil {
		signal.Stop(running.sigs)
	}
}

// stopIfSignalled parks the caller for good once a signal has begun ending
// the children: what a session saw since is the signal's doing (a server
// ended by it reads as one that exited before answering), and must not
// become a record, a lockfile or an exit status that blames the server.
// The signal's goroutine exits with 128 and its number meanwhile.
func stopIfSignalled() {
	if running.ctx == nil || running.ctx.Err() == nil {
		return
	}
	for {
		time.Sleep(time.Minute)
	}
}

// commandOf is the exec.Cmd of a stdio server: in a process group of its
// own, ended with that group when crawlcheck is signalled. forget drops it
// from the children a signal waits for, once its session has ended.
func commandOf(args []string) (cmd *exec.Cmd, forget func()) {
	ctx := running.ctx
	if ctx == nil {
		ctx = context.Background() // tests that call run directly
	}
	cmd = exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.SysProcAttr = groupAttr()
	ended := make(chan struct{})
	cmd.Cancel = func() error {
		// Called by os/exec once the child has started and ctx ends.
		defer close(ended)
		return endGroup(cmd.Process)
	}
	running.Lock()
	if running.ended != nil {
		running.ended[cmd] = ended
	}
	running.Unlock()
	return cmd, func() {
		running.Lock()
		delete(running.ended, cmd)
		running.Unlock()
	}
}
