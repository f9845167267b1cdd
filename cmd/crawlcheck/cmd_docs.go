package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/crawlcheck/verifier/internal/atomicfile"
	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/preflight"
)

// cmdDiff compares a lockfile or a tool list with a tool list. Exit 1 when
// they differ.
func cmdDiff(c *cli, args []string) error {
	fs := c.flagSet("diff")
	serverName := fs.String("server-name", "", "which server of an agentgate.lock OLD is")
	asJSON := fs.Bool("json", false, "print the core's diff answer")
	rest, err := c.parse(fs, args, 2)
	if err != nil {
		return err
	}
	oldDoc, err := readInput("OLD", rest[0])
	if err != nil {
		return err
	}
	newDoc, err := readInput("NEW", rest[1])
	if err != nil {
		return err
	}
	req := map[string]any{"old": corecall.Text(oldDoc), "new": corecall.Text(newDoc)}
	if *serverName != "" {
		req["server_name"] = *serverName
	}
	raw, err := corecall.Call("diff", req)
	if err != nil {
		return err
	}
	var d diffResult
	if err := json.Unmarshal(raw, &d); err != nil {
		return fmt.Errorf("diff: decoding the answer: %w", err)
	}
	if *asJSON {
		machine(c.stdout, raw)
	} else {
		printDiff(c.stdout, d)
	}
	if !d.same() {
		return blocked("")
	}
	return nil
}

// cmdConvert converts a lockfile between the crawlcheck and agentgate
// formats, saying on stderr what the target cannot carry.
func cmdConvert(c *cli, args []string) error {
	fs := c.flagSet("convert")
	to := fs.String("to", "", "crawlcheck or agentgate (required)")
	name := fs.String("name", "", "the server's name (agentgate)")
	url := fs.String("url", "", "the server's endpoint (crawlcheck)")
	tools := fs.String("tools", "", "the tool list `FILE` an agentgate.lock pins (needed to make a crawlcheck lockfile)")
	out := fs.String("o", "", "write to `FILE` (atomically) instead of stdout")
	rest, err := c.parse(fs, args, 1)
	if err != nil {
		return err
	}
	if *to != "crawlcheck" && *to != "agentgate" {
		return usagef("--to crawlcheck or --to agentgate")
	}
	if err := checkOut(*out); err != nil {
		return err
	}
	lock, err := readInput("the lockfile", rest[0])
	if err != nil {
		return err
	}
	req := map[string]any{"lock": corecall.Text(lock), "to": *to}
	if *name != "" {
		req["name"] = *name
	}
	if *url != "" {
		req["server"] = map[string]string{"url": *url}
	}
	if *tools != "" {
		page, err := readInput("the tool list", *tools)
		if err != nil {
			return err
		}
		req["pages"] = []any{corecall.Page(page)}
	}
	if c.now != "" {
		req["approved_at"] = c.now
	}
	var res struct {
		Lock string   `json:"lock"`
		Lost []string `json:"lost"`
	}
	if err := corecall.Into("convert_lock", req, &res); err != nil {
		return err
	}
	for _, l := range res.Lost {
		say(c.stderr, "crawlcheck convert: not carried over: %s\n", l)
	}
	return writeOut(c, *out, []byte(res.Lock))
}

// cmdCanon writes the RFC 8785 canonical form of a JSON document.
func cmdCanon(c *cli, args []string) error {
	fs := c.flagSet("canon")
	rest, err := c.parse(fs, args, -1)
	if err != nil {
		return err
	}
	var doc []byte
	switch len(rest) {
	case 0:
		if doc, err = readStdin(c.stdin); err != nil {
			return err
		}
	case 1:
		if doc, err = readInput("the document", rest[0]); err != nil {
			return err
		}
	default:
		return usagef("at most one FILE")
	}
	var res struct {
		Canonical string `json:"canonical"`
	}
	if err := corecall.Into("canonicalize", map[string]any{"json": corecall.Text(doc)}, &res); err != nil {
		return err
	}
	_, err = io.WriteString(c.stdout, res.Canonical)
	return err
}

// cmdRecord verifies a continuity record, or a JSON-lines log of them (each
// record_sha256, each link). Exit 1 when anything does not verify.
func cmdRecord(c *cli, args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		args = []string{"verify", args[0]}
	}
	if len(args) == 0 || args[0] != "verify" {
		return usagef("record verify FILE")
	}
	fs := c.flagSet("record verify")
	after := fs.String("after", "", "the record_sha256 `SHA` the log's first record must follow (a log continued from a rotated one)")
	head := fs.String("head", "", "the record_sha256 `SHA` the log's last record must be (a head kept elsewhere)")
	rest, err := c.parse(fs, args[1:], 1)
	if err != nil {
		return err
	}
	data, err := readInput("the records", rest[0])
	if err != nil {
		return err
	}
	// One JSON value is one record (pretty-printed or not); anything else
	// is read as a JSON-lines log.
	if json.Valid(data) && *after == "" && *head == "" {
		var v struct {
			Valid          bool   `json:"valid"`
			RecordSHA256   string `json:"record_sha256"`
			ComputedSHA256 string `json:"computed_sha256"`
			Reason         string `json:"reason"`
		}
		if err := corecall.Into("verify_record", map[string]any{"record": corecall.Text(data)}, &v); err != nil {
			return err
		}
		if !v.Valid {
			say(c.stdout, "%s: INVALID: %s (record_sha256 %s, computed %s)\n", rest[0], v.Reason, v.RecordSHA256, v.ComputedSHA256)
			return blocked("")
		}
		say(c.stdout, "%s: valid record %s\n", rest[0], v.RecordSHA256)
		return nil
	}
	chain, err := preflight.VerifyChainAnchored(data, *after, *head)
	if err != nil {
		return err
	}
	if !chain.Valid {
		say(c.stdout, "%s: INVALID at record %d: %s\n", rest[0], chain.BrokenAt+1, chain.Reason)
		return blocked("")
	}
	from := "from its first record"
	if *after != "" {
		from = "after " + *after
	}
	say(c.stdout, "%s: valid chain of %d record(s), head %s, %s\n", rest[0], chain.Count, chain.Head, from)
	if chain.TornTail {
		say(c.stdout, "%s: a torn last line (an interrupted write) was set aside\n", rest[0])
	}
	return nil
}

// writeOut writes a document to -o FILE (atomically) or to stdout (no -o,
// or -o -).
// checkOut checks, before any work, that an output path (-o, or a file
// rewritten in place) can be written: an error names the path as given
// (issue 34, item 5). "" and "-" are stdout.
func checkOut(out string) error {
	if out == "" || out == "-" {
		return nil
	}
	return atomicfile.Check(out, false)
}

func writeOut(c *cli, out string, data []byte) error {
	if out == "" || out == "-" {
		_, err := c.stdout.Write(data)
		return err
	}
	if err := atomicfile.Write(out, data, 0o644); err != nil {
		return err
	}
	say(c.stderr, "crawlcheck: wrote %s\n", out)
	return nil
}
