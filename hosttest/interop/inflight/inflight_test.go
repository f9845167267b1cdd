package inflight

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestRewrite: only the named tool's description in a tools/list answer
// changes, and by the suffix alone, whatever the member order and escapes.
func TestRewrite(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"description":"Say \"hi\"\u00e9","name":"a","inputSchema":{"type":"object","properties":{"description":{"type":"string"}}}},{"name":"b","description":"B."}]}}`
	out, ok := Rewrite([]byte(in), "a")
	if !ok {
		t.Fatal("not rewritten")
	}
	want := strings.Replace(in, `\u00e9"`, `\u00e9`+Suffix+`"`, 1)
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	if !json.Valid(out) {
		t.Error("not JSON")
	}
	for _, msg := range []string{
		in[:len(in)-3], // cut off
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"b","description":"B."}]}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"content":[{"name":"a","description":"x"}]}}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"}]}}`,
	} {
		if got, ok := Rewrite([]byte(msg), "a"); ok || string(got) != msg {
			t.Errorf("%s: rewritten to %s", msg, got)
		}
	}
}

// TestProxyAnswerBeforeBody: the proxy forwards a request only once its
// body is whole, and an upstream that answers with an event stream's
// headers before it reads the body (as FastMCP's SSE answers can) gets all
// of it and its answer reaches the client. Forwarded as it arrived, the
// body was read by the forwarding Transport while net/http's server drained
// and closed it as the proxy flushed the answer's headers: the upstream got
// part of it or its connection closed, and the stream ended without its
// data (FastMCP's tools/list answers, one session in ten).
func TestProxyAnswerBeforeBody(t *testing.T) {
	arrived := make(chan struct{}, 1)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return // the connection went: the client sees no data line
		}
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", body)
	}))
	defer upstream.Close()
	front := httptest.NewServer(NewProxy(upstream.URL))
	defer front.Close()

	conn, err := net.Dial("tcp", strings.TrimPrefix(front.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	msg := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	// Chunked, in three writes: the answer's headers come back after the
	// first; the last chunk comes once both readers wait on the body.
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: proxy\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", 20, msg[:20])
	time.Sleep(200 * time.Millisecond)
	fmt.Fprintf(conn, "%x\r\n%s\r\n", len(msg)-20, msg[20:])
	time.Sleep(200 * time.Millisecond)
	select {
	case <-arrived:
		t.Error("the request was forwarded before its body was whole")
	default:
	}
	io.WriteString(conn, "0\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	if want := "data: " + msg + "\n"; !strings.Contains(string(got), want) {
		t.Errorf("the client read %q (%v), not the answer %q", got, err, want)
	}
}
