package preflight

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/core/timefmt"
	"github.com/crawlcheck/verifier/internal/atomicfile"
	"github.com/crawlcheck/verifier/internal/corecall"
)

// The service path (docs/receipts.md, "Service path for SDKs"): before the
// continuity check, the issuer is asked for a signed lock check of exactly
// the pages the host read; the core's guard judges the receipt against the
// deployment's own keys, policy and replay state; and guard's observations
// go into the check as evidence. The record's effect is the strongest of the
// local comparison's and the evidence's, so an issuer can make a check
// stricter and never weaker. An issuer that cannot be asked is the evidence
// service_unavailable, and the local comparison stands as the fallback.

// DefaultIssuerTimeout bounds one consultation of the issuer (its key
// directory and the lock check) when Issuer.Timeout is zero (the core's
// limits.issuer_timeout_ms).
const DefaultIssuerTimeout = core.DefaultIssuerTimeoutMS * time.Millisecond

// maxIssuerAnswer bounds what is read of one issuer answer (the core's
// limits.issuer_answer_bytes): guard judges it in one request beside the
// lockfile and the rest.
const maxIssuerAnswer = core.MaxIssuerAnswerBytes

// Issuer configures the service path: which issuer to ask, and which keys
// may vouch for its answers.
type Issuer struct {
	// URL is the issuer's base URL (https://…; the API is under /api/v1/).
	URL string
	// PinnedKeys are issuer keys the deployment pinned. Without a trusted
	// key directory (Settings.KeyDirectory, the operator's own copy), the
	// issuer's directory is fetched on every consultation and used only for
	// the keys pinned here, for its answer and for the baseline alike: it
	// can retire or narrow a pinned key, never vouch for another, so the
	// session follows the issuer's key rotation (docs/keys.md). With
	// neither, there is nothing to trust an answer by, and the
	// configuration is refused.
	PinnedKeys []PinnedKey
	// Timeout bounds one consultation; 0 means DefaultIssuerTimeout.
	Timeout time.Duration
	// HTTPClient sends the requests; nil means a default client. Redirects
	// are never followed, whatever its CheckRedirect says. The
	// consultation's deadline applies whatever the client's own timeout.
	HTTPClient *http.Client
}

// PinnedKey is an issuer key the deployment pinned: its key id and the
// base64 of its Ed25519 public key.
type PinnedKey struct {
	KID       string `json:"kid"`
	PublicKey string `json:"public_key"`
}

// Consultation is what asking the issuer gave one check.
type Consultation struct {
	// Asked is false when the issuer was not asked: the host read no whole
	// tool list (a failure, a truncated or malformed list), so there was
	// nothing for the issuer to judge, and the record's own observation
	// already stops the session under the default policy.
	Asked bool
	// URL is the issuer asked.
	URL string
	// Unavailable says why the issuer gave no answer to judge ("" when it
	// answered), for a person: the record's issuer.unavailable, the core's
	// words for the step and fault (set by Recorded, which a Session does
	// with each record it makes).
	Unavailable string
	step        string
	fault       issuerFault
	// Guard is the core's guard answer on the issuer's receipt (canonical
	// JSON), nil when there was none.
	Guard json.RawMessage
	// PolicyResult and EvidenceLevel are read from Guard.
	PolicyResult  string
	EvidenceLevel string
	// Evidence is what the continuity check is given: guard's
	// observations as they are (none when the issuer gave no answer:
	// Trace says why, and the core adds service_unavailable).
	Evidence []Evidence
	// pins and fetched are the issuer keys the baseline is judged by when
	// the deployment keeps no copy of the issuer's directory: the pinned
	// keys, and the directory as fetched at this consultation (nil when it
	// was not fetched, or the core could not read it). The one fetch serves
	// guard and the baseline, so both are judged by the same directory.
	// Beside the operator's copy the core lets the pins judge no baseline
	// (continuity_check's pinned_keys), so they are handed as configured.
	pins    []PinnedKey
	fetched []byte
}

// Use hands the continuity check what the consultation gave it: guard's
// evidence, the issuer member, and without the operator's copy of the key
// directory the pinned keys and the live directory fetched (continuity_check's
// pinned_keys and fetched_key_directory), so the baseline follows the
// issuer's rotation as the receipts do.
func (r *Request) Use(c Consultation) {
	r.Evidence, r.Issuer = c.Evidence, c.Trace()
	r.PinnedKeys, r.FetchedKeyDirectory = c.pins, c.fetched
}

// Recorded is the consultation as rec, the record made with it, tells it:
// Unavailable in the record's words (its issuer.unavailable), so a person
// reads what the record keeps, never a host's own wording of the fault.
func (c Consultation) Recorded(rec Record) Consultation {
	var r struct {
		Issuer *struct {
			Unavailable string `json:"unavailable"`
		} `json:"issuer"`
	}
	if c.Asked && json.Unmarshal(rec.Raw, &r) == nil && r.Issuer != nil {
		c.Unavailable = r.Issuer.Unavailable
	}
	return c
}

// Trace is what the continuity check records of this consultation (its
// "issuer" member): the receipt relied on and guard's verdict, or why the
// issuer could not be asked; nil when it was not asked. An agreeing issuer
// adds no observation, so this is how the record shows it was asked.
func (c Consultation) Trace() *IssuerTrace {
	if !c.Asked {
		return nil
	}
	t := &IssuerTrace{URL: c.URL, Guard: c.Guard}
	if c.step != "" {
		t.Step, t.Fault, t.Status, t.TimeoutMS = c.step, c.fault.Fault, c.fault.Status, c.fault.TimeoutMS
	}
	return t
}

// IssuerTrace is continuity_check's "issuer" member (docs/continuity.md):
// the guard answer, or the step that failed and the fault (Issuer*
// constants), which the core words.
type IssuerTrace struct {
	URL       string          `json:"url"`
	Guard     json.RawMessage `json:"guard,omitempty"`
	Step      string          `json:"step,omitempty"`
	Fault     string          `json:"fault,omitempty"`
	Status    int             `json:"status,omitempty"`
	TimeoutMS int             `json:"timeout_ms,omitempty"`
}

// Issuer faults: why an issuer gave no answer to judge, as codes the core
// words (continuity_check's issuer fault), so a down or broken issuer gives
// the same record in every language; never the HTTP client's error text.
const (
	IssuerConnectRefused    = "connect_refused"    // the connection was refused or not made
	IssuerTimeout           = "timeout"            // the consultation's deadline passed first
	IssuerSessionEnded      = "session_ended"      // the connection closed before the answer was read
	IssuerHTTPStatus        = "http_status"        // a status other than 200 (Status), a redirect included
	IssuerAnswerTooLarge    = "answer_too_large"   // longer than the core's limits.issuer_answer_bytes
	IssuerResponseMalformed = "response_malformed" // a 200 answer that is not a JSON object (guard's issuer_fault)
	IssuerKeysInvalid       = "keys_invalid"       // a key directory the core cannot read (guard's issuer_fault)
)

// issuerFault is a request to the issuer that gave nothing to judge: the
// fault the core words, and for a person (log reconciliation, which makes
// no record) the request and what was seen.
type issuerFault struct {
	Fault     string
	Status    int // the HTTP status, with IssuerHTTPStatus
	TimeoutMS int // the consultation's deadline, with IssuerTimeout
	what      string
}

func (e *issuerFault) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s: %s %d", e.what, e.Fault, e.Status)
	}
	return e.what + ": " + e.Fault
}

// IssuerClient asks one issuer and keeps the replay state (the nonces of
// the receipts already accepted) between answers: in memory, and in a
// state file when one is named, so that a receipt replayed to a later run is
// still seen.
type IssuerClient struct {
	cfg       Issuer
	directory []byte // the trusted key directory; nil when fetched
	statePath string

	mu   sync.Mutex // guards seen, and the state file
	seen json.RawMessage
}

// NonceStatePath is where the replay state of a record log is kept: next
// to the log, so that whoever keeps the log keeps the state.
func NonceStatePath(logPath string) string { return logPath + ".issuer-nonces.json" }

// replayState is the core's replay_state answer: the nonces guard takes and
// the state file's bytes (the format is the core's).
type replayState struct {
	SeenNonces json.RawMessage `json:"seen_nonces"`
	File       string          `json:"file"`
}

// NewIssuerClient checks the configuration and loads the replay state from
// statePath ("" keeps it in memory only). keyDirectory is the operator's
// copy of the issuer's key directory (trusted as it is), or nil. A state
// file that cannot be read is an error: replays could no longer be seen.
func NewIssuerClient(cfg Issuer, keyDirectory []byte, statePath string) (*IssuerClient, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("issuer URL %q: not an http(s) URL", cfg.URL)
	}
	if keyDirectory == nil && len(cfg.PinnedKeys) == 0 {
		return nil, errors.New("issuer: no key to judge its answers by: give the operator's copy of its key directory, or pin its keys")
	}
	for _, k := range cfg.PinnedKeys {
		if k.KID == "" || k.PublicKey == "" {
			return nil, fmt.Errorf("issuer: pinned key %+v: a key id and a public key are both required", k)
		}
		if err := checkPublicKey(k.PublicKey); err != nil {
			return nil, fmt.Errorf("issuer: pinned key %s: %w", k.KID, err)
		}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultIssuerTimeout
	}
	// Redirects are never followed: a 307 would re-send the lockfile and
	// the pages to wherever the issuer (or whoever answers for it) points,
	// another host or a link-local address. The redirect is the answer, and
	// it is not one: service_unavailable.
	client := http.Client{}
	if cfg.HTTPClient != nil {
		client = *cfg.HTTPClient
	}
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		// The redirect's own answer is returned: its status is the fault.
		return http.ErrUseLastResponse
	}
	cfg.HTTPClient = &client
	cfg.URL = strings.TrimSuffix(cfg.URL, "/")
	c := &IssuerClient{cfg: cfg, directory: keyDirectory, statePath: statePath, seen: json.RawMessage("[]")}
	if statePath == "" {
		return c, nil
	}
	// A document the core reads: bounded by its request cap, as a lockfile.
	b, err := readFile(statePath, core.MaxRequestBytes)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return c, nil
	case err != nil:
		return nil, fmt.Errorf("issuer replay state: %w", err)
	}
	var st replayState
	if err := corecall.Into("replay_state", map[string]any{"file": corecall.Text(b)}, &st); err != nil {
		return nil, fmt.Errorf("issuer replay state %s: %w; move it aside (replays it recorded would go unseen)", statePath, err)
	}
	c.seen = st.SeenNonces
	return c, nil
}

// ServiceQuery is one check's question to the issuer.
type ServiceQuery struct {
	// Lock is the approved lockfile, as on disk.
	Lock []byte
	// Settings give the server's name in an agentgate.lock and the
	// deployment's policy, which guard judges the receipt by.
	Settings    Settings
	Observation Observation
	Now         time.Time
}

// Consult asks the issuer about the observation and judges its answer with
// the core's guard. An error means the question could not be put at all
// (an observation that names no endpoint, a lockfile, policy or key
// directory of the deployment's own that guard refuses, a replay state that
// cannot be written): there must be no record then. Everything the issuer
// does wrong is in the Consultation.
func (c *IssuerClient) Consult(ctx context.Context, q ServiceQuery) (Consultation, error) {
	obs := q.Observation
	if obs.Endpoint == "" {
		return Consultation{}, errors.New("issuer: the observation names no endpoint for a receipt to speak about")
	}
	// Whether to ask at all is the session engine's (a whole list only);
	// pages larger than the core takes are no list to ask about either.
	facts := observedJSON(obs)
	whole, err := AskIssuer(facts)
	if err != nil || !whole.AskIssuer {
		return Consultation{pins: c.cfg.PinnedKeys}, nil
	}
	pages, reading := facts["pages"], whole.Reading
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()

	// Without the operator's copy, the issuer's own directory is fetched;
	// guard keeps of it only the pinned keys (fetched_key_directory).
	var fetched []byte
	if c.directory == nil {
		var err error
		if fetched, err = c.get(ctx, "/api/v1/keys"); err != nil {
			return c.unavailable("key_directory", c.faultOf(err)), nil
		}
	}
	withFetched := func(cons Consultation) Consultation {
		cons.fetched = fetched
		return cons
	}

	body := map[string]any{"lock": corecall.Text(q.Lock), "pages": pages, "subject": obs.Endpoint}
	if q.Settings.ServerName != "" {
		body["server_name"] = q.Settings.ServerName
	}
	answer, err := c.post(ctx, "/api/v1/mcp/lock/check", body)
	if err != nil {
		return withFetched(c.unavailable("lock_check", c.faultOf(err))), nil
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	req := map[string]any{
		"receipt":               corecall.Text(answer),
		"expected_subject":      obs.Endpoint,
		"now":                   timefmt.Format(q.Now),
		"seen_nonces":           c.seen,
		"lock":                  corecall.Text(q.Lock),
		"observed_tools_sha256": reading,
	}
	if c.directory != nil {
		req["key_directory"] = corecall.Text(c.directory)
	} else {
		req["fetched_key_directory"] = corecall.Text(fetched)
	}
	if len(c.cfg.PinnedKeys) > 0 {
		req["pinned_keys"] = c.cfg.PinnedKeys
	}
	if q.Settings.Policy != nil {
		req["policy"] = corecall.Text(q.Settings.Policy)
	}
	raw, err := corecall.Call("guard", req)
	if err != nil {
		return Consultation{}, fmt.Errorf("issuer: judging its answer: %w", err)
	}
	var g struct {
		PolicyResult  string          `json:"policy_result"`
		EvidenceLevel string          `json:"evidence_level"`
		Observations  []Evidence      `json:"observations"`
		SeenNonces    json.RawMessage `json:"seen_nonces"`
		IssuerFault   *struct {
			Step  string `json:"step"`
			Fault string `json:"fault"`
		} `json:"issuer_fault"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		return Consultation{}, fmt.Errorf("issuer: reading guard's answer: %w", err)
	}
	if f := g.IssuerFault; f != nil {
		// Answers that are no answers (guard's issuer_fault): the issuer's
		// garbage, not the deployment's mistake. A directory that is none
		// judges no baseline either.
		cons := c.unavailable(f.Step, issuerFault{Fault: f.Fault})
		if f.Step == "lock_check" {
			cons = withFetched(cons)
		}
		return cons, nil
	}
	if err := c.keep(g.SeenNonces); err != nil {
		return Consultation{}, err
	}
	return withFetched(Consultation{Asked: true, URL: c.cfg.URL, Guard: raw, PolicyResult: g.PolicyResult, EvidenceLevel: g.EvidenceLevel, Evidence: g.Observations,
		pins: c.cfg.PinnedKeys}), nil
}

// unavailable is the consultation of an issuer that gave no answer to judge:
// the step that failed and the fault, which the core turns into the
// evidence service_unavailable (continuity_check's issuer step and fault).
func (c *IssuerClient) unavailable(step string, f issuerFault) Consultation {
	return Consultation{Asked: true, URL: c.cfg.URL, step: step, fault: f, pins: c.cfg.PinnedKeys}
}

// faultOf is the fault of a failed request: the one do classified, a
// timeout naming the consultation's deadline (Issuer.Timeout).
func (c *IssuerClient) faultOf(err error) issuerFault {
	var f *issuerFault
	if !errors.As(err, &f) {
		// A request that could not be built: nothing reached the issuer.
		return issuerFault{Fault: IssuerConnectRefused}
	}
	out := *f
	if out.Fault == IssuerTimeout && out.TimeoutMS == 0 {
		out.TimeoutMS = int(c.cfg.Timeout / time.Millisecond)
	}
	return out
}

// get and post send one request within ctx and return the body of a 200
// answer, as it came. Anything else — no connection, the deadline, another
// status, a body cut short or too long — is an *issuerFault: the issuer
// gave nothing to judge.
func (c *IssuerClient) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.cfg.URL+path, nil)
	if err != nil {
		return nil, err
	}
	return c.do(req)
}

func (c *IssuerClient) post(ctx context.Context, path string, body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding the request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return c.do(req)
}

func (c *IssuerClient) do(req *http.Request) ([]byte, error) {
	what := req.Method + " " + req.URL.Path
	fault := func(f string) error { return &issuerFault{Fault: f, what: what} }
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		// Classified from what the transport saw: the deadline first, then
		// a dial that failed; anything else closed the connection.
		var op *net.OpError
		switch {
		case timedOut(req, err):
			return nil, fault(IssuerTimeout)
		case errors.As(err, &op) && op.Op == "dial":
			return nil, fault(IssuerConnectRefused)
		}
		return nil, fault(IssuerSessionEnded)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &issuerFault{Fault: IssuerHTTPStatus, Status: resp.StatusCode, what: what}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxIssuerAnswer+1))
	switch {
	case err != nil && timedOut(req, err):
		return nil, fault(IssuerTimeout)
	case err != nil:
		return nil, fault(IssuerSessionEnded)
	case len(body) > maxIssuerAnswer:
		return nil, fault(IssuerAnswerTooLarge)
	}
	// Whether the body is a JSON object is the core's to say (guard's
	// issuer_fault, continuity_check's consistency_answer).
	return body, nil
}

// timedOut reports whether a request failed at its deadline (or its
// context's cancellation), rather than at the issuer.
func timedOut(req *http.Request, err error) bool {
	var ne net.Error
	return req.Context().Err() != nil || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// checkPublicKey refuses a pinned key that is not the canonical base64 of 32
// bytes, before anything is sent: a typo in a pin would otherwise only show
// as an issuer whose every answer is untrusted.
func checkPublicKey(b64 string) error {
	raw, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil || len(raw) != ed25519.PublicKeySize || base64.StdEncoding.EncodeToString(raw) != b64 {
		return fmt.Errorf("the public key %q is not the base64 of 32 bytes", b64)
	}
	return nil
}

// keep replaces the replay state with guard's answer and writes the state
// file when it changed. Callers hold c.mu.
func (c *IssuerClient) keep(seen json.RawMessage) error {
	if len(seen) == 0 {
		return errors.New("issuer: guard's answer holds no seen_nonces")
	}
	changed := !bytes.Equal(seen, c.seen)
	c.seen = seen
	if c.statePath == "" || !changed {
		return nil
	}
	var st replayState
	if err := corecall.Into("replay_state", map[string]any{"seen_nonces": seen}, &st); err != nil {
		return fmt.Errorf("issuer replay state: %w", err)
	}
	if err := atomicfile.Write(c.statePath, []byte(st.File), 0o600); err != nil {
		return fmt.Errorf("issuer replay state: %w", err)
	}
	return nil
}
