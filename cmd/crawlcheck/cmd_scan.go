package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/crawlcheck/verifier/internal/preflight"
)

// cmdScan prints the approval scan of a tool list (docs/scan.md): the
// findings make_lock would pin in scan_at_approval. Exit 1 when the scan is
// at or above --fail-on, for CI.
func cmdScan(c *cli, args []string) error {
	fs := c.flagSet("scan")
	var src sourceFlags
	src.register(fs)
	failOn := fs.String("fail-on", "high", "exit 1 when a finding is at or above `SEVERITY`: low, medium, high, or off")
	asJSON := fs.Bool("json", false, "print the scan itself (canonical JSON, one line)")
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
	if *failOn != "off" && (*failOn == "none" || !slices.Contains(preflight.ScanSeverities(), *failOn)) {
		return usagef("--fail-on %q: low, medium, high or off", *failOn)
	}
	tg, ok, err := src.target()
	if err != nil {
		return err
	}
	if !ok {
		return usagef("give --tools, --server, --url or --sse")
	}
	obs, err := tg.observe(c)
	if err != nil {
		return err
	}
	s, err := preflight.ScanTools(obs, nil)
	if err != nil {
		return lockRefused(tg, err)
	}
	if *asJSON {
		machine(c.stdout, s.Raw)
	} else {
		printScan(c.stdout, "scan", s)
	}
	if *failOn != "off" && s.AtLeast(*failOn) {
		return blocked("the scan is %s (--fail-on %s)", s.Severity, *failOn)
	}
	return nil
}

// printScan writes a scan for a person: a summary line, then each finding
// under its tool and part, with the matched text. Everything that came from
// a server or a lockfile goes through textsafe.Escape.
func printScan(w io.Writer, title string, s preflight.Scan) {
	rules := s.RulesSHA256
	if len(rules) > 12 {
		rules = rules[:12]
	}
	say(w, title+": %s", s.Severity) // title: this program's own text
	if n := s.Listed(); n > 0 {
		names := make([]string, 0, len(s.Kinds))
		for k := range s.Kinds {
			names = append(names, k)
		}
		slices.Sort(names)
		kinds := make([]string, 0, len(names))
		for _, k := range names {
			kinds = append(kinds, k+" "+strconv.Itoa(s.Kinds[k]))
		}
		say(w, ", %d finding(s): %s", n, strings.Join(kinds, ", "))
	}
	say(w, " (rules %s)\n", rules)
	tool, part := "", ""
	for i, f := range s.Findings {
		if i == 0 || f.Tool != tool {
			tool, part = f.Tool, ""
			if f.Tool == "" && f.Part == "/instructions" {
				// The core's findings in the server's instructions have no
				// tool: name what they are in, not a blank line.
				say(w, "  (the server's instructions)\n")
			} else {
				say(w, "  %s\n", f.Tool)
			}
		}
		if f.Part != part {
			part = f.Part
			say(w, "    %s\n", f.Part)
		}
		where := "at " + strconv.Itoa(f.Offset)
		if f.Key {
			where = "in the member name, " + where
		}
		say(w, "      %-6s %-36s %s: \"%s\"", f.Severity, f.Rule, where, f.Span)
		if f.Length > len(f.Span) {
			say(w, " (%d of %d bytes)", len(f.Span), f.Length)
		}
		if f.Hidden != "" {
			say(w, ", spelling \"%s\"", f.Hidden)
		}
		if f.Kind == "homoglyph" {
			say(w, ", beyond ASCII: %s", codePoints(f.Span))
		}
		say(w, "\n")
	}
	if more := s.Listed() - len(s.Findings); more > 0 {
		say(w, "  … and %d more finding(s), less severe, not listed\n", more)
	}
}

// codePoints names the characters of s beyond ASCII, so that a look-alike
// letter is told from the one it imitates.
func codePoints(s string) string {
	var cps []string
	for _, r := range s {
		if r >= 0x80 {
			cps = append(cps, fmt.Sprintf("U+%04X", r))
		}
	}
	return strings.Join(cps, " ")
}

// changedTools are the tools of a record a person re-approving must read:
// those an observation names that the observed list offers (rec.Tools), so
// added or changed, whichever member changed; a removed tool is not
// offered. No observation name is read here: the core's record says which
// tools its observations are about.
func changedTools(rec preflight.Record) []string {
	var names []string
	for _, o := range rec.Observations {
		if _, offered := rec.Tools[o.Tool]; offered && o.Tool != "" && !slices.Contains(names, o.Tool) {
			names = append(names, o.Tool)
		}
	}
	slices.Sort(names)
	return names
}

// printScanOf writes the scan of the named tools of an observation, titled;
// nothing when no tool is named. A list the scan cannot read (not whole,
// malformed) is said in one line: the check's record already names why.
func printScanOf(w io.Writer, title string, obs preflight.Observation, names []string) {
	if len(names) == 0 {
		return
	}
	s, err := preflight.ScanTools(obs, names)
	if err != nil {
		say(w, title+": not run: %s\n", err)
		return
	}
	printScan(w, title, s)
}
