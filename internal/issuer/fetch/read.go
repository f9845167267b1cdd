package fetch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/crawlcheck/verifier/internal/jsonframe"
)

// Reading is what the issuer read of an MCP server itself ({lock, url}
// requests): the facts a lock check or continuity check decides from. It
// holds no verdict: the core decides.
type Reading struct {
	Refused         error           // the policy did not let the endpoint be read: no reading at all
	Endpoint        string          // the URL that answered, after redirects
	ProtocolVersion string          // from the initialize result
	ServerInfo      json.RawMessage // the initialize result's serverInfo, verbatim
	HandshakeResult json.RawMessage // the initialize result as received: the core reads its instructions
	Pages           []any           // each tools/list result as received, in the core's page form (pageOf)
	PageCapReached  bool
	Failure         string // "", "server_unavailable", "check_timeout" or "answer_too_large"
	FailureDetail   string // for a person (a problem's detail, a sweep's error); answer_too_large's limit
	// Fault, FailureAt and FailurePage are the failure as the core takes
	// it (observed.failure: a host fault, docs/continuity.md), classified
	// from what the client saw, never its error text, so a signed answer
	// about a down server is worded by the core as every host's record is;
	// "" for answer_too_large, which the core words from FailureDetail.
	Fault       string
	FailureAt   string // "handshake" or "tools/list"
	FailurePage int    // the tools/list page, from 1
	// Received is the bytes of the server's answers the reading took, what
	// the issuer charges to the client that asked for it.
	Received int64
}

// Failures of a reading, named as the core names them.
const (
	failureUnavailable = "server_unavailable"
	failureTimeout     = "check_timeout"
	failureTooLarge    = "answer_too_large"
)

// protocolVersion is the version the issuer's client asks for.
const protocolVersion = "2025-06-18"

// tooLarge is an answer past the policy's MaxAnswer.
type tooLarge struct{ limit int64 }

func (e *tooLarge) Error() string { return fmt.Sprintf("an answer of more than %d bytes", e.limit) }

// read runs the initialize handshake and every tools/list page on a
// streamable HTTP endpoint, keeping each page's result bytes exactly as
// received. Redirects are followed, and the endpoint that finally answered
// is what the receipt names as its subject: an honest issuer says which
// server it read, and a host expecting another one refuses the receipt.
//
// The walk stops where a binding's does (docs/continuity.md): a page without
// a nextCursor, an empty or repeated cursor, or the page cap. Deciding what
// that means is the core's job.
//
// An endpoint the policy refuses — by its URL, by the address it resolves
// to, or by a redirect — is Refused, with nothing read: the service signs
// nothing about a server it would not read.
func (f *Fetcher) Read(ctx context.Context, url string) (out Reading) {
	if err := f.Check(url); err != nil {
		return Reading{Endpoint: url, Refused: refusal(err)}
	}
	pageCap := f.policy.PageCap
	c := &mcpClient{hc: f.hc, url: url, limit: f.policy.MaxAnswer}
	defer func() { out.Received = c.received }()
	// fail is the reading of a failure at a step (page 0: the handshake).
	fail := func(err error, page int) Reading {
		if Refused(err) {
			return Reading{Endpoint: c.url, Refused: refusal(err)}
		}
		r := Reading{Endpoint: c.url, Failure: failureUnavailable, FailureAt: "handshake"}
		if page > 0 {
			r.FailureAt, r.FailurePage = "tools/list", page
		}
		var tl *tooLarge
		var op *net.OpError
		switch {
		case errors.As(err, &tl):
			return Reading{Endpoint: c.url, Failure: failureTooLarge, FailureDetail: strconv.FormatInt(tl.limit, 10)}
		case ctx.Err() != nil:
			r.Failure, r.Fault = failureTimeout, "timeout"
		case errors.As(err, &op) && op.Op == "dial":
			r.Fault = "connect_refused"
		case errors.Is(err, errNoAnswer):
			r.Fault = "session_ended"
		default:
			// An HTTP error status, a protocol error, a result that is
			// not one: the server did not answer with a result.
			r.Fault = "session_failed"
		}
		// The detail names the class of the failure and where, never the
		// error's text: a dial error names the address a name resolved
		// to, which a stranger must not learn of the issuer's network (F12).
		r.FailureDetail = r.Fault + " at " + r.FailureAt
		if r.FailurePage > 0 {
			r.FailureDetail += " page " + strconv.Itoa(r.FailurePage)
		}
		return r
	}
	init, err := c.call(ctx, "initialize", map[string]any{
		"protocolVersion": protocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "crawlcheck-issuer", "version": "1.0.0"},
	})
	if err != nil {
		return fail(fmt.Errorf("initialize: %w", err), 0)
	}
	var hs struct {
		ProtocolVersion string          `json:"protocolVersion"`
		ServerInfo      json.RawMessage `json:"serverInfo"`
	}
	if err := json.Unmarshal(init, &hs); err != nil {
		return fail(fmt.Errorf("initialize: result: %w", err), 0)
	}
	c.version = hs.ProtocolVersion
	if err := c.notify(ctx, "notifications/initialized"); err != nil {
		return fail(fmt.Errorf("notifications/initialized: %w", err), 0)
	}
	r := Reading{Endpoint: c.url, ProtocolVersion: hs.ProtocolVersion, ServerInfo: hs.ServerInfo, HandshakeResult: init}
	seen := map[string]bool{}
	var cursor *string
	pagesBytes, kept := f.policy.PagesBytes, int64(0)
	for {
		if len(r.Pages) == pageCap {
			r.PageCapReached = true
			return r
		}
		params := map[string]any{}
		if cursor != nil {
			params["cursor"] = *cursor
		}
		// The pages together are bounded by the core's pages_bytes, counted
		// as they arrive: each answer may take only what the pages before
		// it left, so a reading never holds more than the cap (16 MiB a
		// page times 100 pages was 1.6 GiB; issue 37, F3).
		c.limit = min(f.policy.MaxAnswer, pagesBytes-kept)
		page, err := c.call(ctx, "tools/list", params)
		var rpcErr *rpcError
		var tl *tooLarge
		switch {
		case errors.As(err, &tl) && tl.limit < f.policy.MaxAnswer:
			return Reading{Endpoint: c.url, Failure: failureUnavailable, Fault: "pages_over_cap", FailureAt: "tools/list", FailurePage: len(r.Pages) + 1,
				FailureDetail: fmt.Sprintf("the pages so far are more than %d bytes, more than one check can carry", pagesBytes)}
		case errors.As(err, &rpcErr):
			// The frame itself is the page: the core calls it malformed.
			r.Pages = append(r.Pages, pageOf(rpcErr.frame))
			return r
		case err != nil:
			return fail(fmt.Errorf("tools/list page %d: %w", len(r.Pages)+1, err), len(r.Pages)+1)
		}
		r.Pages = append(r.Pages, pageOf(page))
		kept += int64(len(page))
		var next *string
		if m, ok := jsonframe.Members(page); ok && m["nextCursor"] != nil {
			json.Unmarshal(m["nextCursor"], &next)
		}
		if next == nil || *next == "" || seen[*next] {
			return r
		}
		seen[*next] = true
		cursor = next
	}
}

// mcpClient is the least of a streamable HTTP client: JSON-RPC requests by
// POST, answered as JSON or as an event stream, with the session id the
// server hands out.
type mcpClient struct {
	hc      *http.Client
	url     string
	session string
	version string
	nextID  int
	limit   int64
	// received counts the answers' bytes read.
	received int64
}

// counted counts the bytes read through it into *n.
type counted struct {
	r io.Reader
	n *int64
}

func (c counted) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

type rpcError struct{ frame []byte }

func (e *rpcError) Error() string { return "JSON-RPC error: " + string(e.frame) }

func (c *mcpClient) post(ctx context.Context, msg map[string]any) (*http.Response, error) {
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	if c.version != "" {
		req.Header.Set("MCP-Protocol-Version", c.version)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	c.url = resp.Request.URL.String()
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		c.session = s
	}
	if resp.StatusCode/100 != 2 {
		resp.Body.Close()
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	return resp, nil
}

func (c *mcpClient) notify(ctx context.Context, method string) error {
	resp, err := c.post(ctx, map[string]any{"jsonrpc": "2.0", "method": method})
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// call sends a request and returns the raw bytes of its result member.
func (c *mcpClient) call(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	c.nextID++
	id := c.nextID
	resp, err := c.post(ctx, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var result json.RawMessage
	var rpcErr error
	// A frame is split into its members, not decoded: the result is
	// passed on as received (the core judges a page), and decoding a
	// frame of up to 16 MiB twice (validate, then copy out the result)
	// was most of what a reading cost besides the transfer (issue 37, F3).
	match := func(f []byte) bool {
		m, ok := jsonframe.Members(f)
		if !ok || string(m["id"]) != strconv.Itoa(id) {
			return false
		}
		if result = m["result"]; result == nil {
			rpcErr = &rpcError{frame: f}
		}
		return true
	}
	found := false
	body := counted{resp.Body, &c.received}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		found, err = events(body, c.limit, match)
	} else {
		var b []byte
		if b, err = io.ReadAll(io.LimitReader(body, c.limit+1)); err == nil {
			if int64(len(b)) > c.limit {
				return nil, &tooLarge{c.limit}
			}
			found = match(b)
		}
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: %w", errNoAnswer, err)
	case !found:
		return nil, fmt.Errorf("%w to request %d", errNoAnswer, id)
	}
	return result, rpcErr
}

// errNoAnswer is an answer's body that ended, or broke, before the answer:
// the fault session_ended.
var errNoAnswer = errors.New("no answer")

// events reads server-sent events until match takes one (data lines joined
// with "\n", as the event-stream format says); the stream may stay open
// after the answer, so reading stops there.
func events(r io.Reader, limit int64, match func([]byte) bool) (bool, error) {
	sc := bufio.NewScanner(io.LimitReader(r, limit+1))
	sc.Buffer(make([]byte, 64<<10), int(limit))
	read := int64(0)
	var cur []byte
	have := false
	for sc.Scan() {
		line := sc.Bytes()
		if read += int64(len(line)) + 1; read > limit {
			return false, &tooLarge{limit}
		}
		switch {
		case len(line) == 0:
			if have && match(cur) {
				return true, nil
			}
			cur, have = nil, false
		case bytes.HasPrefix(line, []byte("data:")):
			d := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if have {
				cur = append(cur, '\n')
			}
			cur, have = append(cur, d...), true
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return false, &tooLarge{limit}
		}
		return false, err
	}
	return have && match(cur), nil
}

// pageOf is a page in the form the core's pages take: its text when it is
// valid UTF-8, else {"base64": ...}. As a Go string, encoding/json would
// replace each invalid byte with U+FFFD: the core would judge another page
// than the server sent.
func pageOf(b []byte) any {
	if utf8.Valid(b) {
		return string(b)
	}
	return map[string]string{"base64": base64.StdEncoding.EncodeToString(b)}
}
