package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/fetch"
	"github.com/crawlcheck/verifier/internal/issuer/store"
	"github.com/crawlcheck/verifier/internal/issuer/sweep"
)

// A pilot's own servers in the registry sweep (docs/issuer.md, The registry
// sweep): POST /api/v1/pilot/{id}/servers {url, interval_s?} registers one,
// GET lists them. The pilot's report joins what the sweep sees on the
// servers it registered (visibility.go); registering is how a pilot asks for
// one to be swept and shown to it at all.

// MaxPilotServers bounds the endpoints one pilot may have swept: a pilot is
// free to open, and each endpoint is read forever.
const MaxPilotServers = 20

// MinPilotInterval is the shortest interval a pilot may ask for.
const MinPilotInterval = time.Hour

type pilotServer struct {
	URL       string  `json:"url"`
	Owner     string  `json:"owner"`
	IntervalS int64   `json:"interval_s"`
	LastAt    *string `json:"last_at"`
	Surface   *string `json:"surface"`
	// Instructions is the digest of the server's instructions the sweep
	// last read (docs/issuer.md, The registry sweep).
	Instructions *string `json:"instructions"`
	Error        *string `json:"error"`
}

func serverOf(e store.SweepEndpoint) pilotServer {
	ps := pilotServer{URL: e.URL, Owner: e.Owner, IntervalS: int64(e.Interval / time.Second)}
	if !e.Last.IsZero() {
		t := e.Last.Format("2006-01-02T15:04:05.000Z")
		ps.LastAt = &t
	}
	if e.Surface != "" {
		ps.Surface = &e.Surface
	}
	if e.Instructions != "" {
		ps.Instructions = &e.Instructions
	}
	if e.Error != "" {
		ps.Error = &e.Error
	}
	return ps
}

func (s *Service) pilotServers(w http.ResponseWriter, r *http.Request) {
	p, ok := s.pilotOf(w, r)
	if !ok {
		return
	}
	ss, ok := store.SweepOf(s.cfg.Store)
	if !ok {
		s.problem(w, http.StatusNotFound, "not_found", "this issuer keeps no registry sweep")
		return
	}
	owner := pilotOwner(p.ID)
	if r.Method == http.MethodGet {
		var mine []store.SweepEndpoint
		if err := s.timed("sweep_endpoints", func() (err error) { mine, err = ss.SweepEndpoints(r.Context(), owner); return }); err != nil {
			s.fail(w, &storeError{err})
			return
		}
		out := []pilotServer{}
		for _, e := range mine {
			out = append(out, serverOf(e))
		}
		writeBytes(w, http.StatusOK, "application/json", mustJSON(map[string]any{"servers": out}))
		return
	}
	q, ok := s.readRequest(w, r)
	if !ok {
		return
	}
	url := q.str("url")
	interval := sweep.DefaultInterval
	if raw, has := q["interval_s"]; has {
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil || n <= 0 {
			s.problem(w, http.StatusBadRequest, "bad_request", "interval_s is a whole number of seconds")
			return
		}
		interval = time.Duration(n) * time.Second
	}
	switch {
	case url == "":
		s.problem(w, http.StatusBadRequest, "bad_request", "url names the server to sweep")
		return
	case interval < MinPilotInterval:
		s.problem(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("a pilot's server is swept at most every %s", MinPilotInterval))
		return
	}
	sw, err := sweep.New(sweep.Config{Store: ss, Fetch: s.cfg.Fetch, Now: s.cfg.Now})
	if err != nil {
		s.fail(w, err)
		return
	}
	// The quota is the store's to hold (a count before the insert let two
	// registrations at once both pass it).
	err = s.timed("sweep_register", func() error { return sw.RegisterWithin(r.Context(), url, owner, interval, MaxPilotServers) })
	switch {
	case errors.Is(err, store.ErrOwnerFull):
		s.problem(w, http.StatusConflict, "conflict", fmt.Sprintf("a pilot has at most %d servers swept", MaxPilotServers))
		return
	case errors.Is(err, fetch.ErrRefused):
		s.problem(w, http.StatusForbidden, "endpoint_refused", err.Error())
		return
	case err != nil:
		s.fail(w, &storeError{err})
		return
	}
	all, err := ss.SweepEndpoints(r.Context(), "")
	if err != nil {
		s.fail(w, &storeError{err})
		return
	}
	for _, e := range all {
		switch {
		case e.URL != url:
		case e.Owner != owner:
			// Another owner's endpoint stays theirs, and nothing of their
			// row is answered (F7: not its interval, readings, surface or
			// error); what the sweep reads of it is shown to its owner only.
			s.problem(w, http.StatusConflict, "conflict", "this endpoint is registered by another owner: it is swept, and what the sweep reads of it is shown to that owner only")
			return
		default:
			writeBytes(w, http.StatusCreated, "application/json", mustJSON(serverOf(e)))
			return
		}
	}
	s.fail(w, &storeError{fmt.Errorf("the endpoint %s registered is not listed", url)})
}
