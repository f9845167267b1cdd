package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/crawlcheck/verifier/internal/atomicfile"
	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/preflight"
	"github.com/mattn/go-isatty"
)

// cmdApprove re-approves a server's tools as a person's act: it shows what
// changed against the lockfile, asks, and writes the new lockfile.
func cmdApprove(c *cli, args []string) error {
	fs := c.flagSet("approve")
	lockPath := fs.String("lock", "", "the approved lockfile `FILE` (required); rewritten unless -o")
	var src sourceFlags
	src.register(fs)
	serverName := fs.String("server-name", "", "which server of an agentgate.lock to approve (default: its only one)")
	signKey := fs.String("sign-key", "", "sign the new lockfile with the operator key in `KEYFILE`")
	yes := fs.Bool("yes", false, "approve without asking (for scripts: the person approved elsewhere)")
	approveFeatures := fs.Bool("features", false, "with --yes: approve the changed prompts, resources, resource templates and UI templates too, as offered now")
	out := fs.String("o", "", "write the new lockfile to `FILE` (- for stdout) instead of replacing --lock")
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
	if *lockPath == "" {
		return usagef("--lock is required")
	}
	dest := *lockPath
	if *out != "" {
		dest = *out
	}
	if err := checkOut(dest); err != nil {
		return err
	}
	now, err := c.clock()
	if err != nil {
		return err
	}
	opts := preflight.ApproveOptions{Now: now, PinObserved: true}
	if *signKey != "" {
		if opts.SigningKey, err = readSigningKey(*signKey); err != nil {
			return err
		}
	}
	settings := preflight.Settings{ServerName: *serverName}
	lock, tg, err := loadLock(*lockPath, &src, now, settings)
	if err != nil {
		return err
	}
	info, err := preflight.ReadLock(lock, now, settings)
	if err != nil {
		return err
	}
	if info.Format == preflight.FormatAgentgate && info.ServerName == "" {
		return usagef("the agentgate.lock has servers %s: name one with --server-name", strings.Join(info.Servers, ", "))
	}
	if *approveFeatures && !*yes {
		return usagef("--features is for --yes: without it approve asks")
	}
	if !*yes && !isTerminal(os.Stdin) {
		return usagef("stdin is not a terminal: pass --yes to approve without asking")
	}
	obs, err := tg.observe(c)
	if err != nil {
		return err
	}
	if err := obs.FailureError(); err != nil {
		return lockRefused(tg, err)
	}
	// The person is shown every change and approves the list as a whole:
	// every changed tool is named, and the core (approve) refuses what no
	// name can approve (a list not read whole, a page it cannot parse).
	chk, err := preflight.CheckLock(lock, info.ServerName, obs)
	if err != nil {
		return err
	}
	if u := chk.Unreachable; u != nil {
		err := fmt.Errorf("the list was not read whole: %s: %s", u.Reason, u.Detail)
		if tg.live() {
			return blocked("cannot pin this server's tools: %v", err)
		}
		return err
	}
	// The lock check compares the seed's four parts alone; the continuity
	// check of the same observation also names a changed member (title,
	// _meta, …) and changed instructions, with their word diff. Every tool
	// either names is shown and approved, and the instructions with them
	// when their diff was shown: the core's approve refuses a change left
	// unnamed.
	rec, err := preflight.Check(preflight.Request{Settings: settings, Lock: lock, Observation: obs, Now: now, HandsNoTools: true})
	if err != nil {
		return err
	}
	opts.ServerName = info.ServerName
	opts.Names = slices.Concat(chk.Added, chk.Removed, chk.Modified)
	scanned := slices.Concat(chk.Added, chk.Modified)
	var instructions []diffOp
	var instructionsDetail json.RawMessage
	for _, f := range rec.Observations {
		// A changed ui:// template is approved with the prompts and
		// resources (approve_features), not by naming its tool.
		if f.Tool != "" && f.Observation != uiTemplateChanged && !slices.Contains(opts.Names, f.Tool) {
			opts.Names = append(opts.Names, f.Tool)
			scanned = append(scanned, f.Tool)
		}
		if d := instructionsDiff(f.Detail); d != nil {
			instructions, instructionsDetail = d, f.Detail
		}
	}
	opts.Instructions = instructions != nil
	newLock, err := preflight.Approve(chk.Raw, lock, obs, opts)
	if err != nil {
		return lockRefused(tg, err)
	}
	items, err := changedItems(settings, lock, obs, rec, now)
	if err != nil {
		return err
	}
	// The lockfile that approves the changed items too, made before asking
	// so a person is asked only what the core would approve; a list not
	// read whole (the core's bad_request) leaves them unapprovable.
	var withItems []byte
	var itemsRefused error
	if len(items) > 0 {
		o := opts
		o.Features = true
		withItems, itemsRefused = preflight.Approve(chk.Raw, lock, obs, o)
	}
	var d diffResult
	req := map[string]any{"old": corecall.Text(lock), "new": map[string]any{"pages": pageTexts(obs)}}
	if info.ServerName != "" {
		req["server_name"] = info.ServerName
	}
	if err := corecall.Into("diff", req, &d); err != nil {
		return err
	}
	// With -o - the lockfile is stdout; what a person reads goes to stderr.
	show := c.stdout
	if *out == "-" {
		show = c.stderr
	}
	// A moved tag or another tarball is the server's change, not the
	// tools': said in the record's terms, never as "no change".
	relaunch := launchedChanged(rec)
	noChange := "no change"
	if relaunch {
		noChange = "no tool changed"
	}
	printDiffNoting(show, d, noChange)
	printLaunchedChange(show, rec, relockCommand(tg, *lockPath))
	for _, f := range rec.Observations {
		if f.Tool != "" && !slices.Contains(slices.Concat(chk.Added, chk.Removed, chk.Modified), f.Tool) {
			say(show, "changed   %s (%s)\n", f.Tool, f.Observation)
		}
	}
	printScanOf(show, "\nscan of the tools to approve", obs, scanned)
	printChangedItems(show, items, obs, relockCommand(tg, *lockPath))
	if itemsRefused != nil {
		say(show, "these cannot be approved: %s\n", itemsRefused)
	}
	question := "Approve these tools? [y/N] "
	if instructions != nil {
		say(show, "\nthe server's instructions changed:\n")
		printClassesOf(show, instructionsDetail)
		printTextDiff(show, instructions)
		if s, err := preflight.ScanInstructions(obs); err != nil {
			say(show, "scan of the instructions to approve: not run: %s\n", err)
		} else {
			printScan(show, "scan of the instructions to approve", s)
		}
		question = "Approve these tools and the server's instructions? [y/N] "
	}
	approvedItems := *approveFeatures && withItems != nil
	if !*yes {
		in := bufio.NewReader(c.stdin)
		if !askYes(c, in, question) {
			return blocked("not approved; %s is unchanged", *lockPath)
		}
		if withItems != nil {
			approvedItems = askYes(c, in, "Approve the prompts, resources and templates above too, as offered now? [y/N] ")
		}
	}
	if approvedItems {
		newLock = withItems
	}
	if *out == "-" {
		_, err := c.stdout.Write(newLock)
		return err
	}
	if err := atomicfile.Write(dest, newLock, 0o644); err != nil {
		return err
	}
	written, err := preflight.ReadLock(newLock, now, preflight.Settings{})
	if err != nil {
		return err
	}
	say(c.stdout, "approved: wrote %s (%d tools, sha256 %s)\n", dest, written.Count, written.SHA256)
	if relaunch {
		say(c.stdout, "the lockfile still pins the approved package: `%s` pins the new one\n", relockCommand(tg, dest))
	}
	switch {
	case approvedItems:
		say(c.stdout, "approved the prompts, resources and templates as offered now\n")
	case len(items) > 0:
		say(c.stdout, "the prompts, resources and templates above stay withheld\n")
	}
	return nil
}

// askYes asks a person question on stderr and reports whether the answer
// read from in is y or yes; anything else (N, an empty line, the end of
// input) is no.
func askYes(c *cli, in *bufio.Reader, question string) bool {
	say(c.stderr, "%s", question)
	answer, _ := in.ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(answer))
	return a == "y" || a == "yes"
}

// instructionsDiff is the word diff of the server's instructions an
// observation's detail carries (instructions_changed), or nil.
func instructionsDiff(detail json.RawMessage) []diffOp {
	var d struct {
		InstructionsDiff []diffOp `json:"instructions_diff"`
	}
	if len(detail) == 0 || json.Unmarshal(detail, &d) != nil {
		return nil
	}
	return d.InstructionsDiff
}

// pageTexts are the pages the new lockfile was made from, for diff's side
// {"pages": [...]}: each page's text, a member the core reads as that page
// (no bytes are spliced into a document). approve has read every page
// strictly, so each is valid UTF-8 and a Go string carries it unchanged.
func pageTexts(obs preflight.Observation) []string {
	out := make([]string, len(obs.Pages))
	for i, page := range obs.Pages {
		out[i] = string(page)
	}
	return out
}

// isTerminal reports whether f is a character device: a person can answer.
func isTerminal(f *os.File) bool {
	// A terminal, not any character device: /dev/null is one too, and
	// approve < /dev/null must be the usage error docs/cli.md names
	// (exit 2, before any work), not a question nobody can answer.
	return isatty.IsTerminal(f.Fd())
}
