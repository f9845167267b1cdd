package main

import (
	"github.com/crawlcheck/verifier/internal/atomicfile"
	"github.com/crawlcheck/verifier/internal/report"
)

// cmdReport writes the weekly report of a record log (internal/report,
// docs/report.md): the same HTML the issuer serves a pilot, without the
// sweep's side. With --json, the report itself.
func cmdReport(c *cli, args []string) error {
	fs := c.flagSet("report")
	week := fs.String("week", "", "the ISO `WEEK` to report, 2026-W48 (default: the week of the newest record)")
	out := fs.String("o", "", "write the report to `FILE` (default: stdout)")
	asJSON := fs.Bool("json", false, "write the report as JSON (the issuer's application/json answer) instead of HTML")
	rest, err := c.parse(fs, args, 1)
	if err != nil {
		return err
	}
	if err := checkOut(*out); err != nil {
		return err
	}
	records, err := readInput("the record log", rest[0])
	if err != nil {
		return err
	}
	r, err := report.Build(report.Input{Week: *week, Records: records})
	if err != nil {
		return err
	}
	body := r.HTML()
	if *asJSON {
		body = r.JSON()
	}
	if *out == "" {
		_, err := c.stdout.Write(body)
		return err
	}
	if err := atomicfile.Write(*out, body, 0o644); err != nil {
		return err
	}
	if !r.Chain.Valid {
		say(c.stderr, "crawlcheck: report: the record log does not verify (%s); the report says so\n", r.Chain.Reason)
	}
	say(c.stdout, "%s: %d checks in %s, %d actionable\n", *out, r.Records, r.Week, r.Actionable)
	return nil
}
