package service

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/crawlcheck/verifier/internal/jsonframe"
)

// TestReceiptOf: receiptOf reads sign_receipt's results as a framing of
// every member does (with and without the log entry), and refuses a
// result of any other layout.
func TestReceiptOf(t *testing.T) {
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
		got, err := receiptOf(res, withEntry)
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
		if _, err := receiptOf(res, !withEntry); err == nil {
			t.Errorf("%s: read with withEntry %v, not refused", name, !withEntry)
		}
		for _, broken := range [][]byte{
			res[:len(res)-1],
			append(bytes.Clone(res[:len(res)-1]), `,"z":1}`...),
			bytes.Replace(res, []byte(`,"receipt":`), []byte(`,"receipts":`), 1),
			bytes.Replace(res, []byte(`{"key_id":"`), []byte(`{"key_id": "`), 1),
			[]byte(`{"key_id":"k","receipt":{},"sha256":{}}`),
			[]byte(`{"key_id":"k","receipt":"x","sha256":"s"}`),
		} {
			if _, err := receiptOf(broken, withEntry); err == nil {
				t.Errorf("%s: %.60s… not refused", name, broken)
			}
		}
	}
}
