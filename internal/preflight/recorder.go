package preflight

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
)

// A call is one JSON-RPC request the client sent, and the frame that
// answered it.
type call struct {
	method  string
	answer  []byte // the whole incoming frame, verbatim; nil until answered
	matched bool   // answer named this call's id (the SDK can route it too)
	valid   bool   // answer is valid JSON (it was decoded to route it)
}

// recorder keeps, for one session, every call the client sent and the exact
// frame that answered it. Frames are matched by JSON-RPC id; a frame that is
// not JSON cannot name its id, so it is given to the call it was sent in
// reply to (HTTP knows: it is the body of that call's POST) or, on stdio, to
// the newest unanswered tools/list call.
type recorder struct {
	mu          sync.Mutex
	calls       []*call
	byID        map[string]*call
	listChanged int
	wake        chan struct{}   // closed and replaced on every change
	maxFrame    atomic.Int64    // the largest frame received; 0: DefaultMaxAnswerBytes
	oversize    string          // the limit a frame went past (decimal bytes), "" if none did
	clientCaps  json.RawMessage // params.capabilities of the newest initialize sent, verbatim
	fault       string          // the first fault the transport saw (Fault* constants), "" if none
	stray       int             // stdio lines skipped as no JSON-RPC message (lineTap.stray)
	exitStatus  *int            // the stdio child's exit status, once reaped (childStdin.Close)
	stderrTail  *tailBuffer     // the end of the stdio child's stderr, nil over HTTP
	// resourceMetadata: with an auth fault, the URL its WWW-Authenticate named
	resourceMetadata string
}

// exited records the stdio child's exit status once it has been reaped.
func (r *recorder) exited(status int) {
	r.mu.Lock()
	r.exitStatus = &status
	r.mu.Unlock()
}

// exit returns the child's exit status (nil if not known) and the end of
// its stderr.
func (r *recorder) exit() (*int, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tail := ""
	if r.stderrTail != nil {
		tail = r.stderrTail.String()
	}
	return r.exitStatus, tail
}

// stderrTailBytes is how much of a stdio child's stderr is kept: its end,
// for the record of a process that exited before answering (the core
// quotes its last lines, bounded).
const stderrTailBytes = 4096

// tailBuffer keeps the last stderrTailBytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - stderrTailBytes; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// strayLine counts a stdio line that was no JSON-RPC message.
func (r *recorder) strayLine() {
	r.mu.Lock()
	r.stray++
	r.mu.Unlock()
}

// strayLines returns how many stdio lines were skipped so far.
func (r *recorder) strayLines() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stray
}

// limit is the largest frame the transport takes from the server.
func (r *recorder) limit() int64 {
	if n := r.maxFrame.Load(); n > 0 {
		return n
	}
	return DefaultMaxAnswerBytes
}

// tooLarge records that a frame went past the limit: the stream is cut
// there, and the call waiting for it fails with this reason.
func (r *recorder) tooLarge() error {
	err := fmt.Errorf("the server sent an answer of more than %d bytes: not read further", r.limit())
	r.mu.Lock()
	if r.oversize == "" {
		r.oversize = strconv.FormatInt(r.limit(), 10)
	}
	r.notifyLocked()
	r.mu.Unlock()
	return err
}

// cutOff returns the limit a frame went past (FailureTooLarge's detail),
// "" if none did.
func (r *recorder) cutOff() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.oversize
}

// transportFault records what the transport itself saw go wrong (the
// command could not start, the child closed its stdout, a connection was
// refused): the fact a failure is classified by, never the SDK's error
// text. The first one is kept.
func (r *recorder) transportFault(code string) {
	r.mu.Lock()
	if r.fault == "" {
		r.fault = code
	}
	r.notifyLocked()
	r.mu.Unlock()
}

// authFault records an HTTP 401 or 403 (FaultUnauthorized,
// FaultForbidden) and the resource metadata URL its WWW-Authenticate named.
func (r *recorder) authFault(code, resourceMetadata string) {
	r.mu.Lock()
	if r.fault == "" {
		r.fault, r.resourceMetadata = code, resourceMetadata
	}
	r.notifyLocked()
	r.mu.Unlock()
}

// metadataOf is the resource metadata URL of an auth fault recorded as
// failure, "" for any other.
func (r *recorder) metadataOf(failure string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if failure != r.fault {
		return ""
	}
	return r.resourceMetadata
}

// faultSeen returns the first fault the transport saw, "" if none.
func (r *recorder) faultSeen() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fault
}

func newRecorder() *recorder {
	return &recorder{byID: map[string]*call{}, wake: make(chan struct{})}
}

// changed returns a channel closed at the recorder's next change.
func (r *recorder) changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.wake
}

// notifyLocked wakes the waiters of changed.
func (r *recorder) notifyLocked() {
	close(r.wake)
	r.wake = make(chan struct{})
}

// envelope is just enough of a JSON-RPC message to route it.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
}

// sent records an outgoing frame. It returns the call when the frame is a
// single request (not a batch, not a notification).
func (r *recorder) sent(frame []byte) *call {
	var batch []json.RawMessage
	if json.Unmarshal(frame, &batch) == nil {
		for _, m := range batch {
			r.sent(m)
		}
		return nil
	}
	var env envelope
	if json.Unmarshal(frame, &env) != nil || env.Method == nil || !hasID(env.ID) {
		return nil
	}
	c := &call{method: *env.Method}
	caps := declaredCapabilities(c.method, frame)
	r.mu.Lock()
	defer r.mu.Unlock()
	if caps != nil {
		r.clientCaps = caps
	}
	r.calls = append(r.calls, c)
	r.byID[idKey(env.ID)] = c
	r.notifyLocked()
	return c
}

// received records an incoming frame; to is the call it answers when the
// transport knows it (HTTP), else nil. It returns the id of a call the
// frame answers by that id (nil for anything else), and that call.
func (r *recorder) received(frame []byte, to *call) (json.RawMessage, *call) {
	frame = bytes.Clone(frame)
	// Only a frame that starts with '[' can be a batch: trying any other
	// as one validated the whole frame (a 1 MB page) only to fail.
	var batch []json.RawMessage
	if t := bytes.TrimLeft(frame, " \t\r\n"); len(t) > 0 && t[0] == '[' && json.Unmarshal(frame, &batch) == nil {
		for _, m := range batch {
			r.received(m, nil)
		}
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var env envelope
	parsed := json.Unmarshal(frame, &env) == nil
	if parsed && env.Method != nil {
		// A notification or a server-to-client request.
		if *env.Method == "notifications/tools/list_changed" {
			r.listChanged++
			r.notifyLocked()
		}
		return nil, nil
	}
	matched := false
	if c, ok := r.byID[idKey(env.ID)]; parsed && hasID(env.ID) && ok {
		to, matched = c, true
	}
	if to == nil {
		// Not JSON, no id, or an id no call has: not routable by id.
		to = r.pendingLocked()
	}
	if to != nil && to.answer == nil {
		to.answer, to.matched, to.valid = frame, matched, parsed
		r.notifyLocked()
	}
	if !matched {
		return nil, nil
	}
	return env.ID, to
}

// pendingLocked is the call an unattributable frame most likely answers: the
// newest unanswered tools/list, else the newest unanswered call.
func (r *recorder) pendingLocked() *call {
	var newest *call
	for i := len(r.calls) - 1; i >= 0; i-- {
		c := r.calls[i]
		if c.answer != nil {
			continue
		}
		if c.method == "tools/list" {
			return c
		}
		if newest == nil {
			newest = c
		}
	}
	return newest
}

// nth returns the n-th call (from 0) of method, or nil, with its answer,
// whether the answer named the call's id and whether it is valid JSON.
func (r *recorder) nth(method string, n int) (c *call, answer []byte, matched, valid bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.calls {
		if c.method != method {
			continue
		}
		if n == 0 {
			return c, c.answer, c.matched, c.valid
		}
		n--
	}
	return nil, nil, false, false
}

// count returns how many calls of method were sent.
func (r *recorder) count(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		if c.method == method {
			n++
		}
	}
	return n
}

// metaClientCapabilities is the _meta member a request of protocol
// 2026-07-28 on declares the client's capabilities in (there is no
// initialize to declare them once).
const metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"

// declaredCapabilities returns the client capabilities a request declares,
// verbatim: initialize's params.capabilities, or the params._meta member of
// a 2026-07-28 request; nil when it declares none.
func declaredCapabilities(method string, frame []byte) json.RawMessage {
	var req struct {
		Params struct {
			Capabilities json.RawMessage            `json:"capabilities"`
			Meta         map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(frame, &req) != nil {
		return nil
	}
	if c := req.Params.Meta[metaClientCapabilities]; c != nil {
		return c
	}
	if method == "initialize" {
		return req.Params.Capabilities
	}
	return nil
}

// clientCapabilities returns the capabilities the newest request that
// declared any declared, as sent; nil when none did.
func (r *recorder) clientCapabilities() json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.clientCaps
}

// handshake returns the method and answer of the newest initialize or
// server/discover call answered with a result.
func (r *recorder) handshake() (method string, result json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.calls) - 1; i >= 0; i-- {
		c := r.calls[i]
		if c.method != "initialize" && c.method != "server/discover" || c.answer == nil {
			continue
		}
		var resp struct {
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(c.answer, &resp) == nil && resp.Result != nil {
			return c.method, resp.Result
		}
	}
	return "", nil
}

func (r *recorder) listChangedCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.listChanged
}

// hasID reports whether a message's id member is present and not null.
func hasID(id json.RawMessage) bool {
	return len(id) > 0 && !bytes.Equal(id, []byte("null"))
}

// idKey is the id's compact JSON text: 7 and "7" are different ids.
func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}
