package continuity

import (
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/internal/policy"
	"github.com/crawlcheck/verifier/core/internal/tools"
)

// What a session does after a check (the handoff's session).
const (
	SessionProceed    = "proceed"     // hand the framework the tools answered, and nothing else
	SessionCheckAgain = "check_again" // a refresh: check once more with refreshed, hand over nothing before
	SessionStop       = "stop"        // pause or deny: hand over nothing, call nothing
)

// Handoff performs the check and answers, besides its record, what a host
// does with it (docs/continuity.md, "The handoff"): whether the session
// proceeds, stops or checks again; for each tool the model may be offered
// the exact object to hand the framework, written by the core from what it
// parsed and hashed (tools.Tool.Handoff); the tools withheld; which names a
// call may reach; and the instructions the model may be given. A host
// decides none of this and hands over nothing else.
//
// Without texts (a host that hands no tools on: the CLI prints the record)
// the answer's tools are null and no tool object is written: for 1,000
// tools they were nearly all of the answer's 1.3 MB and a sixth of
// crawlcheck check --tools (docs/benchmarks.md). Everything else is the
// same, withheld and calls included.
func Handoff(in Input, texts bool) (canon.Value, error) {
	c, d, err := runCheck(in)
	if err != nil {
		return canon.Value{}, err
	}
	session := SessionProceed
	switch {
	case d.Effect >= policy.Pause:
		session = SessionStop
	case d.Effect == policy.Refresh:
		session = SessionCheckAgain
	}
	// What the baseline can see is what may be handed over: annotations
	// only against a baseline that compares them, the members beyond the
	// four parts only against one that covers them.
	annotations := len(c.base.BlindParts) == 0
	extended := c.cov != nil
	handed, withheld, names := []canon.Value{}, []string{}, []string{}
	for i := range c.observed.Tools {
		t := &c.observed.Tools[i]
		if session != SessionProceed || d.Tools[t.Name].Blocks() {
			withheld = append(withheld, t.Name)
			continue
		}
		if texts {
			handed = append(handed, canon.Obj(
				canon.M("name", canon.Str(t.Name)),
				canon.M("tool", canon.Str(string(t.Handoff(annotations, extended)))),
			))
		}
		names = append(names, t.Name)
	}
	tools.SortEntries(withheld, func(s string) string { return s })
	tools.SortEntries(names, func(s string) string { return s })
	handedTools := canon.NullValue()
	if texts {
		handedTools = canon.Arr(handed...)
	}
	ms := []canon.Member{
		canon.M("record", c.record(d)),
		canon.M("session", canon.Str(session)),
		canon.M("tools", handedTools),
		canon.M("withheld", canon.Strs(withheld)),
		canon.M("calls", canon.Obj(
			canon.M("names", canon.Strs(names)),
			// observe blocks nothing: a call to a name the list did not
			// offer goes through too, and the host records it.
			canon.M("unlisted", canon.BoolOf(session == SessionProceed && in.Mode == policy.ModeObserve)),
		)),
		canon.M("instructions", c.handedInstructions(session, d)),
	}
	if f := c.handedFeatures(session, d, texts); !f.IsNull() {
		ms = append(ms, canon.M("features", f))
	}
	return canon.Obj(ms...), nil
}

// handedInstructions is what the model may be given of the server's
// instructions: the text the handshake gave, when the baseline covered it
// and the check compared it, and the session proceeds with no
// instructions_changed blocking it; otherwise null (give the model none).
func (c *check) handedInstructions(session string, d policy.Decision) canon.Value {
	o := c.in.Observed
	if session != SessionProceed || c.cov == nil || !c.cov.HasInstructions || !o.HandshakeRead || o.HandshakeErr != nil {
		return canon.NullValue()
	}
	for _, f := range d.Findings {
		if f.Observation == policy.InstructionsChanged && f.Effect.Blocks() {
			return canon.NullValue()
		}
	}
	return o.Instructions
}
