package preflight_test

import (
	"bytes"
	"context"
	"errors"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawlcheck/verifier/bindings/go/preflight"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ExampleOpen is the session of docs/preflight.md (TestPreflightDocExample
// keeps the document's copy identical). It is compiled, not run: it needs a
// server and a lockfile.
func ExampleOpen() {
	ctx := context.Background()
	url := "http://127.0.0.1:8080/mcp"

	impl := &mcp.Implementation{Name: "my-agent", Version: "1.0"}
	sess, err := preflight.Open(ctx, impl, nil,
		&mcp.StreamableClientTransport{Endpoint: url}, nil,
		preflight.Config{
			LockPath: "crawlcheck.lock.json",
			LogPath:  "records.jsonl",
			Settings: preflight.Settings{Mode: "enforce"},
		})
	var refused *preflight.RefusedError
	switch {
	case errors.As(err, &refused): // no session: the server could not be connected
		log.Fatalf("refused: %s (record %s)", refused.Effect, refused.Record.RecordSHA256)
	case err != nil: // the configuration cannot be used (lockfile, log)
		log.Fatal(err)
	}
	defer sess.Close()

	tools, err := sess.ListTools(ctx, nil) // withheld tools left out
	if err != nil {
		log.Fatal(err) // the session is paused or denied: Record says why
	}
	log.Printf("%d tools", len(tools.Tools))
	_, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "get_item"})
	if errors.As(err, &refused) {
		// refused.Tool, refused.Effect, refused.Record (the record that decided)
		log.Printf("get_item refused: %s", refused.Effect)
	}
	// After a person read the record's observations and approved get_item:
	var not *preflight.ApprovalRefusedError
	if _, err := sess.Confirm("get_item"); errors.As(err, &not) {
		log.Printf("not approved: %s", not.Reason)
	}
}

// TestPreflightDocExample: docs/preflight.md shows ExampleOpen's body,
// from impl on, exactly.
func TestPreflightDocExample(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(src), "\timpl := ")
	body, _, _ = strings.Cut(body, "\n}\n")
	var want bytes.Buffer
	for _, line := range strings.Split("\timpl := "+body, "\n") {
		want.WriteString(strings.TrimPrefix(line, "\t") + "\n")
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "preflight.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, []byte("```go\n"+want.String()+"```\n")) {
		t.Errorf("docs/preflight.md does not show ExampleOpen's body; it should read:\n```go\n%s```", want.String())
	}
}
