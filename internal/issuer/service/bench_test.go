package service_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/crawlcheck/verifier/internal/benchdata"
	"github.com/crawlcheck/verifier/internal/issuer/service"
)

// BenchmarkLockCheck is one POST /api/v1/mcp/lock/check of a 100-tool
// list through the whole service (SQLite store), the request make load
// sends: what one check costs before any concurrency.
func BenchmarkLockCheck(b *testing.B) {
	e := newEnv(b, allowLoopback(), service.Config{})
	tools, _ := json.Marshal(benchdata.Tools(100))
	var made struct{ Lock string }
	json.Unmarshal(coreOp(b, "make_lock", obj{"tools": json.RawMessage(tools), "approved_at": benchdata.Now, "server": obj{"url": e.mcp}}), &made)
	body, _ := json.Marshal(obj{"lock": made.Lock, "tools": json.RawMessage(tools)})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := http.Post(e.api+"/api/v1/mcp/lock/check", "application/json", bytes.NewReader(body))
		if err != nil || resp.StatusCode != 200 {
			b.Fatal(err, resp.Status)
		}
		resp.Body.Close()
	}
}

// BenchmarkLockCheckParallel is BenchmarkLockCheck from 32 clients at once,
// as make load asks: answers signed together are committed together.
func BenchmarkLockCheckParallel(b *testing.B) {
	e := newEnv(b, allowLoopback(), service.Config{})
	tools, _ := json.Marshal(benchdata.Tools(100))
	var made struct{ Lock string }
	json.Unmarshal(coreOp(b, "make_lock", obj{"tools": json.RawMessage(tools), "approved_at": benchdata.Now, "server": obj{"url": e.mcp}}), &made)
	body, _ := json.Marshal(obj{"lock": made.Lock, "tools": json.RawMessage(tools)})
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := hc.Post(e.api+"/api/v1/mcp/lock/check", "application/json", bytes.NewReader(body))
			if err != nil || resp.StatusCode != 200 {
				b.Error(err, resp.Status)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}
