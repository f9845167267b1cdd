// Command gopeer is the plain-Go peer the CLI's server rows of make bench are
// held to (issue 23): what a Go pinning tool such as MCPTrust does, written
// the obvious way with the official Go SDK, and nothing more. It starts the
// server over stdio with the go-sdk client, reads every tools/list page,
// json.Marshals each tool the SDK decoded, hashes it with SHA-256 and either
// writes the name → hash list (lock) or compares it with a pinned one (diff).
// It has none of the verifier's guarantees (its hashes are of the SDK's
// re-encoding, not of the bytes the server sent; nothing is bounded); it is
// a floor for speed, not a design.
//
//	gopeer lock -o PINNED.json -- CMD ARGS...
//	gopeer diff PINNED.json -- CMD ARGS...
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gopeer:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	var mode, file string
	switch {
	case len(args) >= 4 && args[0] == "lock" && args[1] == "-o" && args[3] == "--":
		mode, file, args = "lock", args[2], args[4:]
	case len(args) >= 3 && args[0] == "diff" && args[2] == "--":
		mode, file, args = "diff", args[1], args[3:]
	default:
		return fmt.Errorf("usage: gopeer lock -o FILE -- CMD ARGS... | gopeer diff FILE -- CMD ARGS...")
	}
	if len(args) == 0 {
		return fmt.Errorf("no server command")
	}
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "gopeer", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(args[0], args[1:]...)}, nil)
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	defer session.Close()
	hashes := map[string]string{}
	params := &mcp.ListToolsParams{}
	for {
		page, err := session.ListTools(ctx, params)
		if err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		for _, t := range page.Tools {
			b, err := json.Marshal(t)
			if err != nil {
				return fmt.Errorf("tool %s: %w", t.Name, err)
			}
			sum := sha256.Sum256(b)
			hashes[t.Name] = hex.EncodeToString(sum[:])
		}
		if page.NextCursor == "" {
			break
		}
		params.Cursor = page.NextCursor
	}
	if mode == "lock" {
		b, err := json.MarshalIndent(hashes, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(file, b, 0o644)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var pinned map[string]string
	if err := json.Unmarshal(data, &pinned); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	drift := 0
	for name, h := range hashes {
		if pinned[name] != h {
			fmt.Println("changed or added:", name)
			drift++
		}
	}
	for name := range pinned {
		if _, ok := hashes[name]; !ok {
			fmt.Println("removed:", name)
			drift++
		}
	}
	if drift > 0 {
		os.Exit(1)
	}
	fmt.Printf("ok: %d tools match\n", len(hashes))
	return nil
}
