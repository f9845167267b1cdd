// Package service is the test issuer: crawlcheck-issuer's own service
// (internal/issuer/service) signing with the test keys of testdata/keys,
// reading loopback servers over plain http, on a throwaway SQLite store —
// plus knobs that make it misbehave the ways a host must survive
// (docs/receipts.md, "The test issuer"). Every host test of signed evidence
// therefore runs against the real service's code; only the knobs are the
// fixture's.
package service

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/crawlcheck/verifier/core"
	"github.com/crawlcheck/verifier/internal/issuer/fetch"
	"github.com/crawlcheck/verifier/internal/issuer/keys"
	issuer "github.com/crawlcheck/verifier/internal/issuer/service"
	"github.com/crawlcheck/verifier/internal/issuer/store"
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
	// Down makes /api/ answer "503" (Service Unavailable), "500" (Internal
	// Server Error), "hang" (never answer until the client gives up),
	// "garbage" (200 with a body that is not JSON, as a captive portal or a
	// broken proxy answers) or "huge" (200 with a body one byte longer than
	// a host reads of an issuer: core.MaxIssuerAnswerBytes).
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
	case k.Down != "" && k.Down != "503" && k.Down != "500" && k.Down != "hang" && k.Down != "garbage" && k.Down != "huge":
		return fmt.Errorf("down must be 503, 500, hang, garbage or huge, got %q", k.Down)
	}
	return nil
}

// Config configures a test issuer.
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
	svc   *issuer.Service
	st    store.Store
	dir   string
	mu    sync.Mutex
	knobs Knobs
}

// New makes a test issuer; Close removes its store.
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
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = log.New(io.Discard, "", 0)
	}
	dir, err := os.MkdirTemp("", "crawlcheck-test-issuer-")
	if err != nil {
		return nil, err
	}
	st, err := store.OpenSQLite(context.Background(), filepath.Join(dir, "issuer.db"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	iss := &Issuer{cfg: cfg, st: st, dir: dir, knobs: cfg.Knobs}
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	iss.svc, err = issuer.New(context.Background(), issuer.Config{
		Keys: testKeys{iss}, Store: st, Lifetime: cfg.Lifetime, ReadLimit: cfg.ReadLimit,
		Fetch: fetch.New(fetch.Policy{AllowHTTP: true, AllowPrivate: loopback, PageCap: cfg.PageCap}),
		Now:   cfg.Now, Logger: cfg.Logger, Faults: faults{iss},
		// The hosts ask anonymously (their checkpoint tests have the fixture
		// sign a lockfile of a scenario server it reads): the operator's leave
		// for observed lockfiles, which crawlcheck-issuer gives only with
		// --anonymous-locks (docs/issuer.md, Trust model).
		AnonymousLocks: true,
		// Host tests read the scenario server as fast as they like.
		RatePerSecond: 1000, RateBurst: 1000,
	})
	if err != nil {
		iss.Close()
		return nil, err
	}
	return iss, nil
}

// Close closes the store and removes it.
func (s *Issuer) Close() {
	s.st.Close()
	os.RemoveAll(s.dir)
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

// Handler serves the service's API (docs/issuer.md) and the admin
// endpoints:
//
//	GET /admin/knobs, POST /admin/knobs {Knobs}
func (s *Issuer) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", s.svc.Handler())
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

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// testKeys is the test keys as the service's key source: the active key
// signs (the knobs swap it per receipt), the test directory is served.
type testKeys struct{ s *Issuer }

func (k testKeys) Signer(time.Time) (keys.Signer, error) {
	return keys.Signer{KID: k.s.cfg.Keys.Active.KID, Seed: k.s.cfg.Keys.Active.Seed}, nil
}

func (k testKeys) Directory(time.Time) (json.RawMessage, error) { return k.s.cfg.Directory, nil }

func (k testKeys) History() (json.RawMessage, error) {
	var d map[string]any
	if err := json.Unmarshal(k.s.cfg.Directory, &d); err != nil {
		return nil, err
	}
	ks, _ := d["keys"].([]any)
	for _, e := range ks {
		if m, ok := e.(map[string]any); ok {
			m["status"] = "active"
			delete(m, "not_before")
			delete(m, "not_after")
		}
	}
	return json.Marshal(d)
}

func (k testKeys) Issuer() (string, error) { return k.s.cfg.Issuer, nil }

// faults are the knobs as the service's fault seam.
type faults struct{ s *Issuer }

func (f faults) Wrap(api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := f.s.currentKnobs()
		if k.Redirect != "" {
			http.Redirect(w, r, k.Redirect+r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		switch k.Down {
		case "503":
			http.Error(w, "test issuer: down", http.StatusServiceUnavailable)
		case "500":
			http.Error(w, "test issuer: broken", http.StatusInternalServerError)
		case "huge":
			// The request is read first, as an issuer does: unread, it
			// makes the close after 32 MiB a reset that can discard the
			// end of the answer before a slow client reads it.
			io.Copy(io.Discard, r.Body)
			// A JSON object, so only its length is wrong.
			w.Header().Set("Content-Type", "application/json")
			pad := core.MaxIssuerAnswerBytes + 1 - len(`{"pad":""}`)
			io.WriteString(w, `{"pad":"`+strings.Repeat("a", pad)+`"}`)
		case "hang":
			<-r.Context().Done()
		case "garbage":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><body>Sign in to the network to continue.</body></html>\n")
		default:
			api.ServeHTTP(w, r)
		}
	})
}

func (f faults) Envelope(e *issuer.Envelope) {
	k := f.s.currentKnobs()
	switch k.Key {
	case "retired":
		e.Key = keys.Signer{KID: f.s.cfg.Keys.Retired.KID, Seed: f.s.cfg.Keys.Retired.Seed}
	case "unknown":
		e.Key = keys.Signer{KID: f.s.cfg.Keys.Unknown.KID, Seed: f.s.cfg.Keys.Unknown.Seed}
	}
	if k.Late {
		e.IssuedAt = e.IssuedAt.Add(-time.Hour)
	}
	if k.ReuseNonce {
		e.Nonce = "reused-nonce-0000"
	}
	if k.Subject != "" {
		e.Subject = k.Subject
	}
}
