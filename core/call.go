package core

import (
	"encoding/json"
	"fmt"
)

// Call runs one op on a JSON request and returns the JSON envelope.
// It never panics: a panic inside an op is recovered into an "internal" error.
func Call(op string, request []byte) (response []byte) {
	defer func() {
		if r := recover(); r != nil {
			response = errorEnvelope("internal", fmt.Sprintf("panic in op %q: %v", op, r))
		}
	}()
	if fn, ok := testOps[op]; ok {
		return fn(request)
	}
	switch op {
	case "version":
		return []byte(`{"ok":true,"result":{"abi":1,"engine":"crawlcheck-core/0.0.0"}}`)
	}
	return errorEnvelope("unknown_op", fmt.Sprintf("unknown op %q", op))
}

func errorEnvelope(code, msg string) []byte {
	b, _ := json.Marshal(msg)
	return []byte(`{"error":{"code":"` + code + `","message":` + string(b) + `},"ok":false}`)
}

// testOps holds ops that only test builds register (see testpanic.go).
var testOps = map[string]func([]byte) []byte{}

// registerTestOp adds an op for a test build; production builds register none.
func registerTestOp(name string, fn func([]byte) []byte) { testOps[name] = fn }
