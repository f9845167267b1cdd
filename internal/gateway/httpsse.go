package gateway

// The server-to-client half of the HTTP upstream: the event streams a
// server answers on (a POST's text/event-stream answer, the session's own
// GET stream, the legacy HTTP+SSE transport of 2024-11-05) and the SSE
// reader under all of them. It lives apart from httpup.go, which sends the
// client's frames and records the upstream's faults, so each file reads as
// one direction of the bridge.

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"time"

	"github.com/crawlcheck/verifier/internal/preflight"
)

// events reads an event stream, handing each message event's data to the
// gateway, until it ends; answered reports whether the frame answering
// want ("" for none) came, last is the id of the last event that had one.
func (h *httpUpstream) events(body io.Reader, env envelope, want string) (answered bool, last string) {
	readEvents(body, h.g.cfg.MaxLine, func(name, id string, data []byte, tooLarge bool) {
		if id != "" {
			last = id
		}
		switch {
		case tooLarge:
			h.tooLarge()
		case len(data) > 0 && (name == "" || name == "message"):
			if want != "" {
				if a, err := parseEnvelope(bytes.TrimSpace(data)); err == nil && a.response() && idKey(a.id) == want {
					answered = true
					h.noteVersion(env, data)
				}
			}
			h.emit(data)
		}
	})
	return answered, last
}

// get opens an event stream of the session with a GET: the session's own
// stream (last "") or, resuming a stream that broke, the one whose last
// event was last. nil when the server opens none.
func (h *httpUpstream) get(last string) *http.Response {
	req, err := http.NewRequestWithContext(h.ctx, http.MethodGet, h.r.URL, nil)
	if err != nil {
		return nil
	}
	req.Header.Set("Accept", "text/event-stream")
	h.setHeaders(h.ctx, req, "")
	if last != "" {
		req.Header.Set(hdrLastID, last)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode/100 != 2 || mt != "text/event-stream" {
		resp.Body.Close()
		return nil
	}
	return resp
}

// listen opens the session's own event stream once the handshake is
// complete (a session before 2026-07-28: that revision's server sends on
// the client's subscriptions/listen instead), where the server sends its
// requests and notifications outside any request: it is opened again from
// its last event when it ends, while the session lasts; a server that
// answers the GET with anything but a stream (405: it offers none) is
// not asked again.
func (h *httpUpstream) listen() {
	h.mu.Lock()
	open := h.listening || h.r.SSE || h.version >= standardHeadersVersion
	h.listening = true
	h.mu.Unlock()
	if open {
		return
	}
	go func() {
		last := ""
		for tries := 0; tries < 5 && h.ctx.Err() == nil; tries++ {
			resp := h.get(last)
			if resp == nil {
				return
			}
			_, l := h.events(resp.Body, envelope{}, "")
			resp.Body.Close()
			if l != "" {
				last, tries = l, 0
			}
			select {
			case <-h.ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}()
}

// legacyStream is the HTTP+SSE transport of protocol 2024-11-05: a GET
// stream whose first event names where frames are POSTed (of the stream's
// origin: one elsewhere is refused, since the approved server answers for
// its own origin), and on which every answer and message of the server's
// comes. The session ends with the stream.
func (h *httpUpstream) legacyStream() {
	// A stream that could not be opened is the session's record, and the
	// client's first request (waiting for the stream's endpoint event) is
	// answered with its words before the session ends (write).
	fail := func(code, metadata string, status int) {
		words := h.g.recordHandshakeFault(code, metadata, status)
		if words == "" {
			words = "the server's event stream could not be opened (" + faultWords(code, status) + ")"
		}
		h.mu.Lock()
		h.closing, h.endWords = true, words
		h.mu.Unlock()
		close(h.ready)
	}
	req, err := http.NewRequestWithContext(h.ctx, http.MethodGet, h.r.URL, nil)
	if err != nil {
		fail(preflight.FaultSessionFailed, "", 0)
		return
	}
	req.Header.Set("Accept", "text/event-stream")
	h.setHeaders(h.ctx, req, "")
	resp, err := h.client.Do(req)
	if err != nil {
		fail(netFault(err), "", 0)
		return
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		code := preflight.FaultUnauthorized
		if resp.StatusCode == http.StatusForbidden {
			code = preflight.FaultForbidden
		}
		fail(code, preflight.ResourceMetadataOf(resp.Header), resp.StatusCode)
		return
	case resp.StatusCode/100 != 2:
		fail(preflight.FaultSessionFailed, "", resp.StatusCode)
		return
	}
	first, refused := true, false
	readEvents(resp.Body, h.g.cfg.MaxLine, func(name, _ string, data []byte, tooLarge bool) {
		switch {
		case refused:
		case first:
			first = false
			u, err := sameOriginURL(h.r.URL, string(data))
			if name != "endpoint" || err != nil {
				h.g.say("the server's first event names no message endpoint of its origin: the session ends")
				refused = true
				resp.Body.Close()
				return
			}
			h.mu.Lock()
			h.postURL = u
			h.mu.Unlock()
			close(h.ready)
		case tooLarge:
			h.tooLarge()
		case len(data) > 0:
			h.emit(data)
		}
	})
	if first || refused {
		fail(preflight.FaultSessionFailed, "", 0)
		return
	}
	h.mu.Lock()
	closing := h.closing
	h.mu.Unlock()
	if !closing {
		h.g.say("the server's event stream ended: the session is over")
	}
	h.finish(1)
}

// sameOriginURL resolves ref against base and refuses one of another
// origin (scheme, host and port, the port defaulted by the scheme).
func sameOriginURL(base, ref string) (string, error) {
	b, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	u, err := b.Parse(ref)
	if err != nil {
		return "", err
	}
	if !preflight.SameOrigin(u, b) {
		return "", errors.New("another origin")
	}
	return u.String(), nil
}

// readEvents parses an event stream by the SSE standard's rules (a
// leading BOM dropped; lines end at CRLF, LF or CR; a line starting with
// ":" is a comment; a field is the text before the first ":", its value
// what follows less one leading blank; data lines are joined with \n; a
// blank line ends an event) and hands each event that has a field to
// dispatch: its type, id, data, and tooLarge when its data passed max
// bytes (the data is then dropped). It returns when the stream ends.
func readEvents(r io.Reader, max int, dispatch func(name, id string, data []byte, tooLarge bool)) {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		name, id string
		data     []byte
		fields   bool
		hasData  bool
		over     bool
		started  bool
	)
	for {
		line, err := readLine(br, max+64)
		if err != nil {
			return
		}
		if !started {
			started = true
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if line == nil { // a line past the bound
			over, fields = true, true
			continue
		}
		if len(line) == 0 {
			if fields {
				dispatch(name, id, data, over)
			}
			name, data, fields, hasData, over = "", nil, false, false, false
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value, _ = bytes.CutPrefix(value, []byte(" "))
		fields = true
		switch string(field) {
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data, hasData = append(data, value...), true
			if len(data) > max {
				over, data = true, nil
			}
		case "event":
			name = string(value)
		case "id":
			id = string(value)
		}
	}
}

// readLine reads one line of an event stream, without its end (CRLF, LF
// or a lone CR); a line longer than max is read to its end and returned
// as nil.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	over := false
	for {
		b, err := br.ReadByte()
		if err != nil {
			return nil, err
		}
		switch b {
		case '\n':
			if over {
				return nil, nil
			}
			return append([]byte{}, line...), nil
		case '\r':
			if next, err := br.Peek(1); err == nil && next[0] == '\n' {
				br.ReadByte()
			}
			if over {
				return nil, nil
			}
			return append([]byte{}, line...), nil
		}
		if !over {
			if line = append(line, b); len(line) > max {
				over, line = true, nil
			}
		}
	}
}
