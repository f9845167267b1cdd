package service

import (
	"context"
	"errors"
	"sync"

	"github.com/crawlcheck/verifier/internal/issuer/store"
	"github.com/crawlcheck/verifier/internal/issuer/tlog"
)

// Group commit. Every signing answer records its nonce, its document and
// its log entry before it leaves, and each durable commit costs a disk
// flush (a few milliseconds on the machines we measured, docs/benchmarks.md)
// whatever it holds. So the answers being signed at the same time are
// committed together: a request queues its issuance, one goroutine commits
// everything queued in one store.Issue transaction while the next batch
// gathers, and each request answers only once its batch is durable. Under
// one request at a time a batch is that request alone, as before.
//
// A batch that fails (a nonce issued before, which fails its whole
// transaction) is committed again one issuance at a time, so a failure is
// only ever its own request's. The store latency histogram's count for op
// "issue" is the number of transactions: crawlcheck_issuer_signed_total over
// it is the mean batch.

// maxBatch bounds one transaction.
const maxBatch = 256

type issueReq struct {
	ctx  context.Context
	it   store.Issuance
	done chan issued // buffered: the committer never waits on a request
}

// issued is where an issuance's log entry landed: its index and the
// checkpoint of the append that wrote it.
type issued struct {
	index uint64
	cp    string
	err   error
}

type committer struct {
	mu      sync.Mutex
	pending []*issueReq
	running bool // a drain goroutine is committing
}

// issue records it with whatever else is waiting and answers its log proof
// ("" when the service keeps no log). A store failure is a *storeError; a
// reused nonce is store.ErrNonceReused inside it.
func (s *Service) issue(ctx context.Context, it store.Issuance) (string, error) {
	r := &issueReq{ctx: ctx, it: it, done: make(chan issued, 1)}
	c := &s.commits
	c.mu.Lock()
	c.pending = append(c.pending, r)
	start := !c.running
	c.running = true
	c.mu.Unlock()
	if start {
		go s.drain()
	}
	var res issued
	select {
	case res = <-r.done:
	case <-ctx.Done():
		// The batch may still commit it: a nonce recorded, nothing answered.
		return "", ctx.Err()
	}
	if res.err != nil {
		return "", &storeError{res.err}
	}
	if s.log == nil || it.LogEntry == nil {
		return "", nil
	}
	var proof string
	err := s.timed("log_proof", func() (err error) {
		proof, err = s.log.ProofFor(ctx, res.index, res.cp)
		return err
	})
	if err != nil {
		return "", &storeError{err}
	}
	return proof, nil
}

// drain commits batches until nothing is queued.
func (s *Service) drain() {
	c := &s.commits
	for {
		c.mu.Lock()
		batch := c.pending
		if len(batch) > maxBatch {
			batch = batch[:maxBatch:maxBatch]
			c.pending = append([]*issueReq(nil), c.pending[maxBatch:]...)
		} else {
			c.pending = nil
		}
		if len(batch) == 0 {
			c.running = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		s.commitBatch(batch)
	}
}

func (s *Service) commitBatch(batch []*issueReq) {
	live := make([]*issueReq, 0, len(batch))
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- issued{err: err} // its request has gone: nothing is written for it
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	// Not any one request's context: a batch is many requests' work.
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Deadline)
	defer cancel()
	items := make([]store.Issuance, len(live))
	for i, r := range live {
		items[i] = r.it
	}
	first, cp, err := s.commitItems(ctx, items)
	if err == nil {
		if s.log != nil {
			var entries [][]byte
			for _, it := range items {
				if it.LogEntry != nil {
					entries = append(entries, it.LogEntry)
				}
			}
			s.log.Appended(ctx, first, entries)
		}
		next := first
		for _, r := range live {
			r.done <- issued{index: next, cp: cp}
			if r.it.LogEntry != nil {
				next++
			}
		}
		return
	}
	if len(live) == 1 {
		live[0].done <- issued{err: err}
		return
	}
	for _, r := range live {
		first, cp, err := s.commitItems(ctx, []store.Issuance{r.it})
		r.done <- issued{index: first, cp: cp, err: err}
	}
}

// errNoLog: a store without a log was asked to sign a checkpoint, which no
// issuance without a log entry asks for.
var errNoLog = errors.New("the service keeps no log")

func (s *Service) commitItems(ctx context.Context, items []store.Issuance) (first uint64, cp string, err error) {
	sign := func(uint64, tlog.Hash) (string, error) { return "", errNoLog }
	if s.log != nil {
		sign = s.log.Sign
	}
	err = s.timed("issue", func() (err error) {
		first, cp, err = s.cfg.Store.Issue(ctx, items, sign)
		return err
	})
	return first, cp, err
}
