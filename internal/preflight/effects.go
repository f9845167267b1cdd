package preflight

import (
	"fmt"

	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/coreops"
)

// Effects, weakest to strongest, as the core's rule table orders them. They
// name what a record says; what a host does after a check is the core's
// handoff (Record.Handoff), never a comparison of these.
const (
	EffectProceed         = "proceed"
	EffectProceedRecorded = "proceed_recorded"
	EffectRefresh         = "refresh"
	EffectPauseTool       = "pause_tool"
	EffectPause           = "pause"
	EffectDeny            = "deny"
)

// RefusedError is the error of a call the check refused: a tool withheld
// (Tool set) or a session paused or denied (Tool empty). It carries the
// record that decided it, so that the caller can show or log why.
type RefusedError struct {
	Tool   string
	Effect string
	Record Record
	// text is the session engine's refusal (its refuse action), the same
	// words the refusal op gives; "" asks the refusal op.
	text string
}

// Error is the core's wording of the refusal (refusal): the effect, the
// observations that decided it and what differed, as JS and Python say it.
func (e *RefusedError) Error() string {
	if e.text != "" {
		return e.text
	}
	var out struct {
		Text string `json:"text"`
	}
	req := coreops.RefusalRequest{Record: corecall.Text(e.Record.Raw), Tool: e.Tool}
	if len(e.Record.Raw) > 0 && req.Decode(&out) == nil && out.Text != "" {
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
