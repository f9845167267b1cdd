package service

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/internal/jsonframe"
)

// TestReceiptOf: receiptOf reads sign_receipt's answers as a framing of
// every member of the envelope's result does (with and without the log
// entry), and refuses an answer without the log entry it was asked for,
// or with one it was not.
func TestReceiptOf(t *testing.T) {
	var ring core.Keyring
	for _, name := range []string{"example", "with-its-log-entry", "decision-receipt"} {
		raw, err := os.ReadFile("../../../testdata/ops/sign_receipt/" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Request map[string]json.RawMessage
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		withEntry := string(v.Request["log_entry"]) == "true"
		req, _ := json.Marshal(v.Request)
		res, err := coreResult("sign_receipt", req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		a, err := ring.CallAnswer("sign_receipt", req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := receiptOf(a, withEntry)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m, _ := jsonframe.Members(res)
		var sha, entry string
		json.Unmarshal(m["sha256"], &sha)
		json.Unmarshal(m["log_entry"], &entry)
		if !bytes.Equal(got.Receipt, m["receipt"]) || got.SHA256 != sha || string(got.LogEntry) != entry || (entry == "") == withEntry {
			t.Errorf("%s: receiptOf = %s / %s / %q, framed %s / %s / %q", name, got.Receipt[:40], got.SHA256, got.LogEntry, m["receipt"][:40], sha, entry)
		}
		if _, err := receiptOf(a, !withEntry); err == nil {
			t.Errorf("%s: read with withEntry %v, not refused", name, !withEntry)
		}
	}
	// A refusal keeps the core's code and message.
	if _, err := ring.CallAnswer("sign_receipt", []byte(`{}`)); err == nil {
		t.Fatal("an empty request signed")
	} else if ce, ok := refusal(err).(*coreError); !ok || ce.code != "bad_request" {
		t.Fatalf("refusal: %v", refusal(err))
	}
}
