package preflight

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/coreops"
	"github.com/crawlcheck/verifier/internal/jsonframe"
)

// Engine is the Go executor of the core's session engine (session_step,
// docs/abi.md, The session engine): it keeps the session's state as the
// bytes the core answered, hands the core each event and reads back the
// actions. The rules between checks — a check again without an unreadable
// live key directory or as pages_over_cap, check_again as exactly one
// more check, the pace of re-checks after list_changed and the recheck it
// puts on a record, whether a call is allowed — are the core's; an Engine
// decides none of them. The zero value is a new session; it is safe for
// concurrent use (one event at a time).
type Engine struct {
	mu    sync.Mutex
	state []byte
	start time.Time // the zero of at_ms, the engine's monotonic clock
	// rec is the newest record the engine answered (append_record), the
	// one its state judges calls by.
	rec *Record
	// calls are the engine's answers to call events since its state last
	// changed, by what the call reaches (memoKey): an answer that left the
	// state byte for byte as it was is the answer to the same event again,
	// so a call of a tool, prompt or resource asked before costs a map
	// lookup, not a core call that reads the whole state (tens of µs at 10
	// tools, hundreds at 1,000: the gateway's per-call path). At most
	// maxCallMemo of them; past them, the core is asked every time.
	calls map[string]Step
}

// maxCallMemo bounds the names whose call answers an Engine keeps: a
// client calling names without end cannot grow the process with them.
// maxMemoKey bounds each name's bytes (a tool name, a prompt's name, a
// URI): a longer one, which a client may send up to the line cap, is
// judged by the core every time, so the memo holds at most about
// maxCallMemo × maxMemoKey bytes of keys (and the refusals that quote them).
const (
	maxCallMemo = 1024
	maxMemoKey  = 4096
)

// Step is what the engine answered one event: the actions, read.
type Step struct {
	// Record is the record of a check (append_record), with its Handoff
	// (hand), or for a call the record it was judged by; nil for another
	// event.
	Record *Record
	// Keep is the log checkpoint to keep from now on (keep_checkpoint).
	Keep string
	// CheckAgain: observe again and check once more (check_again).
	CheckAgain bool
	// Recheck: observe and check now (recheck), the rate limit having held
	// it back HeldBack.
	Recheck  bool
	HeldBack time.Duration
	// Wake, when not zero, is when to hand the engine Timer (wake).
	Wake time.Time
	// Allowed and Refusal answer a call: allowed, or refused in these
	// words (allow, refuse).
	Allowed bool
	Refusal string
	// RefusedList and RefusedKey name the item a refusal's words are of,
	// when they are an item's (a prompts/get, resources/read or
	// completion/complete the session proceeds for): "prompts",
	// "resources" or "resource_templates", and its name, uri or
	// uriTemplate; "" for the session's or a tool's refusal. The engine
	// picks the list with the words, so the error and advice follow it
	// (a completion's ref/resource may name a resource's uri).
	RefusedList, RefusedKey string
	// ConsistencyFrom and ConsistencyTo, when To is not zero, are the trees
	// between which the issuer's consistency proof is needed
	// (ask_consistency); KeptSize and ProofSize say which is the
	// checkpoint kept and which the proof's.
	ConsistencyFrom, ConsistencyTo, KeptSize, ProofSize uint64
	// Warn is a line to tell a person (warn).
	Warn string
	// AskIssuer: ask the issuer about the observation, and hand guard
	// Reading (the list's tools_sha256) with its answer (ask_issuer).
	AskIssuer bool
	Reading   string
	// PollFrom is the tree size a monitor's poll of the log asks the
	// consistency proof from (poll_log; 0 when no checkpoint is kept).
	PollFrom uint64
}

// Check hands the engine a check of r's observation, begun when the host
// had seen seen list_changed notifications: the engine marks the check as
// the refreshed one after a check_again, or with the notifications it
// covers (recheck), itself.
func (e *Engine) Check(r Request, seen int64) (Step, error) {
	req := checkRequest(r)
	ev := map[string]any{"type": "check", "check": req.Members(), "seen": seen}
	st, err := e.step(ev, !r.HandsNoTools)
	var ce *corecall.Error
	if errors.As(err, &ce) && ce.Code == "input_too_large" && len(r.Observation.Pages) > 0 {
		// The core took no op: the event with the pages was larger than
		// it takes. It goes again without them; the engine records the
		// pages_over_cap (the ABI's rule for an oversized check event).
		o := r.Observation
		o.Pages = nil
		observed := observedJSON(o)
		delete(observed, "pages")
		req.Observed = observed
		ev["check"], ev["oversized"] = req.Members(), len(r.Observation.Pages)
		st, err = e.step(ev, !r.HandsNoTools)
	}
	return st, err
}

// ListChanged hands the engine a notifications/tools/list_changed, the
// host having counted seen of them (this one included): one the engine has
// counted already is no news.
func (e *Engine) ListChanged(seen int64) (Step, error) {
	return e.step(map[string]any{"type": "list_changed", "at_ms": e.atMS(), "seen": seen}, false)
}

// Timer hands the engine the wake it asked for.
func (e *Engine) Timer() (Step, error) {
	return e.step(map[string]any{"type": "timer", "at_ms": e.atMS()}, false)
}

// Use asks the engine whether the framework may have the session's tools
// now (a listing, or before a call), the host having seen seen
// list_changed notifications: a re-check first (Recheck), then allowed, or
// refused in the session's words.
func (e *Engine) Use(seen int64) (Step, error) {
	return e.step(map[string]any{"type": "use", "seen": seen}, false)
}

// Unheld tells the engine the tools of the handoff the framework's type
// could not hold (not handed over); Warn is what to tell a person of them.
func (e *Engine) Unheld(names []string) (Step, error) {
	return e.step(map[string]any{"type": "unheld", "names": names}, false)
}

// Call asks the engine whether a tools/call of name may reach the server:
// Allowed, or Refusal; Record is the record it was judged by.
func (e *Engine) Call(name string) (Step, error) {
	return e.call(map[string]any{"type": "call", "name": name})
}

// Item asks the engine whether a request of method reaching an item may
// reach the server: a prompts/get (MethodGet) of the prompt whose name is
// key, a resources/read (MethodRead) of the resource whose uri is key, or
// a completion/complete of a prompt (member "name") or a resource
// template or resource (member "uri", a uriTemplate or a resource's uri). member is the event's member
// naming it: "name" or "uri". Allowed, or Refusal in the core's words (of
// the session when it does not proceed, else the item's); Record is the
// record it was judged by. A ui:// template read is not the engine's:
// ui_template_check judges it.
func (e *Engine) Item(method, member, key string) (Step, error) {
	return e.call(map[string]any{"type": "call", "method": method, member: key})
}

// call answers a call event from the memo, or asks the core (step keeps
// the answer when it left the state as it was).
func (e *Engine) call(event map[string]any) (Step, error) {
	e.mu.Lock()
	st, ok := e.calls[memoKey(event)]
	e.mu.Unlock()
	if ok {
		return st, nil
	}
	return e.step(event, false)
}

// LogProof asks which consistency proof the log check of proof against
// the checkpoint kept needs (none when the trees are the same size).
func LogProof(proof, checkpoint string) (Step, error) {
	var e Engine
	ev := map[string]any{"type": "log_proof", "proof": proof}
	if checkpoint != "" {
		ev["checkpoint"] = checkpoint
	}
	return e.step(ev, false)
}

// AskIssuer asks whether the service path asks the issuer about the
// observation with these facts (observedJSON) at all: only about a whole
// list.
func AskIssuer(observed map[string]any) (Step, error) {
	var e Engine
	return e.step(map[string]any{"type": "issuer", "observed": observed}, false)
}

// LogPoll asks where a monitor's poll of the issuer's log starts: the
// tree size of the checkpoint kept (checkpoint "": none kept, from 0). A
// kept checkpoint whose size does not read is the core's bad_request.
func LogPoll(checkpoint string) (Step, error) {
	var e Engine
	ev := map[string]any{"type": "log_poll"}
	if checkpoint != "" {
		ev["checkpoint"] = checkpoint
	}
	return e.step(ev, false)
}

// atMS is the engine's clock: monotonic milliseconds since its first use.
// Callers hold no lock; the first call sets the zero.
func (e *Engine) atMS() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.start.IsZero() {
		e.start = time.Now()
	}
	return time.Since(e.start).Milliseconds()
}

// step runs one event and keeps the state the core answered.
func (e *Engine) step(event map[string]any, tools bool) (Step, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	raw, err := (&coreops.SessionStepRequest{State: e.state, Event: event}).Call()
	if err != nil {
		return Step{}, err
	}
	fields, err := membersOfValid(raw)
	if err != nil {
		return Step{}, fmt.Errorf("reading the session engine's answer: %w", err)
	}
	st, err := e.read(fields["actions"], tools)
	if err != nil {
		return Step{}, fmt.Errorf("reading the session engine's answer: %w", err)
	}
	state, err := canonicalString(fields["state"])
	if err != nil {
		return Step{}, fmt.Errorf("reading the session engine's state: %w", err)
	}
	if st.Record != nil {
		e.rec = st.Record
	}
	if event["type"] == "call" {
		st.Record = e.rec
	}
	if string(e.state) != state {
		e.state, e.calls = []byte(state), nil
	} else if k := memoKey(event); k != "" && len(k) <= maxMemoKey && len(e.calls) < maxCallMemo {
		if e.calls == nil {
			e.calls = map[string]Step{}
		}
		e.calls[k] = st
	}
	return st, nil
}

// memoKey is the call memo's key of an event: its method ("" for
// tools/call), the member naming what it reaches and its value; "" for
// another event. The member is part of it: a completion/complete names a
// prompt by name and a resource template by uri, and a prompt whose name
// is a template's uriTemplate is another item.
func memoKey(event map[string]any) string {
	if event["type"] != "call" {
		return ""
	}
	method, _ := event["method"].(string)
	if uri, ok := event["uri"].(string); ok {
		return method + "\x00uri\x00" + uri
	}
	name, _ := event["name"].(string)
	return method + "\x00name\x00" + name
}

// read executes nothing: it reads the actions into a Step, in order.
func (e *Engine) read(actions []byte, tools bool) (Step, error) {
	var st Step
	var rec Record
	if len(actions) < 2 || actions[0] != '[' {
		return st, errors.New("actions: not an array")
	}
	for i := 1; i < len(actions) && actions[i] != ']'; {
		end := jsonframe.SkipValidValue(actions, i)
		a, err := membersOfValid(actions[i:end])
		if err != nil {
			return st, err
		}
		var name string
		if err := json.Unmarshal(a["action"], &name); err != nil {
			return st, fmt.Errorf("an action without its name: %w", err)
		}
		switch name {
		case "append_record":
			var line string
			if line, err = canonicalString(a["record"]); err != nil {
				return st, err
			}
			if rec, err = ParseRecord([]byte(line)); err != nil {
				return st, err
			}
			st.Record = &rec
		case "hand":
			if st.Record == nil {
				return st, errors.New("hand before append_record")
			}
			if st.Record.Handoff, err = handoffOf(a, tools); err != nil {
				return st, err
			}
		case "keep_checkpoint":
			err = json.Unmarshal(a["checkpoint"], &st.Keep)
		case "check_again":
			st.CheckAgain = true
		case "recheck":
			var ms int64
			err = json.Unmarshal(a["held_back_ms"], &ms)
			st.Recheck, st.HeldBack = true, time.Duration(ms)*time.Millisecond
		case "wake":
			var ms int64
			err = json.Unmarshal(a["at_ms"], &ms)
			st.Wake = e.start.Add(time.Duration(ms) * time.Millisecond)
		case "allow":
			st.Allowed = true
		case "refuse":
			err = json.Unmarshal(a["text"], &st.Refusal)
			// An item's refusal names the item its words are of.
			for k, into := range map[string]*string{"list": &st.RefusedList, "key": &st.RefusedKey} {
				if err == nil && a[k] != nil {
					err = json.Unmarshal(a[k], into)
				}
			}
		case "ask_consistency":
			for k, into := range map[string]*uint64{"from": &st.ConsistencyFrom, "to": &st.ConsistencyTo, "kept_size": &st.KeptSize, "proof_size": &st.ProofSize} {
				if err == nil {
					err = json.Unmarshal(a[k], into)
				}
			}
		case "ask_issuer":
			st.AskIssuer = true
			err = json.Unmarshal(a["reading"], &st.Reading)
		case "warn":
			err = json.Unmarshal(a["text"], &st.Warn)
		case "poll_log":
			err = json.Unmarshal(a["from"], &st.PollFrom)
		default:
			// An action this executor does not know is one it cannot
			// carry out: refusing it is failing closed.
			return st, fmt.Errorf("an action this host does not know: %q", name)
		}
		if err != nil {
			return st, fmt.Errorf("%s: %w", name, err)
		}
		if i = end; i < len(actions) && actions[i] == ',' {
			i++
		}
	}
	if st.Record != nil && st.Record.Handoff != nil {
		st.Record.Handoff.Notice = st.Warn
	}
	return st, nil
}
