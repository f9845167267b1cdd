package preflight

import (
	"fmt"
	"slices"
	"sync"

	"github.com/crawlcheck/verifier/internal/corecall"
)

// Effects, weakest to strongest, as the core's rule table orders them.
const (
	EffectProceed         = "proceed"
	EffectProceedRecorded = "proceed_recorded"
	EffectRefresh         = "refresh"
	EffectPauseTool       = "pause_tool"
	EffectPause           = "pause"
	EffectDeny            = "deny"
)

// effectOrder is the rule table's effect order, read from the core once so
// that this package ranks effects exactly as the core does.
var effectOrder = sync.OnceValue(func() []string {
	var rules struct {
		Rules struct {
			Effects []string `json:"effects"`
		} `json:"rules"`
	}
	if err := corecall.Into("rules", struct{}{}, &rules); err != nil || len(rules.Rules.Effects) == 0 {
		// Unreachable with a working core; every effect then ranks as the
		// strongest, so nothing proceeds.
		return nil
	}
	return rules.Rules.Effects
})

// atLeast reports whether effect is as strong as min or stronger. An effect
// the rule table does not name counts as the strongest: it fails closed.
func atLeast(effect, min string) bool {
	order := effectOrder()
	e, m := slices.Index(order, effect), slices.Index(order, min)
	return e < 0 || m < 0 || e >= m
}

// Withheld reports whether a tool with this effect must be withheld from the
// model and refused when called: pause_tool or stronger.
func Withheld(effect string) bool { return atLeast(effect, EffectPauseTool) }

// Stopped reports whether a session with this effect must stop: pause or
// stronger.
func Stopped(effect string) bool { return atLeast(effect, EffectPause) }

// Proceeds reports whether a check with this session effect let everything
// through: proceed, or proceed_recorded (an approved exception).
func Proceeds(effect string) bool { return !atLeast(effect, EffectRefresh) }

// RefusedError is the error of a call the check refused: a tool withheld
// (Tool set) or a session paused or denied (Tool empty). It carries the
// record that decided it, so that the caller can show or log why.
type RefusedError struct {
	Tool   string
	Effect string
	Record Record
}

// Error is the core's wording of the refusal (refusal): the effect, the
// observations that decided it and what differed, as JS and Python say it.
func (e *RefusedError) Error() string {
	req := map[string]any{"record": corecall.Text(e.Record.Raw)}
	if e.Tool != "" {
		req["tool"] = e.Tool
	}
	var out struct {
		Text string `json:"text"`
	}
	if len(e.Record.Raw) > 0 && corecall.Into("refusal", req, &out) == nil && out.Text != "" {
		return out.Text
	}
	// A record the core cannot read (never one it wrote): the bare facts.
	switch {
	case e.Tool != "" && e.Effect == "":
		return fmt.Sprintf("crawlcheck: tool %q refused: not in the checked tool list (record %s)", e.Tool, e.Record.RecordSHA256)
	case e.Tool != "":
		return fmt.Sprintf("crawlcheck: tool %q refused: %s (record %s)", e.Tool, e.Effect, e.Record.RecordSHA256)
	}
	return fmt.Sprintf("crawlcheck: session refused: %s (record %s)", e.Effect, e.Record.RecordSHA256)
}
