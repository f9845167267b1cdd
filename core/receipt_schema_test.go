package core_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/crawlcheck/verifier/core"
)

// The receipt and guard answer schemas hold what the core writes: every
// receipt the guard of the acceptance suite could read, every receipt
// sign_receipt signed among the op vectors, and every guard answer.
func TestReceiptSchemasValidate(t *testing.T) {
	s := loadSchemas(t)
	schemaOf := map[string]string{
		"crawlcheck-mcp-lock-check":     "crawlcheck-mcp-lock-check.schema.json",
		"crawlcheck-preflight-decision": "crawlcheck-preflight-decision.schema.json",
	}
	n := 0
	receipt := func(what string, doc json.RawMessage) {
		n++
		var k struct{ Kind string }
		json.Unmarshal(doc, &k)
		s.valid(t, schemaOf[k.Kind], what, doc)
	}
	b, err := os.ReadFile(filepath.Join(testdataDir, "guard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var suite struct {
		Cases []struct {
			Name    string
			Request struct{ Receipt json.RawMessage }
			Answer  json.RawMessage
		}
	}
	if err := json.Unmarshal(b, &suite); err != nil {
		t.Fatal(err)
	}
	for _, c := range suite.Cases {
		s.valid(t, "crawlcheck-guard-answer.schema.json", "the answer of "+c.Name, c.Answer)
		var a struct{ Receipt *struct{} }
		json.Unmarshal(c.Answer, &a)
		doc := c.Request.Receipt
		var text string
		if json.Unmarshal(doc, &text) == nil {
			doc = json.RawMessage(text)
		}
		if a.Receipt != nil {
			receipt("the receipt of "+c.Name, doc)
		}
	}
	for _, v := range opVectors(t) {
		if v.Op != "sign_receipt" {
			continue
		}
		var env struct {
			OK     bool
			Result struct{ Receipt json.RawMessage }
		}
		if json.Unmarshal(core.Call(v.Op, v.bytes(t)), &env); env.OK {
			receipt("sign_receipt "+v.Name, env.Result.Receipt)
		}
	}
	if n < 100 {
		t.Errorf("only %d receipts validated", n)
	}
}

// The schemas refuse what the core never writes.
func TestReceiptSchemasRefuse(t *testing.T) {
	s := loadSchemas(t)
	g := newGuardFixture(t)
	for what, edit := range map[string]func(obj){
		"an unknown member":            func(r obj) { r["note"] = "x" },
		"a time without milliseconds":  func(r obj) { r["issued_at"] = "2026-11-30T11:59:00Z" },
		"another operation":            func(r obj) { r["operation"] = "preflight.decide" },
		"a decision of the other kind": func(r obj) { r["decision"] = "proceed" },
		"inputs without lock_sha256":   func(r obj) { delete(r["inputs"].(obj), "lock_sha256") },
		"no signature":                 func(r obj) { delete(r, "signature") },
	} {
		r := g.receipt(receiptSpec{})
		edit(r)
		if s.check(t, "crawlcheck-mcp-lock-check.schema.json", what, mustJSON(t, r)) == nil {
			t.Errorf("the lock check receipt schema accepts %s", what)
		}
	}
	var a obj
	json.Unmarshal(call(t, "guard", g.request(g.receipt(receiptSpec{}))), &a)
	a["observations"] = []any{obj{"observation": "tool_added", "detail": nil}}
	if s.check(t, "crawlcheck-guard-answer.schema.json", "an observation guard never gives", mustJSON(t, a)) == nil {
		t.Error("the guard answer schema accepts an observation guard never gives")
	}
}
