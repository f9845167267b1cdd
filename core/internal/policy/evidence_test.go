package policy

import "testing"

func TestDecisionOf(t *testing.T) {
	want := map[Effect]string{Proceed: "proceed", ProceedRecorded: "proceed", Refresh: "pause", PauseTool: "pause", Pause: "pause", Deny: "deny"}
	for e, d := range want {
		if got := DecisionOf(e); got != d {
			t.Errorf("DecisionOf(%s) = %s, want %s", e, got, d)
		}
	}
}

// TestEvidenceReasons: each reason is named once and becomes one of the
// observations signed evidence may give (spec §4), and the rule table the
// receipts name by hash carries the evidence table.
func TestEvidenceReasons(t *testing.T) {
	evidence := map[Observation]bool{EvidenceExpired: true, SignatureInvalid: true, KeyUnknown: true,
		KeyRetired: true, ServerIdentityMismatch: true, DecisionRefused: true}
	seen := map[string]bool{}
	for _, r := range EvidenceReasons {
		if seen[r.Reason] {
			t.Errorf("reason %s appears twice", r.Reason)
		}
		seen[r.Reason] = true
		if !evidence[r.Observation] {
			t.Errorf("reason %s becomes %s, not an observation of signed evidence", r.Reason, r.Observation)
		}
		if o, ok := EvidenceObservation(r.Reason); !ok || o != r.Observation {
			t.Errorf("EvidenceObservation(%s) = %s, %v", r.Reason, o, ok)
		}
	}
	if _, ok := EvidenceObservation("unchanged"); ok {
		t.Error("a reason not in the table maps to an observation")
	}
	v, _ := RulesValue().Get("evidence")
	reasons, _ := v.Get("reasons")
	if len(reasons.Elems()) != len(EvidenceReasons) {
		t.Errorf("the rule table lists %d evidence reasons, the code %d", len(reasons.Elems()), len(EvidenceReasons))
	}
}
