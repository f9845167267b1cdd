package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/crawlcheck/verifier/internal/corecall"
)

// cmdCorrections is "corrections": the corrections the issuer published
// for the records of a record log (docs/issuer.md, "Corrections"). The core
// names the digests the records can be corrected by and judges each
// correction's signature (corrections_apply); this command asks the issuer
// for those digests, 100 at a time, and prints what applies.
func cmdCorrections(c *cli, args []string) error {
	fs := c.flagSet("corrections")
	issuer := fs.String("issuer", "", "the issuer's base `URL`: its corrections (/api/v1/corrections) and key directory (/api/v1/keys) (required)")
	asJSON := fs.Bool("json", false, "write the core's answer as JSON")
	rest, err := c.parse(fs, args, 1)
	if err != nil {
		return err
	}
	if *issuer == "" {
		return usagef("--issuer is required")
	}
	records, err := readInput("the record log", rest[0])
	if err != nil {
		return err
	}
	var named struct{ Targets []string }
	if err := corecall.Into("corrections_apply", map[string]any{"records": corecall.Text(records)}, &named); err != nil {
		return err
	}
	base := strings.TrimSuffix(*issuer, "/")
	corrections := []json.RawMessage{}
	for i := 0; i < len(named.Targets); i += 100 {
		q := url.Values{"target": named.Targets[i:min(i+100, len(named.Targets))]}
		answer, err := c.issuerGet(base + "/api/v1/corrections?" + q.Encode())
		if err != nil {
			return err
		}
		var page struct{ Corrections []json.RawMessage }
		if err := json.Unmarshal(answer, &page); err != nil {
			return fmt.Errorf("the issuer's corrections: %w", err)
		}
		corrections = append(corrections, page.Corrections...)
	}
	req := map[string]any{"records": corecall.Text(records)}
	if len(corrections) > 0 {
		dir, err := c.issuerGet(base + "/api/v1/keys")
		if err != nil {
			return err
		}
		now, err := c.clock()
		if err != nil {
			return err
		}
		req["corrections"], req["key_directory"], req["now"] = corrections, json.RawMessage(dir), now.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	raw, err := corecall.Call("corrections_apply", req)
	if err != nil {
		return err
	}
	if *asJSON {
		c.stdout.Write(append(raw, '\n'))
		return nil
	}
	var applied struct {
		Applies []struct {
			Line         int
			RecordSHA256 string `json:"record_sha256"`
			Target       string
			TargetKind   string `json:"target_kind"`
			Correction   struct {
				SHA256        string
				Version       int
				IssuedAt      string `json:"issued_at"`
				Reason        string
				Reporter      string
				RulesSHA256   *string `json:"rules_sha256"`
				PolicyVersion *string `json:"policy_version"`
				Resigns       *string `json:"resigns"`
				ResignedAt    *string `json:"resigned_at"`
				KeyID         string  `json:"key_id"`
				Trust         string
				TrustReason   *string `json:"trust_reason"`
			}
		}
	}
	if err := json.Unmarshal(raw, &applied); err != nil {
		return fmt.Errorf("corrections_apply: %w", err)
	}
	if len(applied.Applies) == 0 {
		say(c.stdout, "%s: no correction applies to its %d digests\n", rest[0], len(named.Targets))
		return nil
	}
	for _, a := range applied.Applies {
		k := a.Correction
		say(c.stdout, "line %d (record %s): correction %d of its %s %s, %s by %s\n", a.Line, a.RecordSHA256, k.Version, a.TargetKind, a.Target, k.IssuedAt, k.Reporter)
		say(c.stdout, "  %s\n", k.Reason)
		if k.RulesSHA256 != nil {
			say(c.stdout, "  the rule table that applies now: %s\n", *k.RulesSHA256)
		}
		if k.PolicyVersion != nil {
			say(c.stdout, "  the policy version that applies now: %s\n", *k.PolicyVersion)
		}
		if k.Resigns != nil && k.ResignedAt != nil {
			// The issuer signed it again through a rotation; its first
			// signing is what a later version supersedes.
			say(c.stdout, "  re-signed %s with %s (first signed as %s)\n", *k.ResignedAt, k.KeyID, *k.Resigns)
		}
		if k.Trust != "verified" {
			reason := ""
			if k.TrustReason != nil {
				reason = *k.TrustReason
			}
			say(c.stdout, "  NOT VERIFIED: %s (%s): the issuer's key directory does not vouch for this correction\n", k.Trust, reason)
		}
	}
	return nil
}
