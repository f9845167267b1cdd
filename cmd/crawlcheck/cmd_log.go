package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/crawlcheck/verifier/internal/atomicfile"
	"github.com/crawlcheck/verifier/internal/boundedread"
	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/preflight"
)

// maxIssuerAnswer bounds what log verify reads of the issuer: a key
// directory or a checkpoint with its consistency proof is a few KB.
const maxIssuerAnswer = 1 << 20

// cmdLog is "log verify": an auditor's check that a lockfile or receipt the
// issuer signed is in its transparency log, by the proof its signing answer
// carried (FILE.tlog-proof), and that the log the issuer serves now extends
// the checkpoint of that proof. The core decides both (log_verify).
func cmdLog(c *cli, args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		args = []string{"verify", args[0]}
	}
	if len(args) > 0 && args[0] == "monitor" {
		return cmdLogMonitor(c, args[1:])
	}
	if len(args) == 0 || args[0] != "verify" {
		return usagef("log verify --issuer URL FILE, or log monitor --issuer URL --state FILE")
	}
	fs := c.flagSet("log verify")
	issuer := fs.String("issuer", "", "the issuer's base `URL`: its key directory (/api/v1/keys) verifies the checkpoints, its log (/api/v1/log/consistency) is compared with the proof (required)")
	proofPath := fs.String("proof", "", "the tlog-proof `FILE` (default: FILE.tlog-proof)")
	rest, err := c.parse(fs, args[1:], 1)
	if err != nil {
		return err
	}
	if *issuer == "" {
		return usagef("--issuer is required")
	}
	if *proofPath == "" {
		*proofPath = rest[0] + ".tlog-proof"
	}
	doc, err := readInput("the document", rest[0])
	if err != nil {
		return err
	}
	proof, err := readInput("the proof", *proofPath)
	if err != nil {
		return err
	}
	now, err := c.clock()
	if err != nil {
		return err
	}
	base := strings.TrimSuffix(*issuer, "/")
	dir, err := c.issuerGet(base + "/api/v1/keys")
	if err != nil {
		return err
	}
	type verdict struct {
		Valid       bool
		Observation string
		Reason      string
		Detail      string
		Index       uint64
		Checkpoint  *struct {
			Origin string
			Size   uint64
			KeyID  string `json:"key_id"`
		}
	}
	req := map[string]any{"document": corecall.Text(doc), "proof": string(proof), "now": now.UTC().Format("2006-01-02T15:04:05.000Z07:00"), "key_directory": json.RawMessage(dir)}
	var v verdict
	if err := corecall.Into("log_verify", req, &v); err != nil {
		return err
	}
	if !v.Valid {
		say(c.stdout, "%s: NOT IN THE LOG: %s (%s): %s\n", rest[0], v.Observation, v.Reason, v.Detail)
		return blocked("")
	}
	say(c.stdout, "%s: included at index %d of %s, size %d (key %s)\n", rest[0], v.Index, v.Checkpoint.Origin, v.Checkpoint.Size, v.Checkpoint.KeyID)
	answer, err := c.issuerGet(base + "/api/v1/log/consistency?from=" + strconv.FormatUint(v.Checkpoint.Size, 10))
	if err != nil {
		return err
	}
	// The served checkpoint is a signed note the core verifies; the proof
	// is read out of the answer as it came by the core (consistency_answer:
	// one that holds none is no proof, and the trees of two sizes fail as
	// consistency_unavailable, never as a fork proved).
	var now2 struct {
		Checkpoint string `json:"checkpoint"`
	}
	if err := json.Unmarshal(answer, &now2); err != nil {
		return fmt.Errorf("the issuer's log: %w", err)
	}
	req["checkpoint"], req["consistency_answer"] = now2.Checkpoint, corecall.Page(answer)
	var w verdict
	if err := corecall.Into("log_verify", req, &w); err != nil {
		return err
	}
	if !w.Valid {
		say(c.stdout, "%s: THE LOG DOES NOT EXTEND THE PROOF'S CHECKPOINT: %s (%s): %s\n", rest[0], w.Observation, w.Reason, w.Detail)
		return blocked("")
	}
	// The served tree's size is the session engine's reading (log_proof):
	// the kept side when the trees differ, else the proof's own.
	size := v.Checkpoint.Size
	st, err := preflight.LogProof(string(proof), now2.Checkpoint)
	if err != nil {
		return err
	}
	if st.ConsistencyTo != 0 {
		size = st.KeptSize
	}
	say(c.stdout, "%s: the log the issuer serves now (size %d) is consistent with it\n", rest[0], size)
	return nil
}

// issuerGet reads one bounded answer of the issuer within the timeout.
func (c *cli) issuerGet(u string) ([]byte, error) {
	if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") {
		return nil, usagef("--issuer %q is not an http(s) URL", u)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the issuer: %w", err)
	}
	defer resp.Body.Close()
	body, err := boundedread.Read(resp.Body, maxIssuerAnswer)
	if err != nil {
		return nil, fmt.Errorf("the issuer: GET %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the issuer: GET %s: HTTP %d", u, resp.StatusCode)
	}
	return body, nil
}

// cmdLogMonitor is "log monitor": one poll of the issuer's log as a monitor
// makes it. The checkpoint the log serves now is verified and, against the
// one kept in --state, shown consistent by the core (log_consistency); the
// core's keep is written back. With --server, the entries added since the
// kept checkpoint whose subject is that endpoint are listed.
func cmdLogMonitor(c *cli, args []string) error {
	fs := c.flagSet("log monitor")
	issuer := fs.String("issuer", "", "the issuer's base `URL` (required)")
	state := fs.String("state", "", "the `FILE` the newest checkpoint is kept in between polls (required; created on the first)")
	server := fs.String("server", "", "list the new entries about this endpoint `URL`")
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
	if *issuer == "" || *state == "" {
		return usagef("--issuer and --state are required")
	}
	now, err := c.clock()
	if err != nil {
		return err
	}
	kept := ""
	switch _, err := os.Stat(*state); {
	case err == nil:
		data, err := readInput("the kept checkpoint", *state)
		if err != nil {
			return err
		}
		kept = string(data)
	case !errors.Is(err, iofs.ErrNotExist):
		return fmt.Errorf("the kept checkpoint: %w", err)
	}
	base := strings.TrimSuffix(*issuer, "/")
	dir, err := c.issuerGet(base + "/api/v1/keys")
	if err != nil {
		return err
	}
	// Where the poll starts is the session engine's (log_poll): the kept
	// checkpoint's tree size, or 0 with none kept.
	poll, err := preflight.LogPoll(kept)
	if err != nil {
		return fmt.Errorf("%s: the kept checkpoint does not read (move it aside): %w", *state, err)
	}
	from := poll.PollFrom
	answer, err := c.issuerGet(base + "/api/v1/log/consistency?from=" + strconv.FormatUint(from, 10))
	if err != nil {
		return err
	}
	var served struct {
		Checkpoint  string   `json:"checkpoint"`
		Consistency []string `json:"consistency"`
	}
	if err := json.Unmarshal(answer, &served); err != nil {
		return fmt.Errorf("the issuer's log: %w", err)
	}
	req := map[string]any{"new": served.Checkpoint, "consistency": served.Consistency, "now": now.UTC().Format("2006-01-02T15:04:05.000Z07:00"), "key_directory": json.RawMessage(dir)}
	if kept != "" {
		req["checkpoint"] = kept
	}
	var v struct {
		Valid       bool
		Observation string
		Reason      string
		Detail      string
		Keep        string
		Checkpoint  *struct {
			Origin string
			Size   uint64
		}
	}
	if err := corecall.Into("log_consistency", req, &v); err != nil {
		return err
	}
	if !v.Valid {
		say(c.stdout, "log: %s (%s): %s\n", v.Observation, v.Reason, v.Detail)
		return blocked("")
	}
	if err := atomicfile.Write(*state, []byte(v.Keep), 0o644); err != nil {
		return err
	}
	say(c.stdout, "log %s: %d entries, consistent with the %d kept\n", v.Checkpoint.Origin, v.Checkpoint.Size, from)
	if *server == "" || v.Checkpoint.Size <= from {
		return nil
	}
	var ep struct{ Endpoint string }
	if err := corecall.Into("endpoint", map[string]any{"url": *server}, &ep); err != nil {
		return err
	}
	for start := from - from%256; start < v.Checkpoint.Size; start += 256 {
		width := min(v.Checkpoint.Size-start, 256)
		bundle, err := c.issuerGet(base + entriesPath(start/256, width))
		if err != nil {
			return err
		}
		for i := start; len(bundle) >= 2; i++ {
			n := int(bundle[0])<<8 | int(bundle[1])
			if len(bundle) < 2+n {
				return fmt.Errorf("the issuer's entry bundle at %d is cut short", start)
			}
			e := bundle[2 : 2+n]
			bundle = bundle[2+n:]
			var entry struct {
				Type, SHA256, Subject string
			}
			if i < from || json.Unmarshal(e, &entry) != nil || entry.Subject != ep.Endpoint {
				continue
			}
			say(c.stdout, "  %d %s %s\n", i, entry.Type, entry.SHA256)
		}
	}
	return nil
}

// entriesPath is the path of entry bundle n of width entries (c2sp.org/tlog-tiles).
func entriesPath(n, width uint64) string {
	s := fmt.Sprintf("%03d", n%1000)
	for n /= 1000; n > 0; n /= 1000 {
		s = fmt.Sprintf("x%03d/", n%1000) + s
	}
	p := "/log/tile/entries/" + s
	if width < 256 {
		p += ".p/" + strconv.FormatUint(width, 10)
	}
	return p
}
