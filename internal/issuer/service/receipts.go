package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/internal/issuer/store"
)

// Signed answers: a lock check's and a decision's receipt, signed by the
// core's sign_receipt with the issuer's key, recorded with its nonce (and
// log entry) before it leaves.

func randomNonce() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// sign issues a receipt of kind over inputs: a nonce drawn, the core signs,
// the nonce, the receipt by digest and its log entry recorded in one
// commit (commit.go), then answered. A decision is
// computed as of its issued_at (stamp sets inputs.now).
func (s *Service) sign(ctx context.Context, who principal, kind, subject string, inputs request, stamp bool) (json.RawMessage, string, error) {
	if ie := storable("the subject", subject); ie != nil {
		return nil, "", ie
	}
	now := s.cfg.Now().UTC()
	key, err := s.cfg.Keys.Signer(now)
	if err != nil {
		return nil, "", err
	}
	issuer, err := s.cfg.Keys.Issuer()
	if err != nil {
		return nil, "", err
	}
	for try := 0; ; try++ {
		env := Envelope{Key: key, IssuedAt: now, Subject: subject}
		if env.Nonce, err = randomNonce(); err != nil {
			return nil, "", err
		}
		drawn := env.Nonce
		if s.cfg.Faults != nil {
			s.cfg.Faults.Envelope(&env)
		}
		if stamp {
			inputs["now"] = mustJSON(env.IssuedAt.Format(time.RFC3339Nano))
		}
		// The request is written around the inputs' bytes as received (each
		// member already valid JSON): re-encoding them would scan them again.
		head := mustJSON(map[string]any{
			"kind": kind, "private_key": env.Key.Seed, "key_id": env.Key.KID, "issuer": issuer,
			"issued_at": env.IssuedAt.Format(time.RFC3339Nano), "expires_at": env.IssuedAt.Add(s.cfg.Lifetime).Format(time.RFC3339Nano),
			"nonce": env.Nonce, "subject": env.Subject, "log_entry": s.log != nil,
		})
		buf := buffers.Get().(*[]byte)
		req := slices.Grow((*buf)[:0], len(head)+len(`,"inputs":`)+inputs.objectLen()+1)
		req = append(append(req, head[:len(head)-1]...), `,"inputs":`...)
		req = append(inputs.appendObject(req), '}')
		res, err := s.keyring.CallAnswer("sign_receipt", req)
		*buf = req
		putBuffer(buf)
		if err != nil {
			return nil, "", refusal(err)
		}
		out, err := receiptOf(res, s.log != nil)
		if err != nil {
			return nil, "", err
		}
		// The nonce drawn is recorded with the receipt, before it leaves: a
		// receipt nobody got may burn a nonce, none is ever answered twice.
		doc := store.Document{SHA256: out.SHA256, Kind: kind, KeyID: env.Key.KID, Subject: env.Subject, IssuedAt: env.IssuedAt, Body: out.Receipt, Shared: s.inputs.shared(out.Receipt),
			Principal: string(who)}
		proof, err := s.issue(ctx, store.Issuance{Nonce: drawn, NonceExpires: now.Add(s.cfg.Lifetime + skew), Document: doc, LogEntry: out.LogEntry})
		if errors.Is(err, store.ErrNonceReused) && try < 3 {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		s.metrics.Inc("crawlcheck_issuer_signed_total", kind)
		return out.Receipt, proof, nil
	}
}

// signed is a sign_receipt result: the receipt's bytes, its digest and its
// log entry (asked for with log_entry).
type signed struct {
	Receipt  json.RawMessage
	SHA256   string
	LogEntry []byte
}

// receiptOf reads a sign_receipt answer by its members (core.Answer);
// withEntry: it was asked for its log entry. The receipt's bytes are the
// canonical JSON the envelope would carry, written once and not scanned
// again (framing the 116 KB result member by member was a twentieth of a
// check's CPU). An answer without them is refused, as an internal error.
func receiptOf(a core.Answer, withEntry bool) (signed, error) {
	var out signed
	bad := &coreError{"internal", "sign_receipt: an answer without its receipt, sha256 or log_entry"}
	receipt, ok := a.JSON("receipt")
	if !ok || len(receipt) == 0 || receipt[0] != '{' {
		return out, bad
	}
	if out.SHA256, ok = a.Str("sha256"); !ok {
		return out, bad
	}
	if entry, has := a.Str("log_entry"); has != withEntry {
		return out, bad
	} else if has {
		out.LogEntry = []byte(entry)
	}
	out.Receipt = receipt
	return out, nil
}

// refusal is the service's coreError for an op's refusal (core.Error).
func refusal(err error) error {
	var ce *core.Error
	if errors.As(err, &ce) {
		return &coreError{ce.Code, ce.Message}
	}
	return err
}

// appendObject appends the request to b as a JSON object of its members'
// bytes, in name order: written straight into the core's request, not into
// a 100 KB object of its own that is then copied there.
func (q request) appendObject(b []byte) []byte {
	names := make([]string, 0, len(q))
	for k := range q {
		names = append(names, k)
	}
	sort.Strings(names)
	b = append(b, '{')
	for i, k := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(b, mustJSON(k)...), ':')
		b = append(b, q[k]...)
	}
	return append(b, '}')
}

// objectLen is the length appendObject appends, unless a name needs
// escaping for JSON (then b grows as usual).
func (q request) objectLen() int {
	n := 2
	for k, v := range q {
		n += len(k) + len(v) + 4
	}
	return n
}

// subjectOf is a check's subject: the endpoint read, or named, or else the
// one the lockfile approved. With none it answers 400 and "".
func (s *Service) subjectOf(w http.ResponseWriter, q request, subject string) string {
	if subject == "" {
		subject = s.lockURLs.of(q, s.framed.Owns)
	}
	if subject == "" {
		s.problem(w, http.StatusBadRequest, "bad_request", "the request names no endpoint (subject, url or observed.endpoint) and the lockfile approved none")
	}
	return subject
}

// buffers are the buffers of check requests' bodies and of the core's
// requests made of them: 260 KB each of a check, allocated and cleared at
// every request, were a tenth of the issuer's CPU with the collections they
// caused. A buffer goes back once nothing refers to it: a check's members
// are copied into the core's request (by appendObject, the lockfile URL's
// memo, framed), and the core copies a request before it parses it
// (core.Call; docs/abi.md: the request buffers stay the host's).
var buffers = sync.Pool{New: func() any { return new([]byte) }}

// bufferKept bounds the buffers pooled, so one huge request is not kept alive.
const bufferKept = 4 << 20

func putBuffer(b *[]byte) {
	if cap(*b) <= bufferKept {
		*b = (*b)[:0]
		buffers.Put(b)
	}
}

func (s *Service) lockCheck(w http.ResponseWriter, r *http.Request) {
	buf := buffers.Get().(*[]byte)
	defer putBuffer(buf)
	q, ok := s.readRequestInto(w, r, buf)
	if !ok {
		return
	}
	subject := q.str("subject")
	delete(q, "subject")
	if url := q.str("url"); url != "" {
		delete(q, "url")
		rd, ok := s.read(w, r, url)
		if !ok {
			return
		}
		subject = rd.Endpoint
		if rd.Failure != "" {
			q["failure"], q["failure_detail"] = mustJSON(rd.Failure), mustJSON(rd.FailureDetail)
		} else {
			q["pages"] = mustJSON(rd.Pages)
			if rd.PageCapReached {
				q["page_cap_reached"] = mustJSON(true)
			}
		}
	}
	if subject = s.subjectOf(w, q, subject); subject == "" {
		return
	}
	s.answerReceipt(w, r, "crawlcheck-mcp-lock-check", subject, q, false)
}

func (s *Service) decide(w http.ResponseWriter, r *http.Request) {
	buf := buffers.Get().(*[]byte)
	defer putBuffer(buf)
	q, ok := s.readRequestInto(w, r, buf)
	if !ok {
		return
	}
	if url := q.str("url"); url != "" {
		delete(q, "url")
		rd, ok := s.read(w, r, url)
		if !ok {
			return
		}
		q["observed"] = mustJSON(observed(rd))
	}
	_, kd := q["key_directory"]
	if _, ok := q["operator_keys"]; !ok && !kd {
		// The service judges the lockfiles it signed as verified: with no
		// keys of the host's, its own live directory is the baseline's.
		d, err := s.cfg.Keys.Directory(s.cfg.Now())
		if err != nil {
			s.fail(w, err)
			return
		}
		q["key_directory"] = d
	}
	var obs struct{ Endpoint string }
	json.Unmarshal(q["observed"], &obs)
	subject := s.subjectOf(w, q, obs.Endpoint)
	if subject == "" {
		return
	}
	s.answerReceipt(w, r, "crawlcheck-preflight-decision", subject, q, true)
}

func (s *Service) answerReceipt(w http.ResponseWriter, r *http.Request, kind, subject string, q request, stamp bool) {
	who, ok := s.principalOf(w, r)
	if !ok {
		return
	}
	rc, proof, err := s.sign(r.Context(), who, kind, subject, q, stamp)
	if err != nil {
		s.fail(w, err)
		return
	}
	setProof(w, proof)
	writeBytes(w, http.StatusOK, "application/json", rc)
}
