package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/gateway"
)

func TestZZProfStart(t *testing.T) {
	var tools []map[string]any
	for i := range 1000 {
		tools = append(tools, map[string]any{"name": fmt.Sprintf("tool_%05d", i), "description": fmt.Sprintf("Reads record %d of the shop's catalogue and returns it with its price, stock and supplier.", i),
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string", "maxLength": 64}}, "required": []string{"id"}}, "annotations": map[string]any{"readOnlyHint": true}})
	}
	b, _ := json.Marshal(tools)
	e := newEnv(t, string(b))
	f, _ := os.Create(filepath.Join("/tmp", "gw2-start.prof"))
	pprof.StartCPUProfile(f)
	start := time.Now()
	const n = 40
	for range n {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan struct{})
		go func() {
			gateway.Run(context.Background(), gateway.Config{LockPath: e.lock, Command: e.server, Stdin: inR, Stdout: outW, Stderr: io.Discard})
			outW.Close()
			close(done)
		}()
		rd := bufio.NewReaderSize(outR, 1<<20)
		io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`+"\n")
		rd.ReadBytes('\n')
		io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
		for {
			l, err := rd.ReadBytes('\n')
			if err != nil || strings.Contains(string(l), `"id":2`) {
				break
			}
		}
		inW.Close()
		go io.Copy(io.Discard, rd)
		<-done
	}
	pprof.StopCPUProfile()
	t.Logf("%v per start", time.Since(start)/n)
}
