package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/hosttest/mcpserver/scenario"
	"github.com/crawlcheck/verifier/internal/issuer/service"
	"github.com/crawlcheck/verifier/internal/issuer/store"
	"github.com/crawlcheck/verifier/internal/issuer/store/pgtest"
)

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestSlowBodyHoldsOnlyWhatArrived (F1): bodies that declare 32 MiB and
// send two bytes hold about two bytes each, not the 32 MiB declared, while
// they trickle in.
func TestSlowBodyHoldsOnlyWhatArrived(t *testing.T) {
	e := newEnv(t, allowLoopback(), service.Config{})
	addr := strings.TrimPrefix(e.api, "http://")
	before := heapInUse()
	const conns, declared = 6, 32 << 20
	for i := 0; i < conns; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /api/v1/mcp/lock/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"", declared)
	}
	time.Sleep(500 * time.Millisecond)
	if grew := int64(heapInUse()) - int64(before); grew > 8<<20 {
		t.Fatalf("%d slow bodies of 2 bytes hold %d MiB", conns, grew>>20)
	}
}

// TestInputRefusedBeforeTheStore (F13, F14): a NUL or invalid UTF-8 in a
// string the store keeps, and nesting deeper than the core's limit, are 400
// problems before the store, never a 5xx (PostgreSQL refused a NUL with a
// 503 quoting its SQLSTATE; 200,000-deep nesting was a recovered panic).
func TestInputRefusedBeforeTheStoreSQLite(t *testing.T) {
	testInputRefused(t, newEnv(t, allowLoopback(), service.Config{}))
}

func TestInputRefusedBeforeTheStorePostgres(t *testing.T) {
	testInputRefused(t, newEnv(t, allowLoopback(), service.Config{Store: pgStore(t, "input")}))
}

func pgStore(t *testing.T, name string) store.Store { return pgStoreOn(t, pgtest.Run(t), name) }

// pgStoreOn is a store on a database of its own on a running PostgreSQL.
func pgStoreOn(t *testing.T, pg *pgtest.Server, name string) store.Store {
	dsn, err := pg.CreateDB(name)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func testInputRefused(t *testing.T, e *env) {
	lock := mustString(e.ok("POST", "/api/v1/mcp/lock", "/api/v1/mcp/lock", obj{"tools": json.RawMessage(tools), "server": obj{"url": e.mcp}}))
	deep := strings.Repeat("[", 200000) + strings.Repeat("]", 200000)
	deepObject := strings.Repeat(`{"a":`, 200000) + "1" + strings.Repeat("}", 200000)
	for _, c := range []struct {
		name, path, code string
		body             string
	}{
		{"NUL in subject", "/api/v1/mcp/lock/check", "bad_request", `{"tools":` + tools + `,"lock":` + lock + `,"subject":"https://a.example/\u0000"}`},
		{"NUL in server.url", "/api/v1/mcp/lock", "bad_request", `{"tools":` + tools + `,"server":{"url":"https://a.example/\u0000x"}}`},
		{"NUL in observed.endpoint", "/api/v1/preflight/decide", "bad_request", `{"lock":` + lock + `,"observed":{"endpoint":"https://a.example/\u0000","pages":[]}}`},
		{"invalid UTF-8 in subject", "/api/v1/mcp/lock/check", "json_invalid_utf8", "{\"tools\":" + tools + ",\"lock\":" + lock + ",\"subject\":\"https://a.example/\xff\"}"},
		{"invalid UTF-8 in server.url", "/api/v1/mcp/lock", "json_invalid_utf8", "{\"tools\":" + tools + ",\"server\":{\"url\":\"https://a.example/\xfe\"}}"},
		{"200,000 deep tools", "/api/v1/mcp/lock", "json_too_deep", `{"tools":` + deep + `}`},
		{"200,000 deep lock", "/api/v1/mcp/lock/resign", "json_too_deep", `{"lock":` + deepObject + `}`},
		{"200,000 deep receipt", "/api/v1/preflight/replay", "json_too_deep", `{"receipt":` + deep + `}`},
		{"200,000 deep check", "/api/v1/mcp/lock/check", "json_too_deep", `{"lock":` + lock + `,"tools":` + deep + `}`},
	} {
		e.problem("POST", c.path, c.path, []byte(c.body), 400, c.code)
	}
	// Depth up to the core's limit is the core's to judge, as before.
	at := core.MaxDepth - 1
	if _, out := e.do("POST", "/api/v1/mcp/lock", "/api/v1/mcp/lock", []byte(`{"tools":`+strings.Repeat("[", at)+strings.Repeat("]", at)+`}`)); strings.Contains(string(out), "json_too_deep") {
		t.Errorf("a body %d deep: %s", core.MaxDepth, out)
	}
}

// TestLockBounded (F2): POST lock is bounded by its tools and its bytes
// before make_lock runs: 5,000 one-line tools, or one tool of 5 MiB, are
// 413 problems naming the limit, where they were signed (40,000 one-line
// tools took +974 MiB and stored a 45 MB lockfile).
func TestLockBounded(t *testing.T) {
	e := newEnv(t, allowLoopback(), service.Config{})
	var many strings.Builder
	many.WriteString(`{"server":{"url":"https://a.example/mcp"},"tools":[`)
	for i := range 5000 {
		if i > 0 {
			many.WriteByte(',')
		}
		fmt.Fprintf(&many, `{"name":"t%d","inputSchema":{"type":"object"}}`, i)
	}
	many.WriteString(`]}`)
	if d := e.problem("POST", "/api/v1/mcp/lock", "/api/v1/mcp/lock", []byte(many.String()), 413, "too_many_tools"); !strings.Contains(d, "1000") {
		t.Errorf("5,000 tools: %q names no limit", d)
	}
	pages := `{"pages":[` + mustString([]byte("{"+many.String()[strings.Index(many.String(), `"tools"`):])) + `]}`
	e.problem("POST", "/api/v1/mcp/lock", "/api/v1/mcp/lock", []byte(pages), 413, "too_many_tools")
	big := `{"tools":[{"name":"big","description":"` + strings.Repeat("x", 5<<20) + `","inputSchema":{"type":"object"}}]}`
	if d := e.problem("POST", "/api/v1/mcp/lock", "/api/v1/mcp/lock", []byte(big), 413, "body_too_large"); !strings.Contains(d, "4194304") {
		t.Errorf("a 5 MiB lock request: %q names no limit", d)
	}
	e.ok("POST", "/api/v1/mcp/lock", "/api/v1/mcp/lock", obj{"tools": json.RawMessage(tools), "server": obj{"url": e.mcp}})
	// The bound itself is let through: 1,000 tools, strings with commas
	// and brackets in them not counted as more.
	var bound strings.Builder
	bound.WriteString(`{"server":{"url":"https://a.example/mcp"},"tools":[`)
	for i := range 1000 {
		if i > 0 {
			bound.WriteString(" , ")
		}
		fmt.Fprintf(&bound, `{"name":"t%d","description":"a, [b], {c} \\\" ,","inputSchema":{"type":"object","properties":{"a":{"enum":[1,2]}}}}`, i)
	}
	bound.WriteString(`]}`)
	e.ok("POST", "/api/v1/mcp/lock", "/api/v1/mcp/lock", []byte(bound.String()))
}

// TestLiveReadingsBudget (F3): a client's live readings are charged the
// bytes they took (one reading over the minute's budget refuses the next,
// 429), and the readings at once are bounded (one more is 429 at once,
// not another 64 MiB held).
func TestLiveReadingsBudget(t *testing.T) {
	e := newEnv(t, allowLoopback(), service.Config{ReadBytesPerMinute: 100})
	e.ok("GET", "/api/v1/mcp/lock", "/api/v1/mcp/lock?url="+e.mcp, nil)
	e.problem("GET", "/api/v1/mcp/lock", "/api/v1/mcp/lock?url="+e.mcp, nil, 429, "rate_limited")

	e = newEnv(t, allowLoopback(), service.Config{MaxReadings: 1, ReadLimit: 2 * time.Second})
	hang := scenarioServer(t, `{"tools":`+tools+`,"hang_handshake":true}`)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// With the tenant's credential: an anonymous reading is 401
		// before it would hold a reading's place.
		req, _ := http.NewRequest("GET", e.api+"/api/v1/mcp/lock?url="+hang, nil)
		req.Header.Set("Authorization", e.auth)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	time.Sleep(300 * time.Millisecond)
	e.problem("GET", "/api/v1/mcp/lock", "/api/v1/mcp/lock?url="+e.mcp, nil, 429, "rate_limited")
	<-done
	e.ok("GET", "/api/v1/mcp/lock", "/api/v1/mcp/lock?url="+e.mcp, nil)
}

// scenarioServer is a scenario MCP server of its own.
func scenarioServer(t *testing.T, doc string) string {
	t.Helper()
	f, err := scenario.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(scenario.New(f, log.New(io.Discard, "", 0)).Handler())
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}
