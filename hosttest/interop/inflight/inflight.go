// Package inflight changes one tool's description in a server's tools/list
// answer on its way to the client, and nothing else: the interop matrix's
// stand-in for a server that changed after it was approved (a rug pull),
// built around servers nobody here wrote. Every other byte passes as the
// server sent it, so a check sees the server's own framing and encoding.
package inflight

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Suffix is what the mutation appends to the description: plain ASCII, so
// inserting it before the string's closing quote keeps the JSON valid
// whatever escapes the server used.
const Suffix = " (changed in flight by the interop test)"

// Rewrite returns msg with Suffix appended to the description of the tool
// named tool when msg is a JSON-RPC answer whose result lists tools
// (result.tools[i].name == tool, with a string description), and ok false
// (msg unchanged) for anything else.
func Rewrite(msg []byte, tool string) (out []byte, ok bool) {
	if tool == "" {
		return msg, false
	}
	type frame struct {
		obj, expectKey, isTool bool
		key, name              string
		descEnd                int64
	}
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.UseNumber()
	var st []frame
	at := int64(-1)
	after := func() {
		if n := len(st); n > 0 && st[n-1].obj {
			st[n-1].expectKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return msg, false
		}
		n := len(st)
		if d, isDelim := tok.(json.Delim); isDelim {
			switch d {
			case '{', '[':
				isTool := d == '{' && n == 3 && st[0].obj && st[0].key == "result" && st[1].obj && st[1].key == "tools" && !st[2].obj
				if n > 0 && st[n-1].obj {
					st[n-1].expectKey = false
				}
				st = append(st, frame{obj: d == '{', expectKey: d == '{', isTool: isTool})
			default:
				f := st[n-1]
				st = st[:n-1]
				if f.isTool && f.name == tool && f.descEnd > 0 {
					at = f.descEnd - 1
				}
				after()
			}
			continue
		}
		if n > 0 && st[n-1].obj && st[n-1].expectKey {
			st[n-1].key, _ = tok.(string)
			st[n-1].expectKey = false
			continue
		}
		if n > 0 && st[n-1].isTool {
			if s, isStr := tok.(string); isStr {
				switch st[n-1].key {
				case "name":
					st[n-1].name = s
				case "description":
					st[n-1].descEnd = dec.InputOffset()
				}
			}
		}
		after()
	}
	if at < 0 || len(st) > 0 { // nothing to change, or not one whole message
		return msg, false
	}
	out = make([]byte, 0, len(msg)+len(Suffix))
	out = append(append(append(out, msg[:at]...), Suffix...), msg[at:]...)
	return out, true
}

// RewriteLines copies newline-delimited JSON-RPC from r to w (the stdio
// transport), rewriting each line Rewrite accepts; every line is written as
// soon as it is read.
func RewriteLines(w io.Writer, r io.Reader, tool string) error {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			body, end := cutEOL(line)
			if out, ok := Rewrite(body, tool); ok {
				line = append(out, end...)
			}
			if _, werr := w.Write(line); werr != nil {
				return werr
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

func cutEOL(line []byte) (body, end []byte) {
	body = bytes.TrimRight(line, "\r\n")
	return body, line[len(body):]
}

// Proxy forwards every request to Upstream (scheme and host; the path and
// query are the client's) and copies the answer back as it arrives. A JSON
// body is read whole and rewritten (its Content-Length set to the new
// length); an event stream (streamable HTTP's SSE answers, the legacy SSE
// transport's stream) is copied line by line, each flushed at once, and a
// `data:` line carrying the answer is rewritten in place: the event's
// framing is kept, and nothing is buffered past the line being read.
type Proxy struct {
	Upstream string
	tool     atomic.Pointer[string]
	// Client does the forwarding; one without keep-alives, so each request
	// of a session is its own connection as the client made it.
	Client *http.Client
}

// SetTool names the tool whose description the answers from now on carry
// changed; "" changes nothing.
func (p *Proxy) SetTool(tool string) { p.tool.Store(&tool) }

func (p *Proxy) toolName() string {
	if t := p.tool.Load(); t != nil {
		return *t
	}
	return ""
}

// NewProxy returns a Proxy to upstream changing nothing until SetTool.
func NewProxy(upstream string) *Proxy {
	return &Proxy{Upstream: strings.TrimRight(upstream, "/"), Client: &http.Client{
		Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true, ResponseHeaderTimeout: 30 * time.Second},
		// A redirect is the client's to follow, not the proxy's.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// hopByHop are the headers a proxy does not forward (RFC 9110 7.6.1).
var hopByHop = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// maxBody bounds what the proxy reads of a request or a JSON answer.
const maxBody = 64 << 20

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The request body is read whole before it is forwarded. Handed on as
	// r.Body, it raced the answer: once the answer's headers are flushed to
	// the client, net/http's server drains and closes r.Body, while the
	// forwarding Transport may still be reading it (after the last byte it
	// reads once more to see EOF); that read fails, the Transport closes
	// the upstream connection, and an event-stream answer ends without its
	// data. A server that answers headers first (FastMCP's SSE answers)
	// lost one tools/list answer in ten that way.
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err == nil && len(body) > maxBody {
		err = fmt.Errorf("request body over %d bytes", maxBody)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.Upstream+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = r.Header.Clone()
	for _, h := range hopByHop {
		out.Header.Del(h)
	}
	// An encoded body could not be rewritten.
	out.Header.Del("Accept-Encoding")
	resp, err := p.Client.Do(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	for _, h := range hopByHop {
		w.Header().Del(h)
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "application/json"):
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		body, _ = Rewrite(body, p.toolName())
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(resp.StatusCode)
		w.Write(body)
	case strings.HasPrefix(ct, "text/event-stream"):
		w.Header().Del("Content-Length")
		w.WriteHeader(resp.StatusCode)
		flush(w)
		p.events(w, resp.Body, p.toolName())
	default:
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}
}

// events copies an event stream, rewriting the data line of an answer.
func (p *Proxy) events(w http.ResponseWriter, body io.Reader, tool string) {
	br := bufio.NewReader(body)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			text, end := cutEOL(line)
			if data, isData := bytes.CutPrefix(text, []byte("data:")); isData {
				lead := len(text) - len(data)
				if len(data) > 0 && data[0] == ' ' {
					data, lead = data[1:], lead+1
				}
				if out, ok := Rewrite(data, tool); ok {
					line = append(append(append([]byte{}, text[:lead]...), out...), end...)
				}
			}
			if _, werr := w.Write(line); werr != nil {
				return
			}
			flush(w)
		}
		if err != nil {
			return
		}
	}
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
