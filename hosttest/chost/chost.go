// Package chost drives the C harness (hosttest/c/harness.c), which dlopens
// libcrawlcheck.so and answers framed requests.
//
// The library cannot be loaded into a Go test process (it carries its own Go
// runtime), so the harness is the host and this package is its remote
// control. Every length in a frame is a little-endian uint32:
// request = op_len op req_len req att_len att, response = resp_len resp,
// where att_len 0xFFFFFFFF (no att) asks for crawlcheck_call and any other
// for crawlcheck_call_raw with those attachments.
package chost

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
)

// Request is one call: an op and the request bytes, and for
// crawlcheck_call_raw (ABI 2) the attachments; nil Attachments is
// crawlcheck_call.
type Request struct {
	Op          string
	Body        []byte
	Attachments []byte
}

// Proc is a harness process in serve mode. Its methods may be called from
// several goroutines; calls are serialized.
type Proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	in     *bufio.Writer
	out    *bufio.Reader
	stderr bytes.Buffer

	mu sync.Mutex
}

// Start starts harness in serve mode on the library lib.
func Start(harness, lib string) (*Proc, error) {
	p := &Proc{cmd: exec.Command(harness, lib, "serve")}
	p.cmd.Stderr = &p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("chost: %w", err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("chost: %w", err)
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("chost: start %s: %w", harness, err)
	}
	p.in, p.out = bufio.NewWriterSize(p.stdin, 1<<16), bufio.NewReaderSize(stdout, 1<<16)
	return p, nil
}

// Call makes one call.
func (p *Proc) Call(op string, body []byte) ([]byte, error) {
	resps, err := p.CallAll([]Request{{Op: op, Body: body}})
	if err != nil {
		return nil, err
	}
	return resps[0], nil
}

// CallAll makes the calls in order, streaming requests while it reads
// responses so neither pipe can fill up and stall the other side.
func (p *Proc) CallAll(reqs []Request) ([][]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	werr := make(chan error, 1)
	go func() {
		for _, r := range reqs {
			if err := WriteRequest(p.in, r); err != nil {
				werr <- err
				return
			}
		}
		werr <- p.in.Flush()
	}()
	resps := make([][]byte, 0, len(reqs))
	for range reqs {
		resp, err := ReadFrame(p.out)
		if err != nil {
			<-werr
			return nil, fmt.Errorf("chost: response %d: %w (harness stderr: %s)", len(resps), err, p.stderr.String())
		}
		resps = append(resps, resp)
	}
	if err := <-werr; err != nil {
		return nil, fmt.Errorf("chost: write requests: %w", err)
	}
	return resps, nil
}

// Close ends the harness and reports how it exited.
func (p *Proc) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		return fmt.Errorf("chost: harness: %w (stderr: %s)", err, p.stderr.String())
	}
	return nil
}

// Run runs the harness once in a batch mode (threads, rss, bench, overcap, overcap_raw)
// with reqs framed on its stdin, and returns its stdout.
func Run(harness, lib string, reqs []Request, args ...string) ([]byte, error) {
	var in bytes.Buffer
	for _, r := range reqs {
		if err := WriteRequest(&in, r); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(harness, append([]string{lib}, args...)...)
	var out, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &in, &out, &stderr
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("chost: harness %s: %w (stderr: %s)", strings.Join(args, " "), err, stderr.String())
	}
	return out.Bytes(), nil
}

// WriteRequest writes one request frame.
func WriteRequest(w io.Writer, r Request) error {
	if len(r.Op) > 1<<32-1 || len(r.Body) > 1<<32-1 || len(r.Attachments) >= 1<<32-1 {
		return errors.New("chost: request too long for a frame")
	}
	if strings.IndexByte(r.Op, 0) >= 0 {
		return fmt.Errorf("chost: op %q contains NUL, which a C string cannot carry", r.Op)
	}
	frame := make([]byte, 0, 12+len(r.Op)+len(r.Body)+len(r.Attachments))
	frame = binary.LittleEndian.AppendUint32(frame, uint32(len(r.Op)))
	frame = append(frame, r.Op...)
	frame = binary.LittleEndian.AppendUint32(frame, uint32(len(r.Body)))
	frame = append(frame, r.Body...)
	if r.Attachments == nil {
		frame = binary.LittleEndian.AppendUint32(frame, 1<<32-1)
	} else {
		frame = binary.LittleEndian.AppendUint32(frame, uint32(len(r.Attachments)))
		frame = append(frame, r.Attachments...)
	}
	_, err := w.Write(frame)
	return err
}

// ReadFrame reads one response frame.
func ReadFrame(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.LittleEndian.Uint32(n[:]))
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}

// ReadFrames splits a whole stdout of response frames.
func ReadFrames(b []byte) ([][]byte, error) {
	var frames [][]byte
	r := bytes.NewReader(b)
	for r.Len() > 0 {
		f, err := ReadFrame(r)
		if err != nil {
			return nil, fmt.Errorf("chost: frame %d: %w", len(frames), err)
		}
		frames = append(frames, f)
	}
	return frames, nil
}
