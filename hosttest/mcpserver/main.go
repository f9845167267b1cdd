// Command mcpserver is the scenario MCP server every end-to-end test starts,
// whatever its language. It serves the tools of a scenario file (see
// package scenario and docs/mcpserver.md) over stdio, or over streamable HTTP
// with --listen.
//
//	mcpserver --scenario FILE [--tools-raw FILE] [--listen 127.0.0.1:0] [--trigger PATH]
//
// With --listen it prints the endpoint URL (http://HOST:PORT/mcp) alone on
// one line of stdout, then serves until SIGINT or SIGTERM. Logs go to stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/crawlcheck/verifier/hosttest/mcpserver/scenario"
	"github.com/crawlcheck/verifier/internal/listening"
)

func main() {
	scenarioPath := flag.String("scenario", "", "scenario file (JSON); without it, no tools and default knobs")
	toolsRaw := flag.String("tools-raw", "", "JSON array of tool objects served byte-exact, replacing the scenario's tools")
	listen := flag.String("listen", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:0) instead of stdio")
	trigger := flag.String("trigger", "", "poll this path for a mutation trigger file (see docs/mcpserver.md)")
	flag.Parse()
	logger := log.New(os.Stderr, "mcpserver: ", log.Lmsgprefix)
	if err := run(*scenarioPath, *toolsRaw, *listen, *trigger, logger); err != nil {
		logger.Fatal(err)
	}
}

func run(scenarioPath, toolsRaw, listen, trigger string, logger *log.Logger) error {
	file := &scenario.File{}
	var err error
	if scenarioPath != "" {
		if file, err = scenario.Load(scenarioPath); err != nil {
			return err
		}
	} else if file, err = scenario.Parse([]byte(`{"tools":[]}`)); err != nil {
		return err
	}
	if toolsRaw != "" {
		data, err := os.ReadFile(toolsRaw)
		if err != nil {
			return fmt.Errorf("reading --tools-raw: %w", err)
		}
		if file.Tools, err = scenario.ParseToolsRaw(data); err != nil {
			return fmt.Errorf("--tools-raw %s: %w", toolsRaw, err)
		}
	}
	srv := scenario.New(file, logger)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if trigger != "" {
		go srv.WatchTrigger(ctx, trigger)
	}
	if listen == "" {
		return srv.ServeStdio(ctx, os.Stdin, os.Stdout)
	}
	// Closed, not shut down, at the signal: a hung handshake (the hang
	// knob) would hold a graceful shutdown open forever.
	return listening.Serve(ctx, listen, scenario.URL, srv.Handler())
}
