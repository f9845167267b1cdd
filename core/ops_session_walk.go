package core

import (
	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/continuity"
	"github.com/crawlcheck/verifier/core/internal/req"
	"github.com/crawlcheck/verifier/core/internal/session"
)

// The observation's events (docs/abi.md, The session engine): the host
// sends what the server answered — the handshake, then each tools/list
// page — as the bytes it received, or the fault it saw instead, and the
// engine answers which page to read next (read_page) or, when the walk
// ends, the observation the check is made on (observed). Which cursor
// next, when to stop and why, where a fault happened and which of its
// facts the record carries, and the version the session uses are the
// engine's, once, where each host used to decide them (walk.go).

// sessionHandshake begins an observation: the handshake's answer (or the
// fault that kept it from arriving) and the page cap. A re-check on the
// same connection begins with the same answer again.
func sessionHandshake(st *session.State, ev req.Obj) ([]canon.Value, error) {
	rd := ev.Read()
	method := rd.OneOf("handshake", "", session.HandshakeInitialize, session.HandshakeDiscover)
	result := rd.Page("result", false)
	negotiated := rd.Str("negotiated", false)
	pageCap := DefaultPageCap
	if rd.Has("page_cap") && !rd.Failed() {
		pageCap = positiveInt(rd, "page_cap")
	}
	fault := eventFault(rd)
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if rd.Has("result") && method == "" {
		return nil, cerr.New(cerr.BadRequest, "%s needs %s: the handshake it is the result of", rd.Field("result"), rd.Field("handshake"))
	}
	w := &session.Walk{
		Handshake: method,
		Result:    rd.Has("result"),
		Protocol:  session.ReadHandshake(method, result, negotiated),
		Cap:       int64(min(pageCap, MaxPages)), // beyond it no check compares a walk
	}
	if fault != nil {
		st.Walk = nil
		return []canon.Value{observedAction(w, "", fault, true, false)}, nil
	}
	st.Walk = w
	return []canon.Value{action("read_page", canon.M("cursor", canon.NullValue()))}, nil
}

// sessionPage takes in one tools/list answer of the walk (or the fault
// that kept it from arriving, or oversized: a page the core refused as
// larger than a request) and answers the next read_page, or the walk's end.
func sessionPage(st *session.State, ev req.Obj) ([]canon.Value, error) {
	w := st.Walk
	if w == nil {
		return nil, cerr.New(cerr.BadRequest, "request.event: a page with no walk begun: send the handshake event first")
	}
	rd := ev.Read()
	page, hasPage := rd.Page("page", false), rd.Has("page")
	fault := eventFault(rd)
	oversized := rd.Bool("oversized")
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if n := btoi(hasPage) + btoi(fault != nil) + btoi(oversized); n != 1 {
		return nil, cerr.New(cerr.BadRequest, "request.event takes one of page, fault and oversized")
	}
	end := func(stop string, f *continuity.Fault, kept bool) ([]canon.Value, error) {
		st.Walk = nil
		return []canon.Value{observedAction(w, stop, f, false, kept)}, nil
	}
	if fault != nil {
		return end("", fault, w.Pages > 0)
	}
	overCap := &continuity.Fault{Failure: continuity.FaultPagesOverCap}
	if oversized {
		// No check could carry a page larger than a request: none is kept,
		// and the record says why (the server's doing).
		return end("", overCap, false)
	}
	cursor, stop, over := w.PageStep(page)
	switch {
	case over:
		return end("", overCap, false)
	case stop != "":
		return end(stop, nil, true)
	}
	return []canon.Value{action("read_page", canon.M("cursor", canon.Str(cursor)))}, nil
}

// observedAction is the walk's end: observed, the observation's members
// the engine decided; pages, how many of the pages the host read (its
// buffer, in order) go in observed.pages (null: no pages member);
// handshake_result, whether the handshake's result bytes the host kept go
// in observed.handshake_result; stop, why the walk ended (null when a
// fault ended it).
func observedAction(w *session.Walk, stop string, f *continuity.Fault, atHandshake, kept bool) canon.Value {
	pages := canon.NullValue()
	if kept {
		pages = canon.Int(w.Pages)
	}
	return action("observed",
		canon.M("observed", w.Observed(stop, f, atHandshake)),
		canon.M("pages", pages),
		canon.M("handshake_result", canon.BoolOf(w.Result)),
		canon.M("stop", canon.StrOrNull(stop, stop != "")),
	)
}

// eventFault reads an event's fault, if any: the transport's code (one the
// core words, continuity.HostFailures) and the facts only the host knows,
// as continuity_check's observed has them but for where it happened, which
// is the engine's to say.
func eventFault(rd *req.Reader) *continuity.Fault {
	o, ok := rd.Object("fault")
	if !ok || rd.Failed() {
		return nil
	}
	if err := o.Only("failure", "failure_detail", "resource_metadata", "timeout_ms", "failure_command", "exit_status", "stderr_tail"); err != nil {
		rd.Fail(err)
		return nil
	}
	fr := o.Read()
	if fr.Str("failure", true); fr.Failed() {
		rd.Fail(fr.Err())
		return nil
	}
	f := readFault(fr)
	if err := fr.Err(); err != nil {
		rd.Fail(err)
		return nil
	}
	return &f
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
