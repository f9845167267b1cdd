package service

import (
	"bytes"
	"net"
	"net/http"
	"strconv"
)

// problemJSON is an RFC 9457 problem document (docs/issuer.md, "Errors").
func problemJSON(status int, code, detail string) []byte {
	return mustJSON(map[string]any{
		"type": "urn:crawlcheck:problem:" + code, "title": http.StatusText(status), "status": status,
		"code": code, "detail": detail,
	})
}

// plainProblem is the problem a status net/http or the log answered on its
// own says: a fixed code and text by status, never the text the answer
// carried (issue 37, F17: every error as problem+json, no internals).
func plainProblem(status int) (code, detail string) {
	switch status {
	case http.StatusBadRequest:
		return "bad_request", "the request is not HTTP this service reads"
	case http.StatusNotFound:
		return "not_found", "no such resource"
	case http.StatusMethodNotAllowed:
		return "method_not_allowed", "this resource does not answer that method"
	case http.StatusRequestHeaderFieldsTooLarge:
		return "headers_too_large", "the request's headers are larger than the service reads"
	case http.StatusNotImplemented:
		return "not_implemented", "the request uses a transfer coding the service does not know"
	case http.StatusServiceUnavailable:
		return "store_unavailable", "the store failed"
	}
	if status >= 500 {
		return "internal", "the service failed on this request"
	}
	return "bad_request", http.StatusText(status)
}

// problemsOnly makes every error answer of h a problem: an answer of 400 or
// more that is not already application/problem+json (the mux's own 404 and
// 405, the log's) has its body replaced by the problem of its status.
func problemsOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&problemWriter{ResponseWriter: w}, r)
	})
}

type problemWriter struct {
	http.ResponseWriter
	wrote, replaced bool
}

func (w *problemWriter) WriteHeader(status int) {
	if w.wrote {
		return
	}
	w.wrote = true
	if status >= 400 && w.Header().Get("Content-Type") != "application/problem+json" {
		code, detail := plainProblem(status)
		h := w.Header()
		h.Del("Content-Length")
		h.Del("X-Content-Type-Options")
		h.Set("Content-Type", "application/problem+json")
		h.Set("Cache-Control", "no-store")
		w.ResponseWriter.WriteHeader(status)
		w.ResponseWriter.Write(problemJSON(status, code, detail))
		w.replaced = true
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *problemWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.replaced {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *problemWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ProblemListener wraps the listener the service is served on so that the
// answers net/http writes itself, before any handler runs (a malformed
// request 400, headers over MaxHeaderBytes 431, an unknown transfer coding
// 501), are problems too. net/http writes each of them in one write
// straight to the connection, a status line followed by exactly
// rawErrorHeaders and a text/plain body; no answer of a handler has that
// form (the handlers' answers all carry a Date), so that write, and only
// it, is replaced by the problem of its status.
func ProblemListener(ln net.Listener) net.Listener { return problemListener{ln} }

type problemListener struct{ net.Listener }

func (l problemListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return problemConn{c}, nil
}

type problemConn struct{ net.Conn }

// rawErrorHeaders are the headers net/http's server writes after the
// status line of an error it answers itself (net/http/server.go).
const rawErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

func (c problemConn) Write(p []byte) (int, error) {
	const proto = "HTTP/1.1 "
	if !bytes.HasPrefix(p, []byte(proto)) || len(p) < len(proto)+3 {
		return c.Conn.Write(p)
	}
	i := bytes.Index(p, []byte(rawErrorHeaders))
	status, err := strconv.Atoi(string(p[len(proto) : len(proto)+3]))
	if i < 0 || bytes.IndexByte(p[:i], '\n') >= 0 || err != nil || status < 400 {
		return c.Conn.Write(p)
	}
	code, detail := plainProblem(status)
	body := problemJSON(status, code, detail)
	out := proto + strconv.Itoa(status) + " " + http.StatusText(status) +
		"\r\nContent-Type: application/problem+json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n" + string(body)
	if _, err := c.Conn.Write([]byte(out)); err != nil {
		return 0, err
	}
	return len(p), nil
}
