package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/crawlcheck/verifier/internal/boundedread"
	"github.com/crawlcheck/verifier/internal/corecall"
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
	if len(args) == 0 || args[0] != "verify" {
		return usagef("log verify --issuer URL FILE")
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
	var now2 struct {
		Checkpoint  string   `json:"checkpoint"`
		Consistency []string `json:"consistency"`
	}
	if err := json.Unmarshal(answer, &now2); err != nil {
		return fmt.Errorf("the issuer's log: %w", err)
	}
	req["checkpoint"], req["consistency"] = now2.Checkpoint, now2.Consistency
	var w verdict
	if err := corecall.Into("log_verify", req, &w); err != nil {
		return err
	}
	if !w.Valid {
		say(c.stdout, "%s: THE LOG DOES NOT EXTEND THE PROOF'S CHECKPOINT: %s (%s): %s\n", rest[0], w.Observation, w.Reason, w.Detail)
		return blocked("")
	}
	size, _ := strconv.ParseUint(strings.SplitN(now2.Checkpoint, "\n", 3)[1], 10, 64)
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
