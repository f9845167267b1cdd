// Command crawlcheck-issuer is the signing service an operator runs
// (docs/issuer.md): signed lockfiles of live MCP servers, signed lock checks
// and preflight decisions, their replay, and the key directory hosts follow
// through rotation.
//
//	crawlcheck-issuer keys init      --dir DIR [--issuer NAME]
//	crawlcheck-issuer keys rotate    --dir DIR [--overlap 24h]
//	crawlcheck-issuer keys retire    --dir DIR [--kid KID]
//	crawlcheck-issuer keys directory --dir DIR
//	crawlcheck-issuer operator-token --dir DIR [--file FILE]
//	crawlcheck-issuer tenant-token   --dir DIR --tenant ID [--revoke]
//	crawlcheck-issuer serve --dir DIR [--listen 127.0.0.1:8443] [--store sqlite:FILE | postgres://…]
//	                        [--allow-private CIDR]... [--allow-http] [--lifetime 5m]
//	                        [--operator-token-file DIR/operator-token.sha256] [--resign-every 1m]
//	                        [--anonymous-locks]
//	                        [--sweep=true] [--sweep-concurrency 4] [--sweep-host-gap 30s]
//	crawlcheck-issuer sweep add     --dir DIR --url URL [--interval 6h] [--owner operator|pilot:ID]
//	crawlcheck-issuer sweep list    --dir DIR [--owner OWNER]
//	crawlcheck-issuer sweep changes --dir DIR [--url URL] [--since 168h]
//
// serve prints its base URL (http://HOST:PORT) alone on the first line of
// stdout, then serves until SIGINT or SIGTERM, when it stops accepting and
// finishes the requests in flight. Logs go to stderr. The store defaults to
// sqlite:DIR/issuer.db, beside the keys.
//
// Exit status: 0 done, 1 a failure, 2 a usage error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/core/memo"
	"github.com/crawlcheck/verifier/internal/issuer/fetch"
	"github.com/crawlcheck/verifier/internal/issuer/keys"
	"github.com/crawlcheck/verifier/internal/issuer/service"
	"github.com/crawlcheck/verifier/internal/issuer/store"
	"github.com/crawlcheck/verifier/internal/issuer/sweep"
)

const usage = `usage:
  crawlcheck-issuer keys init      --dir DIR [--issuer NAME]
  crawlcheck-issuer keys rotate    --dir DIR [--overlap 24h]
  crawlcheck-issuer keys retire    --dir DIR [--kid KID]
  crawlcheck-issuer keys directory --dir DIR
  crawlcheck-issuer operator-token --dir DIR [--file FILE]
  crawlcheck-issuer tenant-token   --dir DIR --tenant ID [--revoke]
  crawlcheck-issuer serve --dir DIR [--listen 127.0.0.1:8443] [--store sqlite:FILE | postgres://...]
                          [--allow-private CIDR]... [--allow-http] [--lifetime 5m]
                          [--operator-token-file DIR/operator-token.sha256] [--resign-every 1m]
                          [--anonymous-locks]
                          [--sweep=true] [--sweep-concurrency 4] [--sweep-host-gap 30s]
  crawlcheck-issuer sweep add     --dir DIR --url URL [--interval 6h] [--owner operator|pilot:ID]
  crawlcheck-issuer sweep list    --dir DIR [--owner OWNER]
  crawlcheck-issuer sweep changes --dir DIR [--url URL] [--since 168h]
  crawlcheck-issuer version (or --version)
`

// errUsage is a command line that is not one of the forms above.
var errUsage = errors.New("usage")

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	err := dispatch(args, stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage), errors.Is(err, flag.ErrHelp):
		if !errors.Is(err, flag.ErrHelp) && err != errUsage {
			fmt.Fprintln(stderr, "crawlcheck-issuer:", err)
		}
		fmt.Fprint(stderr, usage)
		return 2
	default:
		fmt.Fprintln(stderr, "crawlcheck-issuer:", err)
		return 1
	}
}

func dispatch(args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) >= 2 && args[0] == "keys":
		return keysCmd(args[1], args[2:], stdout, stderr)
	case len(args) >= 1 && args[0] == "operator-token":
		return operatorToken(args[1:], stdout, stderr)
	case len(args) >= 1 && args[0] == "tenant-token":
		return tenantToken(args[1:], stdout, stderr)
	case len(args) >= 1 && args[0] == "serve":
		return serve(args[1:], stdout, stderr)
	case len(args) >= 2 && args[0] == "sweep":
		return sweepCmd(args[1], args[2:], stdout, stderr)
	case len(args) == 1 && (args[0] == "version" || args[0] == "--version"):
		printVersion(stdout)
		return nil
	}
	return errUsage
}

// releaseVersion and releaseCommit are stamped by make release with
// -ldflags=-X (the CHANGELOG's version, git rev-parse HEAD), as the CLI's
// are: a release is built with -buildvcs=false, so they are its only record
// of what it was built from.
var releaseVersion, releaseCommit string

// printVersion names the version and commit an operator reports a fault
// against: the stamped ones, else what the build info has (a go build in a
// clone has the commit; go test and go run -trimpath have neither).
func printVersion(w io.Writer) {
	version, commit := "(devel)", "unknown (built without version control information)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				commit = s.Value
			}
		}
	}
	if releaseVersion != "" {
		version = releaseVersion
	}
	if releaseCommit != "" {
		commit = releaseCommit
	}
	fmt.Fprintf(w, "crawlcheck-issuer %s\ncommit  %s\ngo      %s %s/%s\n", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func flags(name string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the key directory")
	return fs, dir
}

func parse(fs *flag.FlagSet, dir *string, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected %q", errUsage, fs.Arg(0))
	}
	if *dir == "" {
		return fmt.Errorf("%w: --dir is required", errUsage)
	}
	return nil
}

func keysCmd(verb string, args []string, stdout, stderr io.Writer) error {
	fs, dir := flags("keys "+verb, stderr)
	now := time.Now()
	switch verb {
	case "init":
		host, _ := os.Hostname()
		issuer := fs.String("issuer", host, "the issuer's name, in every receipt and the key directory")
		if err := parse(fs, dir, args); err != nil {
			return err
		}
		st, err := keys.Init(*dir, *issuer, now)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "issuer %s: key %s active\n", st.Issuer, st.Keys[0].KID)
	case "rotate":
		overlap := fs.Duration("overlap", 24*time.Hour, "how long the keys rotated out stay active")
		if err := parse(fs, dir, args); err != nil {
			return err
		}
		st, err := keys.Rotate(*dir, *overlap, now)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "key %s active and signing; the keys before it retire after %s\n",
			st.Keys[len(st.Keys)-1].KID, now.Add(*overlap).UTC().Format(time.RFC3339))
	case "retire":
		kid := fs.String("kid", "", "the key to retire now (default: every key whose overlap has ended)")
		if err := parse(fs, dir, args); err != nil {
			return err
		}
		_, done, err := keys.Retire(*dir, *kid, now)
		if err != nil {
			return err
		}
		if len(done) == 0 {
			fmt.Fprintln(stdout, "no key is due to retire")
		}
		for _, k := range done {
			fmt.Fprintf(stdout, "key %s retired\n", k)
		}
	case "directory":
		if err := parse(fs, dir, args); err != nil {
			return err
		}
		st, err := keys.Load(*dir)
		if err != nil {
			return err
		}
		stdout.Write(st.Directory(now))
	default:
		return fmt.Errorf("%w: no keys command %q", errUsage, verb)
	}
	return nil
}

// prefixes is a repeatable --allow-private flag.
type prefixes []netip.Prefix

func (p *prefixes) String() string { return fmt.Sprint(*p) }

func (p *prefixes) Set(v string) error {
	pr, err := netip.ParsePrefix(v)
	if err != nil {
		a, aerr := netip.ParseAddr(v)
		if aerr != nil {
			return fmt.Errorf("not a CIDR prefix or an address: %q", v)
		}
		pr = netip.PrefixFrom(a, a.BitLen())
	}
	*p = append(*p, pr.Masked())
	return nil
}

func serve(args []string, stdout, stderr io.Writer) error {
	fs, dir := flags("serve", stderr)
	listen := fs.String("listen", "127.0.0.1:8443", "address to serve HTTP on (put TLS in front)")
	storeSpec := fs.String("store", "", "sqlite:FILE or a postgres:// URL (default sqlite:DIR/issuer.db)")
	allowHTTP := fs.Bool("allow-http", false, "read plain http endpoints, not only https")
	lifetime := fs.Duration("lifetime", 5*time.Minute, "how long a receipt is valid")
	readLimit := fs.Duration("read-limit", 10*time.Second, "how long reading a live server may take")
	var allow prefixes
	fs.Var(&allow, "allow-private", "a CIDR prefix to read despite the deny list (repeatable), for private deployments")
	sweepOn := fs.Bool("sweep", true, "re-read the endpoints registered for the registry sweep (crawlcheck-issuer sweep add)")
	sweepConc := fs.Int("sweep-concurrency", sweep.DefaultConcurrency, "hosts the sweep reads at once")
	sweepGap := fs.Duration("sweep-host-gap", sweep.DefaultHostGap, "the least time between two sweep readings of one host")
	resignEvery := fs.Duration("resign-every", time.Minute, "how often corrections not signed by the key that signs now are re-signed with it (a rotation)")
	memLimit := fs.Int64("memory-limit-mib", 384, "the heap the collector keeps the service under (GOMEMLIMIT in the environment wins; 0: none)")
	memoMiB := fs.Int64("memo-mib", memo.IssuerLimit>>20, "the bytes the core's memos may keep between checks, in MiB (0: none; docs/abi.md, State)")
	opFile := fs.String("operator-token-file", "", "the SHA-256 of the token that publishes corrections (default DIR/"+operatorTokenFile+" if present; none: no corrections)")
	anonLocks := fs.Bool("anonymous-locks", false, "sign lockfiles of servers this service reads (GET /api/v1/mcp/lock) for clients without a token too (docs/issuer.md, Trust model)")
	if err := parse(fs, dir, args); err != nil {
		return err
	}
	// The issuer checks many clients' lists against their lockfiles all
	// day: a budget for the core's memos larger than an SDK instance's.
	core.SetMemoLimit(*memoMiB << 20)
	named := *opFile != ""
	if !named {
		*opFile = filepath.Join(*dir, operatorTokenFile)
	}
	opHash, err := readOperatorHash(*opFile, named)
	if err != nil {
		return err
	}
	tenants, err := readTenantHashes(filepath.Join(*dir, tenantTokenFile))
	if err != nil {
		return err
	}
	if *storeSpec == "" {
		*storeSpec = "sqlite:" + filepath.Join(*dir, "issuer.db")
	}
	// The service allocates per request (a check's 100 KB body, its 50 KB
	// receipt) and keeps little alive: at the collector's default (GOGC=100)
	// collecting was a tenth of a check's CPU. 400 lets the heap grow to five
	// times the live data, which is small; GOGC in the environment wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	// GOGC=400 lets the heap grow to five times what is live, and under
	// attack what is live is large (four readings of 64 MiB pages at once):
	// the memory limit makes the collector work harder as the heap nears
	// it, instead of the process growing past what the host gives it
	// (issue 37: RSS under 512 MiB under make attack's shapes).
	if os.Getenv("GOMEMLIMIT") == "" && *memLimit > 0 {
		debug.SetMemoryLimit(*memLimit << 20)
	}
	logger := log.New(stderr, "crawlcheck-issuer: ", log.LstdFlags|log.LUTC|log.Lmsgprefix)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	live, err := keys.Open(*dir, time.Now())
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, *storeSpec)
	if err != nil {
		return err
	}
	defer st.Close()
	// --allow-private is the operator's: only its token's readings, and the
	// endpoints it registered, reach those ranges (docs/issuer.md, Trust
	// model); everybody else's readings go to public addresses alone.
	fetcher := fetch.New(fetch.Policy{AllowHTTP: *allowHTTP})
	var opFetcher *fetch.Fetcher
	if len(allow) > 0 {
		opFetcher = fetch.New(fetch.Policy{AllowHTTP: *allowHTTP, AllowPrivate: allow})
	}
	svc, err := service.New(ctx, service.Config{
		Keys: live, Store: st, Lifetime: *lifetime, ReadLimit: *readLimit, Logger: logger, Fetch: fetcher, OperatorFetch: opFetcher,
		OperatorTokenSHA256: opHash, TenantTokens: tenants, AnonymousLocks: *anonLocks,
	})
	if err != nil {
		return err
	}
	if ss, ok := store.SweepOf(st); ok && *sweepOn {
		sw, err := sweep.New(sweep.Config{Store: ss, Fetch: fetcher, OperatorFetch: opFetcher, Concurrency: *sweepConc, HostGap: *sweepGap, ReadLimit: *readLimit, Logger: logger, Metrics: svc.Metrics()})
		if err != nil {
			return err
		}
		go sw.Run(ctx)
	}
	if *resignEvery <= 0 {
		return fmt.Errorf("%w: --resign-every must be positive", errUsage)
	}
	go svc.RunResign(ctx, *resignEvery, logger.Printf)
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(stdout, "http://"+ln.Addr().String()); err != nil {
		return err
	}
	logger.Printf("serving on %s, store %s, reading %s endpoints%s; %s", ln.Addr(), redact(*storeSpec),
		map[bool]string{true: "http and https", false: "https"}[*allowHTTP], allowText(allow),
		map[bool]string{true: "corrections with the operator token of " + *opFile, false: "no corrections (no operator token)"}[opHash != ""])
	hs := &http.Server{
		Handler:           svc.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      90 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          logger,
	}
	go prune(ctx, svc, logger)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(service.ProblemListener(ln)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Print("shutting down: finishing the requests in flight")
	sctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// prune deletes expired nonces once a minute.
func prune(ctx context.Context, svc *service.Service, logger *log.Logger) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := svc.Prune(ctx); err != nil && ctx.Err() == nil {
				logger.Printf("pruning nonces: %v", err)
			}
		}
	}
}

// redact hides a password in a store URL.
func redact(spec string) string {
	if i := strings.Index(spec, "://"); i >= 0 {
		if at := strings.Index(spec[i+3:], "@"); at >= 0 {
			return spec[:i+3] + "…@" + spec[i+3+at+1:]
		}
	}
	return spec
}

func allowText(p prefixes) string {
	if len(p) == 0 {
		return ""
	}
	return ", allowing " + p.String()
}
