package coreops

import (
	"errors"
	"testing"

	"github.com/crawlcheck/verifier/internal/corecall"
)

// TestMembers holds the generated requests to what a zero value means
// (docs/decisions.md, issue 33 item 5): nil is not sent, an empty list is,
// an optional string "" is not, a pointer to false is, and a document stays
// a corecall.Text, which corecall hands over as an attachment.
func TestMembers(t *testing.T) {
	m := (&ContinuityHandoffRequest{Now: "2026-12-08T00:00:00Z", Lock: corecall.Text("{}"), ToolTexts: new(false)}).Members()
	if _, ok := m["lock"].(corecall.Text); !ok {
		t.Errorf("lock is %T, want corecall.Text (an attachment)", m["lock"])
	}
	if v, ok := m["tool_texts"].(*bool); !ok || *v {
		t.Errorf("tool_texts = %v, want a pointer to false", m["tool_texts"])
	}
	for _, absent := range []string{"mode", "policy", "operator_keys", "pinned_keys", "refreshed", "log"} {
		if _, ok := m[absent]; ok {
			t.Errorf("%s sent for a zero value", absent)
		}
	}
	if _, ok := m["observed"]; !ok {
		t.Error("a required member left out")
	}
	s := (&ScanRequest{Names: []string{}}).Members()
	if v, ok := s["names"].([]string); !ok || v == nil {
		t.Errorf("names = %#v, want the empty list sent", s["names"])
	}
}

// TestCalls runs one op each way: typed, its bytes, decoded into the
// caller's type, and a refusal as the core's error.
func TestCalls(t *testing.T) {
	req := CanonicalizeRequest{JSON: corecall.Text(`{"b":1,"a":[true]}`)}
	res, err := Canonicalize(req)
	if err != nil || res.Canonical != `{"a":[true],"b":1}` || len(res.SHA256) != 64 {
		t.Fatalf("Canonicalize = %+v, %v", res, err)
	}
	raw, err := req.Call()
	if err != nil || string(raw) != `{"canonical":"{\"a\":[true],\"b\":1}","sha256":"`+res.SHA256+`"}` {
		t.Errorf("Call = %s, %v", raw, err)
	}
	var own struct{ Canonical string }
	if err := req.Decode(&own); err != nil || own.Canonical != res.Canonical {
		t.Errorf("Decode = %+v, %v", own, err)
	}
	var ce *corecall.Error
	if _, err := Canonicalize(CanonicalizeRequest{JSON: corecall.Text("{\"a\":\"\xff\"}")}); !errors.As(err, &ce) || ce.Code != "json_invalid_utf8" {
		t.Errorf("invalid UTF-8: %v, want json_invalid_utf8", err)
	}
	if _, err := (&VerifyLockRequest{Now: "2026-12-08T00:00:00Z"}).Call(); !errors.As(err, &ce) {
		t.Errorf("a lockfile left out: %v, want the core's refusal", err)
	}
}
