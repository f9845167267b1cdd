// Command issuer is the test issuer every end-to-end test of signed
// evidence starts, whatever its language: it answers lock checks and
// preflight decisions with receipts signed by the test keys, serves the rule
// tables and its key directory, and misbehaves as its knobs say (package
// service, docs/receipts.md).
//
//	issuer [--listen 127.0.0.1:0] [--keys testdata/keys] [--late] [--key active|retired|unknown]
//	       [--subject URL] [--reuse-nonce] [--down 503|500|hang|garbage|huge] [--lifetime 5m] [--now RFC3339]
//
// It prints its base URL (http://HOST:PORT) alone on one line of stdout,
// then serves until SIGINT or SIGTERM. Logs go to stderr. The knobs can be
// changed while it runs: POST /admin/knobs.
//
// --now stops its clock at one instant, the one a test gives its host (the
// CLI's --now, a preflight Config.Now): receipts are then issued at a time
// the host agrees with, and stay inside the test keys' validity window on
// whatever day the tests run.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/crawlcheck/verifier/hosttest/issuer/service"
	"github.com/crawlcheck/verifier/internal/listening"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve HTTP on")
	keys := flag.String("keys", "testdata/keys", "directory of the test keys and the test key directory")
	lifetime := flag.Duration("lifetime", 0, "how long a receipt is valid (default 5m)")
	nowFlag := flag.String("now", "", "issue every receipt at this RFC 3339 time (default: the clock)")
	var k service.Knobs
	flag.BoolVar(&k.Late, "late", false, "answer with receipts that expired before they were sent")
	flag.StringVar(&k.Key, "key", "", "sign with the active (default), retired or unknown key")
	flag.StringVar(&k.Subject, "subject", "", "name this endpoint as every receipt's subject")
	flag.BoolVar(&k.ReuseNonce, "reuse-nonce", false, "give every receipt the same nonce")
	flag.StringVar(&k.Down, "down", "", "answer every API request with 503, 500, hang, garbage (200, not JSON) or huge (200, past the hosts' issuer answer limit)")
	flag.Parse()
	logger := log.New(os.Stderr, "issuer: ", log.Lmsgprefix)
	var now func() time.Time
	if *nowFlag != "" {
		t, err := time.Parse(time.RFC3339Nano, *nowFlag)
		if err != nil {
			logger.Fatalf("--now: %v", err)
		}
		now = func() time.Time { return t }
	}
	if err := run(*listen, *keys, *lifetime, now, k, logger); err != nil {
		logger.Fatal(err)
	}
}

func run(listen, keysDir string, lifetime time.Duration, now func() time.Time, k service.Knobs, logger *log.Logger) error {
	keys, dir, err := service.LoadTestKeys(keysDir)
	if err != nil {
		return fmt.Errorf("--keys: %w", err)
	}
	iss, err := service.New(service.Config{Keys: keys, Directory: dir, Lifetime: lifetime, Now: now, Knobs: k, Logger: logger})
	if err != nil {
		return err
	}
	defer iss.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Closed, not shut down, at the signal: a request held by the hang knob
	// would hold a graceful shutdown open forever.
	return listening.Serve(ctx, listen, func(hostport string) string { return "http://" + hostport }, iss.Handler())
}
