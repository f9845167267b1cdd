package service

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/crawlcheck/verifier/internal/issuer/store"
	"github.com/crawlcheck/verifier/internal/issuer/tlog"
)

// The transparency log on the signing paths (docs/log.md): every lockfile
// and receipt the service signs is appended before it is answered, and the
// answer carries its tlog-proof in LogProofHeader (standard base64 of the
// proof's text, which spans lines). A document the log could not take is
// not answered: the client would hold a signature no one can audit.

// LogProofHeader carries a signing answer's tlog-proof.
const LogProofHeader = "X-Crawlcheck-Log-Proof"

// openLog is the log on the service's store, signed with the key that signs
// now; nil when the store keeps none.
func (s *Service) openLog() (*tlog.Log, error) {
	ls, ok := store.LogOf(s.cfg.Store)
	if !ok {
		return nil, nil
	}
	issuer, err := s.cfg.Keys.Issuer()
	if err != nil {
		return nil, err
	}
	return tlog.New(ls, issuer, s.logKey()), nil
}

// logKey answers the key that signs now, as the log's checkpoints take it.
// The key is derived from its seed once (a scalar multiplication, about a
// third of signing a checkpoint), not at every checkpoint: each is signed
// inside its append, under the log's sequencer lock.
func (s *Service) logKey() func() ed25519.PrivateKey {
	var mu sync.Mutex
	var seed string // of key
	var key ed25519.PrivateKey
	return func() ed25519.PrivateKey {
		k, err := s.cfg.Keys.Signer(s.cfg.Now())
		if err != nil {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if k.Seed != seed {
			raw, err := base64.StdEncoding.DecodeString(k.Seed)
			if err != nil || len(raw) != ed25519.SeedSize {
				return nil
			}
			seed, key = k.Seed, ed25519.NewKeyFromSeed(raw)
		}
		return key
	}
}

// logEntry is a signed document's log entry (the core's log_entry), nil
// when the service keeps no log; the entry is appended with the document
// (issue, commit.go).
func (s *Service) logEntry(doc []byte) ([]byte, error) {
	if s.log == nil {
		return nil, nil
	}
	res, err := coreResult("log_entry", mustJSON(map[string]any{"document": string(doc)}))
	if err != nil {
		return nil, err
	}
	var e struct{ Entry string }
	if err := json.Unmarshal(res, &e); err != nil {
		return nil, &coreError{"internal", "log_entry: " + err.Error()}
	}
	return []byte(e.Entry), nil
}

// appendEntry appends an entry the core wrote and answers its proof ("" when
// the service keeps no log); a failure is the store's.
func (s *Service) appendEntry(ctx context.Context, entry []byte) (string, error) {
	if s.log == nil {
		return "", nil
	}
	var proof string
	err := s.timed("log_append", func() error {
		var err error
		proof, err = s.log.Append(ctx, entry)
		return err
	})
	if err != nil {
		return "", &storeError{err}
	}
	return proof, nil
}

func setProof(w http.ResponseWriter, proof string) {
	if proof != "" {
		w.Header().Set(LogProofHeader, base64.StdEncoding.EncodeToString([]byte(proof)))
	}
}

// logConsistency answers GET /api/v1/log/consistency?from=N[&to=M]: the
// newest checkpoint and the consistency proof from a tree of N entries to
// one of M (default: the newest). A host that kept a checkpoint of N entries
// hands it continuity_check against the checkpoint of M entries its
// lockfile's proof carries, whichever is larger.
func (s *Service) logConsistency(w http.ResponseWriter, r *http.Request) {
	if s.log == nil {
		s.problem(w, http.StatusNotFound, "not_found", "this issuer keeps no log")
		return
	}
	from, err := strconv.ParseUint(r.URL.Query().Get("from"), 10, 63)
	if err != nil {
		s.problem(w, http.StatusBadRequest, "bad_request", "from must be a tree size (a decimal number)")
		return
	}
	var to uint64
	if q := r.URL.Query().Get("to"); q != "" {
		if to, err = strconv.ParseUint(q, 10, 63); err != nil || to == 0 {
			s.problem(w, http.StatusBadRequest, "bad_request", "to must be a tree size of at least 1 (a decimal number)")
			return
		}
	}
	hs, cp, err := s.log.Consistency(r.Context(), from, to)
	if err != nil {
		s.problem(w, http.StatusNotFound, "not_found", err.Error())
		return
	}
	proof := make([]string, len(hs))
	for i, h := range hs {
		proof[i] = base64.StdEncoding.EncodeToString(h[:])
	}
	writeBytes(w, http.StatusOK, "application/json", mustJSON(map[string]any{"checkpoint": cp, "consistency": proof}))
}
