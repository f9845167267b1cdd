package launched

import (
	"bytes"
	"os/exec"
	"time"
)

// waitDelay is how long Wait waits, after the command exits or its
// context's kill, for its stdout to be closed: a grandchild the command
// left running may hold it open for as long as it lives.
const waitDelay = time.Second

// output runs cmd and answers its stdout, at most limit bytes. ok is false
// when it does not start, exits non-zero, is killed as its context ends,
// or writes more than limit. Stdout is a bounded buffer, not a pipe read
// before Wait: such a read would last as long as a grandchild holding the
// pipe, past the kill; with WaitDelay, Wait closes the pipe and returns.
func output(cmd *exec.Cmd, limit int) ([]byte, bool) {
	w := &cappedBuffer{limit: limit}
	cmd.Stdout = w
	cmd.WaitDelay = waitDelay
	if err := cmd.Run(); err != nil || w.over {
		return nil, false
	}
	return w.buf.Bytes(), true
}

// cappedBuffer keeps the first limit bytes written to it and notes any
// past them. It takes (and drops) what is past the limit rather than
// failing the write, so the command is not left blocked on a full pipe
// until its context ends.
type cappedBuffer struct {
	buf   bytes.Buffer
	limit int
	over  bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.limit - c.buf.Len(); len(p) > room {
		c.over = true
		c.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.buf.Write(p)
}
