package preflight

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/coreops"
	"github.com/crawlcheck/verifier/internal/jsonframe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Failure classes: why an Observation holds no complete tool list. A
// record carries one of the first two; an Observation holds a fault below,
// a capture failure (FaultListCached, FaultNotCaptured) or FailureTooLarge,
// which the core words into them.
const (
	// FailureUnavailable: the server could not be reached, or the session
	// broke before the list was read (a record's class).
	FailureUnavailable = "server_unavailable"
	// FailureTimeout: the check did not finish (a record's class).
	FailureTimeout = "check_timeout"
	// FailureTooLarge: the server sent a frame longer than
	// Options.MaxAnswerBytes; it was cut off unread and the session broken
	// there. FailureDetail is the limit in bytes (decimal): the core words
	// the record's detail from it (server_unavailable), so every host
	// records the same bytes.
	FailureTooLarge = "answer_too_large"
)

// Host faults: what went wrong at the transport, as codes the core words
// (docs/continuity.md, "Host faults"), so that a down server or a timeout
// gives the same record bytes in every language. An Observation with one
// says where (FailureAt, FailurePage) and nothing in FailureDetail: the
// SDK's error text never reaches a record.
const (
	FaultConnectRefused = "connect_refused" // the connection was refused or not made, or the command did not start
	// FaultCommandNotFound: no program of the stdio command's name exists
	// (Observation.Command names it, as given).
	FaultCommandNotFound = "command_not_found"
	FaultTimeout         = "timeout"        // the context's deadline passed first
	FaultCancelled       = "cancelled"      // the context was cancelled first
	FaultProcessExited   = "process_exited" // the stdio server closed its stdout (exited) before answering
	FaultSessionEnded    = "session_ended"  // the connection closed before the answer
	FaultSessionFailed   = "session_failed" // the SDK failed the request for a reason of its own
	FaultPagesOverCap    = "pages_over_cap" // the pages together are more than one check carries
	FaultUnauthorized    = "unauthorized"   // the server answered HTTP 401 (Observation.ResourceMetadata)
	FaultForbidden       = "forbidden"      // the server answered HTTP 403 (Observation.ResourceMetadata)
)

// Capture failures: the SDK produced a tools/list answer this package did
// not see on the wire, so nothing was observed. Codes the core words
// (behind capture_failed), with no FailureAt: they say nothing of where.
const (
	// FaultListCached: answered without a request on the wire, e.g. from
	// the SDK's SEP-2549 list cache after an earlier listing on the same
	// session.
	FaultListCached = "list_cached"
	// FaultNotCaptured: the SDK accepted an answer the capture did not see.
	FaultNotCaptured = "answer_not_captured"
)

// Where a fault happened (Observation.FailureAt).
const (
	AtHandshake = "handshake"  // connecting, and initialize or server/discover
	AtToolsList = "tools/list" // reading page FailurePage
)

// Why a walk of tools/list pages ended (Observation.Stop), as the core's
// next_page op answers: no rule of when to stop lives here.
const (
	StopListEnd   = "list_end"           // the last page had no nextCursor
	StopPageCap   = "page_cap_reached"   // the page cap was reached
	StopRepeated  = "cursor_repeated"    // the cursor was already followed
	StopMalformed = "response_malformed" // a page the check will refuse (an empty or non-string cursor included)
)

// DefaultPageCap is the most tools/list pages Observe reads by default
// (the core's).
const DefaultPageCap = core.DefaultPageCap

// Bounds on what is read of a server, so that a server cannot make a check
// hold unbounded memory, or a request the core refuses (which would leave
// no record): each answer is read up to Options.MaxAnswerBytes, the pages
// together up to MaxListBytes, and at most MaxPages of them.
const (
	// DefaultMaxAnswerBytes bounds one frame the server sends when
	// Options.MaxAnswerBytes is zero (the core's limits.answer_bytes).
	DefaultMaxAnswerBytes = core.DefaultAnswerBytes
	// MaxListBytes bounds the pages of one list together, counted as they
	// arrive (the core's limits.pages_bytes): the core takes no larger
	// request.
	MaxListBytes = core.MaxPagesBytes
	// MaxPages is the most pages the core compares in one check; a larger
	// PageCap is lowered to it.
	MaxPages = core.MaxPages
)

// Observation is what a preflight saw: the facts the core decides on. It
// holds no verdict and no hash.
type Observation struct {
	// Endpoint names the server that answered (Transport.Endpoint).
	Endpoint string
	// Handshake is "initialize" or "server/discover": the newest handshake
	// answered with a result; "" if none was.
	Handshake string
	// ProtocolVersion is the version the session uses.
	ProtocolVersion string
	// HandshakeResult and ServerInfo are the verbatim bytes of the handshake
	// result and of its serverInfo (for server/discover, the
	// io.modelcontextprotocol/serverInfo member of its _meta); nil if absent.
	HandshakeResult json.RawMessage
	ServerInfo      json.RawMessage
	// ClientCapabilities are the capabilities the client declared in its
	// initialize, as sent (a lockfile made by `crawlcheck lock` pins them);
	// nil if it sent none.
	ClientCapabilities json.RawMessage
	// Pages holds each tools/list answer in order, as received: the bytes
	// of the response's result member, or the whole frame when the frame has
	// no single result member (an error response, a frame that is not JSON).
	// A page need not be valid JSON.
	Pages [][]byte
	// Stop is why the walk ended (Stop* constants, the core's next_page
	// answer); "" when a failure ended it. PageCapReached is the core's
	// fact that it ended at the page cap, handed on to the check.
	Stop           string
	PageCapReached bool
	// Failure is "", a Fault* constant or FailureTooLarge; FailureDetail is
	// FailureTooLarge's limit, and "" with a fault. FailureAt and
	// FailurePage say where a fault happened (not a capture failure's).
	// Pages read before a failure are kept.
	Failure       string
	FailureDetail string
	FailureAt     string
	FailurePage   int
	// Command is the program a FaultCommandNotFound could not find.
	Command string
	// ExitStatus and StderrTail are what a FaultProcessExited in the
	// handshake knows of the process: the status it exited with (nil when
	// not known: killed by a signal, or not yet reaped) and the end of its
	// stderr (at most stderrTailBytes), which the core words on the record,
	// bounded and escaped. At tools/list neither is given: whether the
	// process has been reaped by then is a race, and every host records
	// the same bytes.
	ExitStatus *int
	StderrTail string
	// StrayLines counts the lines of a stdio server's stdout that were no
	// JSON-RPC message (a banner, a log line: docs/mcpserver.md, Stray
	// lines), skipped as the official SDK clients skip them; the core puts
	// the number on the record (observed.stray_lines). 0 over HTTP.
	StrayLines int
	// ResourceMetadata is, with FaultUnauthorized and FaultForbidden, the
	// protected resource metadata URL the server's WWW-Authenticate named
	// (RFC 9728), as it named it; "" when it named none. The core shows it
	// escaped in the record's detail, beside what to do.
	ResourceMetadata string
	// Launched is the observed.launched member: the package a stdio
	// command line launches, as the host resolved it from what npm
	// installed (internal/launched), or why none; nil when the host did not
	// look (an HTTP server, a host that does not resolve). The core pins it
	// (make_lock) and compares it against a lockfile's pin.
	Launched json.RawMessage
	// Timeout is the check's deadline, named in a FaultTimeout's record;
	// 0 when not known (Connect and Observe take it from their context, a
	// Session from Config.Timeout).
	Timeout time.Duration
	// Features are the prompts, resources, resource templates and UI
	// templates read after a whole tool list (Options.Features); nil when
	// none were read.
	Features *ObservedFeatures
}

// Options tunes Observe.
type Options struct {
	// PageCap bounds the pages read; 0 means DefaultPageCap, and more than
	// MaxPages means MaxPages.
	PageCap int
	// MaxAnswerBytes bounds each frame read from the server; 0 means
	// DefaultMaxAnswerBytes. A longer answer is cut off: the session is
	// broken there and the Observation says so (server_unavailable).
	MaxAnswerBytes int64
	// CheckOnly says the session is closed after the check and nothing
	// lists tools through it: over stdio the SDK then reads each answer to
	// its tools/list calls with an empty list (Transport.listSwap), as the
	// check reads the captured bytes and never the SDK's parse of them.
	// The SDK's decoding and validation of a 1,000-tool page was a third of
	// crawlcheck lock --server's CPU (docs/benchmarks.md). Over HTTP it
	// changes nothing.
	CheckOnly bool
	// Features reads, after a whole tool list, the prompts, resources and
	// resource templates the server's capabilities declare and the ui://
	// templates its tools name (features.go), for a lockfile to pin and a
	// check to compare.
	Features bool
	// subscribed, when set, is called by Connect between the handshake and
	// the first listing (Session: awaitSubscription).
	subscribed func(context.Context, *mcp.ClientSession)
}

// Connect connects client to the server over t and observes its tool list.
// On failure the session is nil and the Observation says why, with the
// handshake facts captured so far.
func Connect(ctx context.Context, client *mcp.Client, t *Transport, sopts *mcp.ClientSessionOptions, opts *Options) (*mcp.ClientSession, Observation) {
	if opts != nil && opts.MaxAnswerBytes > 0 {
		t.rec.maxFrame.Store(opts.MaxAnswerBytes)
	}
	t.checkOnly = opts != nil && opts.CheckOnly
	cs, err := client.Connect(ctx, t, sopts)
	if err != nil {
		f := Fault{}
		f.Failure, f.Detail = t.classify(ctx, err)
		f.ResourceMetadata = t.rec.metadataOf(f.Failure)
		switch f.Failure {
		case FaultCommandNotFound:
			f.Command = t.command()
		case FaultProcessExited:
			f.ExitStatus, f.StderrTail = t.rec.exit()
		}
		obs := t.hostFacts()
		method, result := t.rec.handshake()
		if w, err := BeginWalk(method, result, "", 0, &f); err == nil {
			w.Observe(&obs)
		} else {
			obs.Failure, obs.FailureDetail = engineRefused(err)
		}
		return nil, obs
	}
	if opts != nil && opts.subscribed != nil {
		opts.subscribed(ctx, cs)
	}
	return cs, Observe(ctx, cs, t, opts)
}

// Observe reads every tools/list page of a session connected over t,
// following nextCursor until the list ends, the page cap is reached, or a
// cursor is repeated, empty or not a string. Call it before anything else on
// the session lists tools: a later listing may be answered from the SDK's
// cache (FaultListCached).
func Observe(ctx context.Context, cs *mcp.ClientSession, t *Transport, opts *Options) (obs Observation) {
	obs = t.hostFacts()
	defer func() { obs.StrayLines = t.rec.strayLines() }()
	pageCap := 0 // the core's default
	if opts != nil && opts.PageCap > 0 {
		pageCap = opts.PageCap
	}
	if opts != nil && opts.MaxAnswerBytes > 0 {
		t.rec.maxFrame.Store(opts.MaxAnswerBytes)
	}
	negotiated := ""
	if cs != nil && cs.InitializeResult() != nil {
		negotiated = cs.InitializeResult().ProtocolVersion
	}
	method, result := t.rec.handshake()
	w, err := BeginWalk(method, result, negotiated, pageCap, nil)
	for err == nil {
		cursor, more := w.Next()
		if !more {
			break
		}
		page, failure, detail := t.fetchPage(ctx, cs, cursor)
		if failure != "" {
			err = w.Fail(Fault{Failure: failure, Detail: detail, ResourceMetadata: t.rec.metadataOf(failure)})
		} else {
			err = w.Page(page)
		}
	}
	if err != nil {
		obs.Failure, obs.FailureDetail = engineRefused(err)
		return obs
	}
	w.Observe(&obs)
	if opts != nil && opts.Features && obs.Stop == StopListEnd {
		obs.Features = t.observeFeatures(ctx, cs, obs.Pages, min(pageCap, MaxPages))
	}
	return obs
}

// walkStep is the core's next_page answer.
type walkStep struct {
	Cursor         *string  `json:"cursor"`
	Stop           string   `json:"stop"`
	Followed       []string `json:"followed"`
	PageCapReached bool     `json:"page_cap_reached"`
}

// nextPage asks the core whether to read another page, and with which
// cursor; pageCap 0 is the core's default.
func nextPage(page []byte, followed []string, pageCap int) (walkStep, error) {
	req := coreops.NextPageRequest{Page: corecall.Page(page), Followed: followed}
	if pageCap > 0 {
		req.PageCap = new(int64(pageCap))
	}
	var step walkStep
	return step, req.Decode(&step)
}

// fetchPage sends one tools/list through the SDK and returns the answer
// captured on the wire. An answer that names the call's id is left for the
// SDK to finish, so the session goes on as it would without the check. An
// answer the SDK cannot route (not JSON, no id, a wrong id) may leave it
// waiting for more bytes forever, so that call is abandoned at once.
func (t *Transport) fetchPage(ctx context.Context, cs *mcp.ClientSession, cursor string) (page []byte, failure, detail string) {
	mark := t.rec.count("tools/list")
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := cs.ListTools(callCtx, &mcp.ListToolsParams{Cursor: cursor})
		done <- err
	}()
	var (
		sdkErr  error
		sdkDone bool
	)
	for {
		wake := t.rec.changed()
		c, answer, matched, valid := t.rec.nth("tools/list", mark)
		if answer != nil {
			if !matched {
				cancel()
			}
			if !sdkDone {
				<-done // bounded by ctx
			}
			return pageOf(answer, valid), "", ""
		}
		if sdkDone {
			switch {
			case t.rec.cutOff() != "" || ctx.Err() != nil || sdkErr != nil:
				f, d := t.classify(ctx, sdkErr)
				return nil, f, d
			case c == nil:
				return nil, FaultListCached, ""
			default:
				return nil, FaultNotCaptured, ""
			}
		}
		select {
		case sdkErr = <-done:
			sdkDone = true
		case <-wake:
		}
	}
}

// classify names the fault that failed a request, from what the context
// and the transport saw; err, the SDK's, decides only whether the
// connection closed, and its text goes nowhere. An answer cut off at the
// limit is FailureTooLarge, its detail the limit.
func (t *Transport) classify(ctx context.Context, err error) (failure, detail string) {
	switch {
	case t.rec.cutOff() != "":
		return FailureTooLarge, t.rec.cutOff()
	case errors.Is(ctx.Err(), context.Canceled):
		return FaultCancelled, ""
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return FaultTimeout, ""
	case t.rec.faultSeen() != "":
		return t.rec.faultSeen(), ""
	case errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return FaultSessionEnded, ""
	}
	return FaultSessionFailed, ""
}

// pageOf returns the page a tools/list answer carries: its result member's
// bytes when the frame is an object with exactly one "result" member, else
// the whole frame (the core refuses it as malformed and says why).
func pageOf(frame []byte, valid bool) []byte {
	var fields map[string]json.RawMessage
	var err error
	if valid {
		fields, err = membersOfValid(frame)
	} else {
		fields, err = members(frame)
	}
	if err != nil {
		return frame
	}
	if r, ok := fields["result"]; ok {
		return r
	}
	return frame
}

// engineRefused is the observation's failure when the core refused an
// event of the walk it should take (a fault of this build, not of the
// server): no rule of a host stands in for the engine's, and the record
// says the list was not read, in the core's words.
func engineRefused(err error) (failure, detail string) {
	return FailureUnavailable, "the session engine refused the walk: " + err.Error()
}

// hostFacts are the observation's facts of the host's own: the endpoint,
// the capabilities the client declared, the stray lines so far.
func (t *Transport) hostFacts() Observation {
	return Observation{Endpoint: t.endpoint, StrayLines: t.rec.strayLines(), ClientCapabilities: t.rec.clientCapabilities()}
}

// membersOfValid is members for a document the recorder has already
// decoded, so known to be valid JSON: one pass that steps over each value
// (the answer is the same; a 1,000-tool page went through encoding/json's
// decoder twice more, 8% of crawlcheck check --server's CPU). A member name
// with an escape or a byte outside printable ASCII is decoded by
// encoding/json, as members decodes it. The values alias obj.
func membersOfValid(obj []byte) (map[string]json.RawMessage, error) {
	i := jsonframe.SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, errors.New("not a JSON object")
	}
	out := map[string]json.RawMessage{}
	if i = jsonframe.SkipSpace(obj, i+1); i < len(obj) && obj[i] == '}' {
		return out, nil
	}
	for i < len(obj) {
		end := jsonframe.SkipValidString(obj, i)
		key, err := keyText(obj[i:end])
		if err != nil {
			return nil, err
		}
		if i = jsonframe.SkipSpace(obj, jsonframe.SkipSpace(obj, end)+1); i >= len(obj) { // past the ':'
			return nil, errors.New("a member without a value")
		}
		vend := jsonframe.SkipValidValue(obj, i)
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		out[key] = json.RawMessage(obj[i:vend])
		if i = jsonframe.SkipSpace(obj, vend); i >= len(obj) || obj[i] != ',' {
			break
		}
		i = jsonframe.SkipSpace(obj, i+1)
	}
	return out, nil
}

func keyText(quoted []byte) (string, error) {
	if len(quoted) < 2 || quoted[0] != '"' {
		return "", errors.New("a member name that is not a string")
	}
	for _, c := range quoted[1 : len(quoted)-1] {
		if c < 0x20 || c > 0x7e || c == '\\' {
			var key string
			err := json.Unmarshal(quoted, &key)
			return key, err
		}
	}
	return string(quoted[1 : len(quoted)-1]), nil
}

// members returns the members of a JSON object as verbatim bytes. An object
// that repeats a key is refused, so that no caller picks one of two answers.
func members(obj []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		out[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the object")
	}
	return out, nil
}
