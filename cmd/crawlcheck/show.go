package main

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"sync"

	"github.com/crawlcheck/verifier/core/textsafe"
)

// Everything this command prints for a person goes through say (or show):
// tool names, descriptions, diff text, endpoints, reasons and error messages
// come from servers, lockfiles and records, and a terminal obeys the control
// characters in them. textsafe.Escape (the core's escape_text rule) writes
// them visibly, so the approval prompt shows exactly what is approved. Only
// machine output (--json, canon, a lockfile on stdout) is written as bytes:
// it is JSON, whose strings carry no raw C0 control.

// show returns s as a person may safely read it.
func show(s string) string { return textsafe.Escape(s) }

// say is fmt.Fprintf with every string-like argument (strings and named
// string types, byte slices, errors, Stringers) escaped by show; the format
// itself is this program's own text.
func say(w io.Writer, format string, args ...any) {
	for i, a := range args {
		args[i] = shown(a)
	}
	fmt.Fprintf(w, format, args...)
}

func shown(a any) any {
	switch v := a.(type) {
	case nil:
		return a
	case error:
		return show(v.Error())
	case fmt.Stringer:
		return show(v.String())
	}
	rv := reflect.ValueOf(a)
	switch {
	case rv.Kind() == reflect.String:
		return show(rv.String())
	case rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8:
		return show(string(rv.Bytes()))
	}
	return a
}

// lineEscaper passes a stream meant for a person (a stdio server's stderr,
// the flag package's messages) through show line by line: the newlines
// stay, everything between them is escaped. A line longer than maxLine is
// cut into pieces, so the buffer stays bounded.
type lineEscaper struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

const maxLine = 4096

func (e *lineEscaper) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			room := maxLine - len(e.buf)
			if len(p) < room {
				e.buf = append(e.buf, p...)
				return n, nil
			}
			e.buf = append(e.buf, p[:room]...)
			p = p[room:]
			if err := e.flushLocked(false); err != nil {
				return n - len(p), err
			}
			continue
		}
		e.buf = append(e.buf, p[:i]...)
		p = p[i+1:]
		if err := e.flushLocked(true); err != nil {
			return n - len(p), err
		}
	}
	return n, nil
}

// Close writes what is left of an unfinished line.
func (e *lineEscaper) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.buf) == 0 {
		return nil
	}
	return e.flushLocked(true)
}

func (e *lineEscaper) flushLocked(newline bool) error {
	out := show(string(e.buf))
	if newline {
		out += "\n"
	}
	e.buf = e.buf[:0]
	_, err := io.WriteString(e.w, out)
	return err
}

// machine writes machine output (a JSON line) as it is, with a newline.
func machine(w io.Writer, line []byte) {
	w.Write(append(line[:len(line):len(line)], '\n'))
}
