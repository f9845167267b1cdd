// Package service is the test issuer: a CrawlCheck-like service that
// answers lock checks and preflight decisions with signed receipts, serves
// the rule tables and its key directory, and re-runs any receipt's
// decision. Every answer is computed and signed by the core (core.Call):
// the service adds only what a service has — a clock, nonces, keys, HTTP and
// the reading of a live MCP server — and knobs that make it misbehave the
// ways a host must survive (docs/receipts.md, "The test issuer").
package service

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/crawlcheck/verifier/core"
)

// Key is a signing key: its id and the base64 of its Ed25519 seed.
type Key struct {
	KID  string `json:"kid"`
	Seed string `json:"seed"`
}

// Keys are the keys the issuer may sign with, by the knob that selects them.
type Keys struct {
	Active  Key // in the directory, active
	Retired Key // in the directory, retired
	Unknown Key // in no directory
}

// LoadTestKeys reads testdata/keys: the test issuer's active and retired
// keys, a foreign key it signs with when told to use an unknown one, and
// the key directory it serves.
func LoadTestKeys(dir string) (Keys, json.RawMessage, error) {
	var k Keys
	for _, f := range []struct {
		file string
		dst  *Key
	}{{"test-issuer.json", &k.Active}, {"test-issuer-retired.json", &k.Retired}, {"test-foreign.json", &k.Unknown}} {
		b, err := os.ReadFile(filepath.Join(dir, f.file))
		if err != nil {
			return k, nil, err
		}
		if err := json.Unmarshal(b, f.dst); err != nil {
			return k, nil, fmt.Errorf("%s: %w", f.file, err)
		}
	}
	d, err := os.ReadFile(filepath.Join(dir, "test-directory.json"))
	return k, d, err
}

// Knobs make the issuer misbehave. The zero value is an honest issuer.
type Knobs struct {
	// Late answers with receipts that expired before they were sent: issued
	// an hour ago, valid for the usual lifetime.
	Late bool `json:"late,omitempty"`
	// Key signs with "retired" (the directory's retired key) or "unknown"
	// (a key in no directory) instead of the active key.
	Key string `json:"key,omitempty"`
	// Subject, when set, is named as the receipt's subject whatever the
	// request was about.
	Subject string `json:"subject,omitempty"`
	// ReuseNonce gives every receipt the same nonce.
	ReuseNonce bool `json:"reuse_nonce,omitempty"`
	// Down makes /api/ answer "503" (Service Unavailable), "hang" (never
	// answer until the client gives up) or "garbage" (200 with a body that
	// is not JSON, as a captive portal or a broken proxy answers).
	Down string `json:"down,omitempty"`
	// Redirect answers every /api/ request with a 307 to this URL plus the
	// request's path: a client that follows it re-sends its POST body
	// (the lockfile and the pages) to another host.
	Redirect string `json:"redirect,omitempty"`
}

func (k Knobs) check() error {
	switch {
	case k.Key != "" && k.Key != "active" && k.Key != "retired" && k.Key != "unknown":
		return fmt.Errorf("key must be active, retired or unknown, got %q", k.Key)
	case k.Down != "" && k.Down != "503" && k.Down != "hang" && k.Down != "garbage":
		return fmt.Errorf("down must be 503, hang or garbage, got %q", k.Down)
	}
	return nil
}

// Config configures an issuer.
type Config struct {
	Issuer    string          // the issuer named in receipts; default: the directory's
	Keys      Keys            // signing keys
	Directory json.RawMessage // the key directory served at /api/v1/keys
	Lifetime  time.Duration   // how long a receipt is valid; default 5 minutes
	PageCap   int             // tools/list pages read of a live server; default 100
	ReadLimit time.Duration   // how long reading a live server may take; default 10 seconds
	Knobs     Knobs
	Now       func() time.Time // default time.Now
	Logger    *log.Logger      // default: discard
}

// Issuer is the test issuer.
type Issuer struct {
	cfg   Config
	hc    *http.Client
	mu    sync.Mutex
	knobs Knobs
}

// New makes an issuer.
func New(cfg Config) (*Issuer, error) {
	if err := cfg.Knobs.check(); err != nil {
		return nil, err
	}
	if cfg.Issuer == "" {
		var d struct{ Issuer string }
		if err := json.Unmarshal(cfg.Directory, &d); err != nil {
			return nil, fmt.Errorf("key directory: %w", err)
		}
		cfg.Issuer = d.Issuer
	}
	if cfg.Lifetime == 0 {
		cfg.Lifetime = 5 * time.Minute
	}
	if cfg.PageCap == 0 {
		cfg.PageCap = 100
	}
	if cfg.ReadLimit == 0 {
		cfg.ReadLimit = 10 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = log.New(io.Discard, "", 0)
	}
	return &Issuer{cfg: cfg, hc: &http.Client{}, knobs: cfg.Knobs}, nil
}

// SetKnobs replaces the knobs.
func (s *Issuer) SetKnobs(k Knobs) error {
	if err := k.check(); err != nil {
		return err
	}
	s.mu.Lock()
	s.knobs = k
	s.mu.Unlock()
	return nil
}

func (s *Issuer) currentKnobs() Knobs {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.knobs
}

// Handler serves the API and the admin endpoints:
//
//	POST /api/v1/mcp/lock/check   {lock, tools|pages|url, page_cap_reached?, server_name?, subject?} → lock check receipt
//	POST /api/v1/preflight/decide {lock, observed|url, mode?, policy?, ...} → decision receipt
//	POST /api/v1/preflight/replay {receipt, lock?} → the replay_decision answer
//	GET  /api/v1/preflight/rules  → the rules answer
//	GET  /api/v1/keys             → the key directory
//	GET  /admin/knobs, POST /admin/knobs {Knobs}
func (s *Issuer) Handler() http.Handler {
	api := http.NewServeMux()
	api.HandleFunc("POST /api/v1/mcp/lock/check", s.lockCheck)
	api.HandleFunc("POST /api/v1/preflight/decide", s.decide)
	api.HandleFunc("POST /api/v1/preflight/replay", func(w http.ResponseWriter, r *http.Request) {
		body, ok := readBody(w, r)
		if ok {
			s.answer(w, core.Call("replay_decision", body))
		}
	})
	api.HandleFunc("GET /api/v1/preflight/rules", func(w http.ResponseWriter, r *http.Request) {
		s.answer(w, core.Call("rules", []byte(`{}`)))
	})
	api.HandleFunc("GET /api/v1/keys", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(s.cfg.Directory)
	})
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		k := s.currentKnobs()
		if k.Redirect != "" {
			http.Redirect(w, r, k.Redirect+r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		switch k.Down {
		case "503":
			http.Error(w, "test issuer: down", http.StatusServiceUnavailable)
		case "hang":
			<-r.Context().Done()
		case "garbage":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><body>Sign in to the network to continue.</body></html>\n")
		default:
			api.ServeHTTP(w, r)
		}
	})
	mux.HandleFunc("GET /admin/knobs", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.currentKnobs())
	})
	mux.HandleFunc("POST /admin/knobs", func(w http.ResponseWriter, r *http.Request) {
		var k Knobs
		dec := json.NewDecoder(io.LimitReader(r.Body, 1<<16))
		dec.DisallowUnknownFields()
		err := dec.Decode(&k)
		if err == nil {
			err = s.SetKnobs(k)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.cfg.Logger.Printf("knobs now %+v", k)
		writeJSON(w, http.StatusOK, k)
	})
	return mux
}

// maxBody bounds a request body, as the core bounds a request.
const maxBody = core.MaxRequestBytes

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		http.Error(w, "test issuer: request body unreadable or too large", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	return body, true
}

// answer writes a core envelope as the HTTP answer: the result with 200, or
// {"error": {code, message}} with 400.
func (s *Issuer) answer(w http.ResponseWriter, envelope []byte) {
	var env struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(envelope, &env); err != nil {
		http.Error(w, "test issuer: core answered "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if !env.OK {
		s.cfg.Logger.Printf("refused: %s", env.Error)
		w.WriteHeader(http.StatusBadRequest)
		w.Write(append(append([]byte(`{"error":`), env.Error...), '}'))
		return
	}
	w.Write(env.Result)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// badRequest answers 400 in the shape of a core error.
func badRequest(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]string{"code": "bad_request", "message": msg}})
}

// sign asks the core for a receipt of kind over inputs, with the envelope
// the knobs make. A decision is computed as of its issued_at (stamp sets
// inputs.now): a late answer was decided when it was issued.
func (s *Issuer) sign(kind, subject string, inputs request, stamp bool) []byte {
	k := s.currentKnobs()
	key := s.cfg.Keys.Active
	switch k.Key {
	case "retired":
		key = s.cfg.Keys.Retired
	case "unknown":
		key = s.cfg.Keys.Unknown
	}
	issued := s.cfg.Now().UTC()
	if k.Late {
		issued = issued.Add(-time.Hour)
	}
	nonce := "reused-nonce-0000"
	if !k.ReuseNonce {
		nonce = randomNonce()
	}
	if k.Subject != "" {
		subject = k.Subject
	}
	if stamp {
		inputs["now"] = mustJSON(issued.Format(time.RFC3339Nano))
	}
	req := mustJSON(map[string]any{
		"kind": kind, "private_key": key.Seed, "key_id": key.KID, "issuer": s.cfg.Issuer,
		"issued_at": issued.Format(time.RFC3339Nano), "expires_at": issued.Add(s.cfg.Lifetime).Format(time.RFC3339Nano),
		"nonce": nonce, "subject": subject, "inputs": inputs,
	})
	var env struct {
		OK     bool `json:"ok"`
		Result struct {
			Receipt json.RawMessage `json:"receipt"`
		} `json:"result"`
	}
	resp := core.Call("sign_receipt", req)
	if json.Unmarshal(resp, &env) != nil || !env.OK {
		return resp
	}
	return append(append([]byte(`{"ok":true,"result":`), env.Result.Receipt...), '}')
}

func randomNonce() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// request is a POST body read member by member; members are passed on to
// the core as the bytes received.
type request map[string]json.RawMessage

func readRequest(w http.ResponseWriter, r *http.Request) (request, bool) {
	body, ok := readBody(w, r)
	if !ok {
		return nil, false
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		badRequest(w, "the request is not a JSON object: "+err.Error())
		return nil, false
	}
	return req, true
}

// str reads a string member ("" when absent or not a string).
func (q request) str(name string) string {
	var s string
	json.Unmarshal(q[name], &s)
	return s
}

// lockURL is the endpoint a crawlcheck lockfile approved: the subject of a
// check that names no other.
func (q request) lockURL() string {
	raw := q["lock"]
	var text string
	if json.Unmarshal(raw, &text) == nil {
		raw = json.RawMessage(text)
	}
	var l struct {
		Server struct{ URL string } `json:"server"`
	}
	json.Unmarshal(raw, &l)
	return l.Server.URL
}

// readServer reads the live server at url with the issuer's deadline.
func (s *Issuer) readServer(r *http.Request, url string) Reading {
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.ReadLimit)
	defer cancel()
	return read(ctx, s.hc, url, s.cfg.PageCap)
}

func (s *Issuer) lockCheck(w http.ResponseWriter, r *http.Request) {
	q, ok := readRequest(w, r)
	if !ok {
		return
	}
	subject := q.str("subject")
	delete(q, "subject")
	if url := q.str("url"); url != "" {
		delete(q, "url")
		rd := s.readServer(r, url)
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
	if subject = orLockURL(w, q, subject); subject != "" {
		s.answer(w, s.sign("crawlcheck-mcp-lock-check", subject, q, false))
	}
}

// orLockURL is the subject of a check: the endpoint read, or named, or else
// the one the lockfile approved. With none it answers 400 and returns "".
func orLockURL(w http.ResponseWriter, q request, subject string) string {
	if subject == "" {
		subject = q.lockURL()
	}
	if subject == "" {
		badRequest(w, "the request names no endpoint (subject, url or observed.endpoint) and the lockfile approved none")
	}
	return subject
}

func (s *Issuer) decide(w http.ResponseWriter, r *http.Request) {
	q, ok := readRequest(w, r)
	if !ok {
		return
	}
	if url := q.str("url"); url != "" {
		delete(q, "url")
		rd := s.readServer(r, url)
		observed := map[string]any{"endpoint": rd.Endpoint}
		if rd.Failure != "" {
			observed["failure"], observed["failure_detail"] = rd.Failure, rd.FailureDetail
		} else {
			observed["pages"], observed["handshake"] = rd.Pages, "initialize"
			observed["protocol_version"], observed["page_cap_reached"] = rd.ProtocolVersion, rd.PageCapReached
			if rd.ServerInfo != nil {
				observed["server_info"] = rd.ServerInfo
			}
		}
		q["observed"] = mustJSON(observed)
	}
	var obs struct{ Endpoint string }
	json.Unmarshal(q["observed"], &obs)
	if subject := orLockURL(w, q, obs.Endpoint); subject != "" {
		s.answer(w, s.sign("crawlcheck-preflight-decision", subject, q, true))
	}
}

// mustJSON marshals a plain value, without the HTML escaping of
// json.Marshal: bytes passed on stay as received.
func mustJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("service: marshal of a plain value: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
