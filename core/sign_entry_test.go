package core_test

import (
	"encoding/json"
	"testing"

	"github.com/crawlcheck/verifier/core"
)

// TestSignReceiptLogEntry: the entry sign_receipt answers with log_entry is
// the one log_entry answers for the receipt it signed, for every
// sign_receipt vector that signs.
func TestSignReceiptLogEntry(t *testing.T) {
	n := 0
	for _, v := range opVectors(t) {
		if v.Op != "sign_receipt" {
			continue
		}
		req, ok := v.Request.(obj)
		if !ok {
			continue
		}
		with := obj{}
		for k, x := range req {
			with[k] = x
		}
		with["log_entry"] = true
		var signed struct {
			OK     bool
			Result struct {
				Receipt  json.RawMessage
				LogEntry *string `json:"log_entry"`
			}
		}
		json.Unmarshal(core.Call("sign_receipt", mustJSON(t, with)), &signed)
		if !signed.OK {
			continue
		}
		var entry struct{ Entry string }
		json.Unmarshal(call(t, "log_entry", obj{"document": string(signed.Result.Receipt)}), &entry)
		if signed.Result.LogEntry == nil || *signed.Result.LogEntry != entry.Entry || entry.Entry == "" {
			t.Errorf("%s: sign_receipt's log_entry %v, log_entry's %q", v.Name, signed.Result.LogEntry, entry.Entry)
		}
		n++
	}
	if n < 4 {
		t.Fatalf("%d sign_receipt vectors signed, want at least 4", n)
	}
}
