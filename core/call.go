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
