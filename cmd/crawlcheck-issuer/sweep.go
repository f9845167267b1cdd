package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/crawlcheck/verifier/core/textsafe"
	"github.com/crawlcheck/verifier/internal/issuer/fetch"
	"github.com/crawlcheck/verifier/internal/issuer/store"
	"github.com/crawlcheck/verifier/internal/issuer/sweep"
)

// sweepCmd registers endpoints for the registry sweep and lists what it
// holds, on the store serve uses (docs/issuer.md, The registry sweep). An
// operator registers here, on the machine; serve re-reads them.
func sweepCmd(verb string, args []string, stdout, stderr io.Writer) error {
	fs, dir := flags("sweep "+verb, stderr)
	storeSpec := fs.String("store", "", "sqlite:FILE or a postgres:// URL (default sqlite:DIR/issuer.db)")
	ctx := context.Background()
	open := func() (store.Store, store.SweepStore, error) {
		if *storeSpec == "" {
			*storeSpec = "sqlite:" + filepath.Join(*dir, "issuer.db")
		}
		st, err := store.Open(ctx, *storeSpec)
		if err != nil {
			return nil, nil, err
		}
		ss, ok := store.SweepOf(st)
		if !ok {
			st.Close()
			return nil, nil, fmt.Errorf("store %s keeps no sweep", redact(*storeSpec))
		}
		return st, ss, nil
	}
	show := textsafe.Escape
	switch verb {
	case "add":
		url := fs.String("url", "", "the MCP endpoint to re-read (required)")
		interval := fs.Duration("interval", sweep.DefaultInterval, "how often it is re-read, before a jitter of ±10%")
		owner := fs.String("owner", sweep.OwnerOperator, "who registered it: operator, or pilot:<id> for a pilot's own server")
		allowHTTP := fs.Bool("allow-http", false, "accept a plain http endpoint (serve must allow http too)")
		if err := parse(fs, dir, args); err != nil {
			return err
		}
		if *url == "" {
			return fmt.Errorf("%w: --url is required", errUsage)
		}
		st, ss, err := open()
		if err != nil {
			return err
		}
		defer st.Close()
		sw, err := sweep.New(sweep.Config{Store: ss, Fetch: fetch.New(fetch.Policy{AllowHTTP: *allowHTTP})})
		if err != nil {
			return err
		}
		if err := sw.Register(ctx, *url, *owner, *interval); err != nil {
			return err
		}
		// What the store holds now: an endpoint another owner registered
		// first stays theirs, at their interval.
		es, err := ss.SweepEndpoints(ctx, "")
		if err != nil {
			return err
		}
		for _, e := range es {
			if e.URL == *url {
				fmt.Fprintf(stdout, "%s: swept every %s for %s\n", show(e.URL), e.Interval, show(e.Owner))
			}
		}
	case "list":
		owner := fs.String("owner", "", "only the endpoints of this owner")
		if err := parse(fs, dir, args); err != nil {
			return err
		}
		st, ss, err := open()
		if err != nil {
			return err
		}
		defer st.Close()
		es, err := ss.SweepEndpoints(ctx, *owner)
		if err != nil {
			return err
		}
		for _, e := range es {
			last := "never read"
			if !e.Last.IsZero() {
				last = "read " + e.Last.Format(time.RFC3339)
			}
			surface := e.Surface
			if surface == "" {
				surface = "no surface yet"
			}
			fmt.Fprintf(stdout, "%s  %s  every %s  %s, due %s  %s", show(e.URL), show(e.Owner), e.Interval, last, e.Next.Format(time.RFC3339), show(surface))
			if e.Error != "" {
				fmt.Fprintf(stdout, "  last error: %s", show(e.Error))
			}
			fmt.Fprintln(stdout)
		}
	case "changes":
		url := fs.String("url", "", "only this endpoint's changes")
		since := fs.Duration("since", 7*24*time.Hour, "how far back")
		if err := parse(fs, dir, args); err != nil {
			return err
		}
		st, ss, err := open()
		if err != nil {
			return err
		}
		defer st.Close()
		now := time.Now().UTC()
		cs, err := ss.SweepChanges(ctx, *url, now.Add(-*since), now.Add(time.Minute))
		if err != nil {
			return err
		}
		for _, c := range cs {
			fmt.Fprintf(stdout, "%s  %s  %s  %.12s -> %.12s  %s\n", c.SeenAt.Format(time.RFC3339), show(c.URL), c.Kind, c.From, c.To, show(string(c.Detail)))
		}
	default:
		return fmt.Errorf("%w: no sweep command %q", errUsage, verb)
	}
	return nil
}
