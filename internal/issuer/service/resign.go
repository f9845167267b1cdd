package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/store"
	"github.com/crawlcheck/verifier/internal/issuer/tlog"
)

// Corrections through a rotation (docs/issuer.md): a retired key verifies
// nothing, so a correction signed before a rotation would stop applying
// once its key is retired, and the issuer alone holds its corrections (a
// lockfile lives with its user, who asks for it to be re-signed; a
// correction lives here). So the service re-signs them itself: every
// correction whose newest signing is not by the key that signs now is
// signed again by it (the core's resign_correction: the same correction,
// naming its first signing by resigns), recorded beside the first signing
// (which is never changed) and appended to the log. serve runs a pass at
// start and then every --resign-every, so a correction is re-signed during
// the overlap a rotation leaves, before its old key is retired.

// ResignCorrections re-signs every correction not yet signed by the key
// that signs now, and answers how many it re-signed. A correction that
// does not verify under the issuer's key history is left as it is and
// named in the error: re-signing vouches for what was signed, never for a
// row edited since.
func (s *Service) ResignCorrections(ctx context.Context) (int, error) {
	now := s.cfg.Now().UTC()
	key, err := s.cfg.Keys.Signer(now)
	if err != nil {
		return 0, err
	}
	hist, err := s.cfg.Keys.History()
	if err != nil {
		return 0, err
	}
	all, err := s.cfg.Store.AllCorrections(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, c := range all {
		rs, err := s.cfg.Store.Resignings(ctx, c.SHA256)
		if err != nil {
			return n, err
		}
		newest, signedBy := c.Body, ""
		if len(rs) > 0 {
			newest, signedBy = rs[len(rs)-1].Body, rs[len(rs)-1].KeyID
		} else {
			var k struct {
				KeyID string `json:"key_id"`
			}
			json.Unmarshal(c.Body, &k)
			signedBy = k.KeyID
		}
		if signedBy == key.KID {
			continue
		}
		res, err := s.signResult("resign_correction", mustJSON(map[string]any{"private_key": key.Seed, "key_id": key.KID,
			"resigned_at": now.Format(time.RFC3339Nano), "correction": string(newest), "key_directory": hist}))
		if err != nil {
			errs = append(errs, fmt.Errorf("correction %s: %w", c.SHA256, err))
			continue
		}
		var out struct {
			Correction json.RawMessage
			SHA256     string
			Resigns    string
		}
		if err := json.Unmarshal(res, &out); err != nil || out.Resigns != c.SHA256 {
			errs = append(errs, fmt.Errorf("correction %s: resign_correction answered another correction (%s)", c.SHA256, out.Resigns))
			continue
		}
		entry, err := s.logEntry(out.Correction)
		if err != nil {
			return n, err
		}
		r := store.Resigning{SHA256: out.SHA256, Original: c.SHA256, KeyID: key.KID, SignedAt: now, Body: out.Correction}
		var sign func(uint64, tlog.Hash) (string, error)
		if s.log != nil {
			sign = s.log.Sign
		}
		err = s.timed("add_resigning", func() error { _, _, err := s.cfg.Store.AddResigning(ctx, r, entry, sign); return err })
		switch {
		case errors.Is(err, store.ErrConflict):
			continue // another instance re-signed it with this key first
		case err != nil:
			return n, err
		}
		n++
		s.metrics.Inc("crawlcheck_issuer_signed_total", "crawlcheck-correction")
	}
	return n, errors.Join(errs...)
}

// RunResign re-signs the corrections at once and then every interval
// until ctx is done, logging what it did.
func (s *Service) RunResign(ctx context.Context, every time.Duration, logf func(format string, args ...any)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if n, err := s.ResignCorrections(ctx); err != nil && ctx.Err() == nil {
			logf("corrections: re-signing: %v", err)
		} else if n > 0 {
			logf("corrections: %d re-signed with the key that signs now", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
