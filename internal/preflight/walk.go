package preflight

import (
	"encoding/json"
	"errors"

	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/coreops"
)

// WalkStep is the core's next_page answer: the cursor to follow next (nil:
// the walk ends, Stop says why), the cursors followed so far, and whether
// it ended at the page cap. The features' lists (prompts, resources,
// templates) are walked by next_page; the tool list by the session engine
// (Walk).
type WalkStep = walkStep

// PageOf returns the page a captured tools/list answer frame carries: its
// result member's bytes when the frame is an object with exactly one
// "result" member, else the whole frame (which the core calls malformed).
func PageOf(frame []byte) []byte {
	return pageOf(frame, false)
}

// MembersOfValid returns the members of a JSON object known to be valid
// JSON (json.Valid), as verbatim bytes aliasing obj, in one pass with no
// decoding of the values; a member named twice is an error. The gateway
// (crawlcheck run) reads every frame's envelope with it.
func MembersOfValid(obj []byte) (map[string]json.RawMessage, error) {
	return membersOfValid(obj)
}

// Fault is a transport fault as a host saw it, for the session engine's
// handshake and page events: its code (Fault*, FailureTooLarge, a capture
// failure) and the facts only the host can know. Where it happened and
// which of the facts the record carries are the engine's.
type Fault struct {
	Failure string
	// Detail is FailureTooLarge's limit; "" with a fault.
	Detail           string
	ResourceMetadata string
	Command          string
	ExitStatus       *int
	StderrTail       string
}

// event is the fault as an event's fault member (a status below 0, a
// signal's, is no exit status).
func (f *Fault) event() faultEvent {
	status := f.ExitStatus
	if status != nil && *status < 0 {
		status = nil
	}
	return faultEvent{f.Failure, f.Detail, f.ResourceMetadata, f.Command, status, f.StderrTail}
}

type faultEvent struct {
	Failure          string `json:"failure"`
	Detail           string `json:"failure_detail,omitempty"`
	ResourceMetadata string `json:"resource_metadata,omitempty"`
	Command          string `json:"failure_command,omitempty"`
	ExitStatus       *int   `json:"exit_status,omitempty"`
	StderrTail       string `json:"stderr_tail,omitempty"`
}

// Walk executes the session engine's observation (docs/abi.md, The
// session engine: the handshake and page events): the host reads what
// the engine asks for and hands it the answers as they arrived, and the
// engine decides which cursor comes next, when the walk ends and why, and
// the observation's facts. The pages and the handshake's result stay here,
// in the host's buffer; the engine's state, which travels whole at every
// step, holds none of them. A walk needs none of a session's other state,
// so it runs in a state of its own: what leaves it is the observation.
type Walk struct {
	state  string
	result json.RawMessage
	pages  [][]byte
	cursor *string // the page to read next; nil once the walk ended
	end    *walkAction
}

// walkAction is the engine's answer to a handshake or page event.
type walkAction struct {
	Action   string  `json:"action"`
	Cursor   *string `json:"cursor"`
	Observed struct {
		Handshake        string `json:"handshake"`
		ProtocolVersion  string `json:"protocol_version"`
		PageCapReached   bool   `json:"page_cap_reached"`
		Failure          string `json:"failure"`
		FailureDetail    string `json:"failure_detail"`
		FailureAt        string `json:"failure_at"`
		FailurePage      int    `json:"failure_page"`
		ResourceMetadata string `json:"resource_metadata"`
		Command          string `json:"failure_command"`
		ExitStatus       *int   `json:"exit_status"`
		StderrTail       string `json:"stderr_tail"`
	} `json:"observed"`
	Pages           *int    `json:"pages"`
	HandshakeResult bool    `json:"handshake_result"`
	Stop            *string `json:"stop"`
}

// BeginWalk begins an observation with the handshake as the transport saw
// it: method ("initialize", "server/discover", "" none answered) and its
// result's bytes, the protocol version the MCP SDK settled on ("" when it
// keeps none), the page cap (0: the core's default), and the fault that
// ended the handshake, if any.
func BeginWalk(method string, result json.RawMessage, negotiated string, pageCap int, fault *Fault) (*Walk, error) {
	w := &Walk{}
	ev := map[string]any{"type": "handshake"}
	if method != "" {
		ev["handshake"] = method
		if result != nil {
			ev["result"] = corecall.Page(result)
			w.result = result
		}
	}
	if negotiated != "" {
		ev["negotiated"] = negotiated
	}
	if pageCap > 0 {
		ev["page_cap"] = pageCap
	}
	if fault != nil {
		ev["fault"] = fault.event()
	}
	return w, w.step(ev)
}

// Next is the cursor of the page to read next ("" for none: the first
// page), and false once the walk has ended.
func (w *Walk) Next() (cursor string, more bool) {
	if w.cursor == nil {
		return "", false
	}
	return *w.cursor, true
}

// Page hands the engine a tools/list answer's page as it arrived. A page
// the core cannot take in one request ends the walk as pages_over_cap (no
// check could carry it).
func (w *Walk) Page(page []byte) error {
	w.pages = append(w.pages, page)
	err := w.step(map[string]any{"type": "page", "page": corecall.Page(page)})
	var ce *corecall.Error
	if errors.As(err, &ce) && ce.Code == "input_too_large" {
		return w.step(map[string]any{"type": "page", "oversized": true})
	}
	return err
}

// Fail hands the engine the fault that kept the next page from arriving.
func (w *Walk) Fail(f Fault) error {
	return w.step(map[string]any{"type": "page", "fault": f.event()})
}

func (w *Walk) step(ev map[string]any) error {
	req := coreops.SessionStepRequest{Event: ev}
	if w.state != "" {
		req.State = corecall.Text(w.state)
	}
	var out struct {
		State   string       `json:"state"`
		Actions []walkAction `json:"actions"`
	}
	if err := req.Decode(&out); err != nil {
		return err
	}
	if len(out.Actions) != 1 {
		return errors.New("preflight: the session engine answered a walk's event with no single action")
	}
	w.state = out.State
	switch a := out.Actions[0]; a.Action {
	case "read_page":
		w.cursor = new(string)
		if a.Cursor != nil {
			*w.cursor = *a.Cursor
		}
	case "observed":
		w.cursor, w.end = nil, &a
	default:
		return errors.New("preflight: the session engine answered a walk's event with " + a.Action)
	}
	return nil
}

// Observe writes the ended walk's observation into obs: the engine's facts,
// the handshake's result and the pages it kept. The host's own facts (the
// endpoint, the capabilities it declared, stray lines, a timeout's
// deadline) are obs's already.
func (w *Walk) Observe(obs *Observation) {
	e := w.end
	if e == nil {
		return
	}
	o := e.Observed
	obs.Handshake, obs.ProtocolVersion, obs.PageCapReached = o.Handshake, o.ProtocolVersion, o.PageCapReached
	obs.Failure, obs.FailureDetail, obs.FailureAt, obs.FailurePage = o.Failure, o.FailureDetail, o.FailureAt, o.FailurePage
	obs.ResourceMetadata, obs.Command, obs.ExitStatus, obs.StderrTail = o.ResourceMetadata, o.Command, o.ExitStatus, o.StderrTail
	obs.HandshakeResult, obs.Pages, obs.Stop = nil, nil, ""
	if e.HandshakeResult {
		obs.HandshakeResult = w.result
	}
	if e.Pages != nil {
		obs.Pages = w.pages[:min(*e.Pages, len(w.pages))]
	}
	if e.Stop != nil {
		obs.Stop = *e.Stop
	}
}
