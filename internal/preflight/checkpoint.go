package preflight

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"sync"

	"github.com/crawlcheck/verifier/internal/atomicfile"
	"github.com/crawlcheck/verifier/internal/corecall"
)

// The issuer's transparency log on the host's side (docs/log.md, What a
// host does): the lockfile's tlog-proof is kept beside it
// (ProofPath), the newest checkpoint the host has seen beside the replay
// state (CheckpointPath), and every check hands the core both with the
// consistency proof between them. The core decides; the host writes back
// the checkpoint the record says to keep.

// ProofPath is where the tlog-proof of a lockfile is kept: beside it, as
// c2sp.org/tlog-proof suggests and `crawlcheck log verify` reads it.
func ProofPath(lockPath string) string { return lockPath + ".tlog-proof" }

// CheckpointPath is where the newest checkpoint of the issuer's log is
// kept for a record log: beside the log and its replay state, so that
// whoever keeps the records keeps the history they were checked against.
func CheckpointPath(logPath string) string { return logPath + ".log-checkpoint" }

// maxProofBytes bounds a tlog-proof or a checkpoint read from a file: a
// proof is at most 126 hashes and a checkpoint with its signature lines.
const maxProofBytes = 64 << 10

// LogInput is continuity_check's "log" member: the lockfile's tlog-proof,
// the checkpoint kept ("" the first time) and the issuer's answer carrying
// the consistency proof between the two trees.
type LogInput struct {
	Proof      string `json:"proof"`
	Checkpoint string `json:"checkpoint,omitempty"`
	// ConsistencyAnswer is the issuer's answer to GET
	// /api/v1/log/consistency as it sent it: the core reads the proof out
	// of it, and an answer without one is a proof unavailable.
	ConsistencyAnswer any `json:"consistency_answer,omitempty"`
	// ConsistencyUnavailable tells the core that the two trees differ in
	// size and no consistency proof could be had (no issuer to ask, or its
	// error): the record's log_inconsistent then carries the core's reason
	// consistency_unavailable, "not shown to be one history", never a fork
	// proved.
	ConsistencyUnavailable bool `json:"consistency_unavailable,omitempty"`
	// Unavailable, for a person and never sent to the core, says why: the
	// issuer's error, which the core does not see.
	Unavailable string `json:"-"`
}

// ReadProof reads the tlog-proof beside a lockfile: "" when there is none.
func ReadProof(lockPath string) (string, error) {
	b, err := readFile(ProofPath(lockPath), maxProofBytes)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("the lockfile's tlog-proof: %w", err)
	}
	return string(b), nil
}

// Checkpoints keeps the newest checkpoint of the issuer's log a host has
// seen: in memory, and in a file when one is named. The core says which to
// keep (a record's log.keep: the larger of two consistent checkpoints, never
// one that failed); Checkpoints only stores it.
type Checkpoints struct {
	path string
	mu   sync.Mutex
	kept string
}

// OpenCheckpoints loads the checkpoint kept at path ("" keeps it in memory
// only). A file that cannot be read is an error: the history it held would
// be forgotten, and a fork against it unseen. Its content is judged by the
// core at the next check (a kept checkpoint that does not read is
// log_inconsistent).
func OpenCheckpoints(path string) (*Checkpoints, error) {
	k := &Checkpoints{path: path}
	if path == "" {
		return k, nil
	}
	b, err := readFile(path, maxProofBytes)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return k, nil
	case err != nil:
		return nil, fmt.Errorf("the kept log checkpoint: %w", err)
	}
	k.kept = string(b)
	return k, nil
}

// current is the checkpoint kept, "" when none.
func (k *Checkpoints) current() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.kept
}

// Keep stores the checkpoint the session engine said to keep (its
// keep_checkpoint action: the record's log.keep), written atomically when it
// changed.
func (k *Checkpoints) Keep(note string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if note == k.kept {
		return nil
	}
	if k.path != "" {
		if err := atomicfile.Write(k.path, []byte(note), 0o644); err != nil {
			return fmt.Errorf("keeping the log checkpoint: %w", err)
		}
	}
	k.kept = note
	return nil
}

// Input is what the check of proof is handed: the proof, the checkpoint
// kept and, when the two trees differ in size, the consistency proof
// between them, asked of the issuer. No issuer, or one that cannot answer,
// gives no proof: the input says so (ConsistencyUnavailable) and the core
// fails the check closed as log_inconsistent, reason consistency_unavailable:
// a history that cannot be shown to be one is not taken as one.
func (k *Checkpoints) Input(ctx context.Context, proof string, issuer *IssuerClient) *LogInput {
	in := &LogInput{Proof: proof, Checkpoint: k.current()}
	if in.Checkpoint == "" {
		return in
	}
	st, err := LogProof(proof, in.Checkpoint)
	if err != nil || st.ConsistencyTo == 0 {
		// The same tree, or a size the core's log check will refuse.
		return in
	}
	kept, have, from, to := st.KeptSize, st.ProofSize, st.ConsistencyFrom, st.ConsistencyTo
	if issuer == nil {
		in.ConsistencyUnavailable = true
		in.Unavailable = fmt.Sprintf("the kept checkpoint is of %d entries and the proof's of %d, and no issuer is configured to ask for the consistency proof between them", kept, have)
		return in
	}
	answer, err := issuer.consistency(ctx, from, to)
	if err != nil {
		in.ConsistencyUnavailable = true
		in.Unavailable = fmt.Sprintf("the issuer gave no consistency proof from %d to %d entries: %v", from, to, err)
		return in
	}
	in.ConsistencyAnswer = corecall.Page(answer)
	return in
}

// consistency asks the issuer for the consistency proof between trees of
// from and to entries (GET /api/v1/log/consistency), within its timeout:
// its answer, which the core reads (consistency_answer).
func (c *IssuerClient) consistency(ctx context.Context, from, to uint64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	q := url.Values{"from": {strconv.FormatUint(from, 10)}, "to": {strconv.FormatUint(to, 10)}}
	return c.get(ctx, "/api/v1/log/consistency?"+q.Encode())
}
