package policy

import (
	"time"

	"github.com/crawlcheck/verifier/core/internal/canon"
)

// Finding is one observation of a check, before the policy decides it.
type Finding struct {
	Observation Observation
	Tool        string // "" for session scope
	Part        string // the tool part that changed, "" when none applies
	ToolSHA256  string // the observed tool hash, for matching exceptions (an item's, for an item-scope one)
	// Item names the prompt, resource or resource template of an
	// item-scope observation (its name, uri or uriTemplate); "" otherwise.
	// Tool is then "": an item never takes a tool's effect.
	Item   string
	Detail canon.Value // what the record says about it; null for nothing
}

// Decided is one finding with its effect.
type Decided struct {
	Finding
	Effect    Effect // what the runtime does
	Would     Effect // what enforce would do (the record carries it in observe mode)
	Exception *Exception
	Override  bool // an integrity observation the operator's policy (effects or an exception) set below deny
}

// Decision is the policy's answer for a whole check.
type Decision struct {
	Mode        string
	Findings    []Decided
	Effect      Effect            // the session's effect
	Tools       map[string]Effect // each offered tool's effect
	WouldEffect Effect            // observe mode: the session effect enforce would give
	WouldTools  map[string]Effect
	Applied     []Exception // exceptions that gave proceed_recorded
	Expired     []Exception // exceptions that matched but had expired
}

// Decide applies the policy to the findings of a check in a mode. offered
// names the tools the server offered; refreshed says this check is the one
// retry a refresh effect asked for, so refresh now means pause.
func Decide(p *Policy, mode string, findings []Finding, offered []string, now time.Time, refreshed bool) Decision {
	d := Decision{Mode: mode}
	for _, f := range findings {
		x := Decided{Finding: f}
		e := p.Effects[f.Observation]
		if ce, ok := p.classesEffect(f); ok {
			e = ce
		}
		rule, _ := RuleOf(f.Observation)
		if ex, expired := p.exceptionFor(f, now); ex != nil && !expired {
			e, x.Exception = ProceedRecorded, ex
			d.Applied = append(d.Applied, *ex)
		} else if ex != nil {
			d.Expired = append(d.Expired, *ex)
		}
		x.Override = rule.Class == ClassIntegrity && e < Deny
		if e == Refresh && refreshed {
			e = Pause
		}
		if rule.Scope == ScopeSession && e == PauseTool {
			e = Pause
		}
		enforce := e
		if mode == ModeReview && f.Observation != Unchanged && e != ProceedRecorded && e < Pause {
			e = Pause
		}
		if mode == ModeObserve {
			e = Proceed
		}
		x.Effect, x.Would = e, enforce
		d.Findings = append(d.Findings, x)
	}
	d.Effect, d.Tools = combine(d.Findings, offered, func(x Decided) Effect { return x.Effect })
	d.WouldEffect, d.WouldTools = combine(d.Findings, offered, func(x Decided) Effect { return x.Would })
	return d
}

// combine folds finding effects into a session effect and per-tool effects:
// a tool's effect is the strongest of its own findings and of the session's
// when the session is paused or denied.
func combine(fs []Decided, offered []string, eff func(Decided) Effect) (Effect, map[string]Effect) {
	session := Proceed
	perTool := make(map[string]Effect, len(offered))
	for _, n := range offered {
		perTool[n] = Proceed
	}
	for _, f := range fs {
		e := eff(f)
		session = max(session, e)
		if f.Tool != "" {
			if cur, ok := perTool[f.Tool]; ok {
				perTool[f.Tool] = max(cur, e)
			}
		}
	}
	if session >= Pause {
		for n, e := range perTool {
			perTool[n] = max(e, session)
		}
	}
	return session, perTool
}

// exceptionFor finds the exception covering a finding; expired reports that
// the one found is past its until.
func (p *Policy) exceptionFor(f Finding, now time.Time) (ex *Exception, expired bool) {
	var found *Exception
	for i := range p.Exceptions {
		e := &p.Exceptions[i]
		// An exception names a tool, or for an item-scope finding the item
		// (a finding has one or neither, never both).
		if e.Observation != f.Observation || e.Tool != f.Tool+f.Item || e.SHA256 != f.ToolSHA256 {
			continue
		}
		if now.Before(e.Until) {
			return e, false
		}
		found = e
	}
	return found, found != nil
}
