package preflight_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/preflight"
)

var update = flag.Bool("update", false, "rewrite testdata/pilot-upload.json from the test issuer (read the diff before committing)")

// pilotUpload is testdata/pilot-upload.json: a record log, and passes of an
// upload with the answers the test issuer gave each POST and the ack file
// each pass leaves. Go, JS and Python replay it (the same log and the same
// answers) and must leave the same ack bytes: the queue is the core's
// pilot_queue, never a host's own.
type pilotUpload struct {
	About  string       `json:"about"`
	Log    string       `json:"log"`
	Passes []uploadPass `json:"passes"`
}

type uploadPass struct {
	Name string `json:"name"`
	// AckBefore, when set, is written to the ack file before the pass.
	AckBefore *string `json:"ack_before,omitempty"`
	// Knobs are the test issuer's fault knobs during the pass (recording only).
	Knobs   string         `json:"knobs"`
	Answers []issuerAnswer `json:"answers"`
	// Acknowledged is the pass's count; Error the core's message when it
	// stopped on one (a host prefixes its own words); ChainGap whether
	// that is the issuer's chain gap.
	Acknowledged int     `json:"acknowledged"`
	Error        *string `json:"error"`
	ChainGap     bool    `json:"chain_gap"`
	// AckAfter is the ack file after the pass (null: there is none).
	AckAfter *string `json:"ack_after"`
}

// issuerAnswer is one POST: how many bytes were sent, and the answer.
type issuerAnswer struct {
	SentBytes int    `json:"sent_bytes"`
	Status    int    `json:"status"`
	Body      string `json:"body"`
}

const pilotUploadPath = "testdata/pilot-upload.json"

// TestPilotUploadGolden replays testdata/pilot-upload.json through the Go
// preflight; with -update it first records the file from the test issuer.
func TestPilotUploadGolden(t *testing.T) {
	path := repoPath(strings.Split(pilotUploadPath, "/")...)
	if *update {
		g := recordPilotUpload(t)
		b, _ := json.MarshalIndent(g, "", "  ")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/preflight -run TestPilotUploadGolden -update)", err)
	}
	var g pilotUpload
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "records.jsonl")
	os.WriteFile(logPath, []byte(g.Log), 0o600)
	for _, p := range g.Passes {
		srv := replayIssuer(t, p.Answers)
		if p.AckBefore != nil {
			os.WriteFile(preflight.PilotAckPath(logPath), []byte(*p.AckBefore), 0o600)
		}
		n, err := preflight.UploadPending(context.Background(), preflight.Pilot{URL: srv.URL, ID: "pilot-replay", Token: "t"}, logPath)
		ack, readErr := os.ReadFile(preflight.PilotAckPath(logPath))
		switch {
		case n != p.Acknowledged:
			t.Errorf("%s: %d acknowledged, want %d", p.Name, n, p.Acknowledged)
		case (err == nil) != (p.Error == nil) || err != nil && !strings.HasSuffix(err.Error(), *p.Error):
			want := "none"
			if p.Error != nil {
				want = *p.Error
			}
			t.Errorf("%s: error %v, want %s", p.Name, err, want)
		case errors.Is(err, preflight.ErrChainGap) != p.ChainGap:
			t.Errorf("%s: chain gap %v, want %v", p.Name, errors.Is(err, preflight.ErrChainGap), p.ChainGap)
		case p.AckAfter == nil && readErr == nil, p.AckAfter != nil && string(ack) != *p.AckAfter:
			want := "none"
			if p.AckAfter != nil {
				want = strconv.Quote(*p.AckAfter)
			}
			t.Errorf("%s: ack file %q (%v), want %s", p.Name, ack, readErr, want)
		}
		srv.done(t, p.Name)
	}
}

// replay serves recorded answers in order, each to a POST of the recorded
// size.
type replay struct {
	*httptest.Server
	mu      sync.Mutex
	answers []issuerAnswer
	errs    []string
}

func replayIssuer(t *testing.T, answers []issuerAnswer) *replay {
	r := &replay{answers: answers}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(r.answers) == 0 {
			r.errs = append(r.errs, fmt.Sprintf("a POST of %d bytes past the recorded answers", len(body)))
			w.WriteHeader(http.StatusTeapot)
			return
		}
		a := r.answers[0]
		r.answers = r.answers[1:]
		if len(body) != a.SentBytes {
			r.errs = append(r.errs, fmt.Sprintf("a POST of %d bytes where %d were recorded", len(body), a.SentBytes))
		}
		w.WriteHeader(a.Status)
		io.WriteString(w, a.Body)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *replay) done(t *testing.T, pass string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.answers) > 0 {
		r.errs = append(r.errs, fmt.Sprintf("%d recorded answers not asked for", len(r.answers)))
	}
	for _, e := range r.errs {
		t.Errorf("%s: %s", pass, e)
	}
}

// recordPilotUpload runs the passes against the test issuer through a
// recording proxy: a log of five chained records, the fourth edited after
// it was written (the issuer refuses it), so the fifth cannot follow what
// the pilot holds (a chain gap).
func recordPilotUpload(t *testing.T) pilotUpload {
	recs := chainedRecords(t, 5)
	recs[3] = strings.Replace(recs[3], `"mode":"enforce"`, `"mode":"observe"`, 1)
	log := strings.Join(recs, "\n") + "\n"
	iss := startIssuer(t)
	p := newPilot(t, iss)
	logPath := filepath.Join(t.TempDir(), "records.jsonl")
	os.WriteFile(logPath, []byte(log), 0o600)
	corrupt := "12 not-an-ack\n"
	g := pilotUpload{
		About: "A record log and passes of the pilot upload (docs/preflight.md, The pilot upload): before a pass, ack_before (when given) is written to the ack file; the pass POSTs sent_bytes at a time and is given each recorded answer; it acknowledges `acknowledged` lines, stops with `error` (the core's message; chain_gap: the issuer's chain gap) and leaves ack_after (null: no ack file). Every host replays it and must leave these bytes. Recorded from the test issuer by `go test ./internal/preflight -run TestPilotUploadGolden -update`.",
		Log:   log,
		Passes: []uploadPass{
			{Name: "the issuer down", Knobs: `{"down":"503"}`},
			{Name: "back: accepted, then the edited record, then a gap", Knobs: `{}`},
			{Name: "again after the gap: the ack holds, the gap answers again", Knobs: `{}`},
			{Name: "a corrupt ack file: sent again from the start, all held", Knobs: `{}`, AckBefore: &corrupt},
		},
	}
	for i := range g.Passes {
		pass := &g.Passes[i]
		iss.knobs(t, pass.Knobs)
		if pass.AckBefore != nil {
			os.WriteFile(preflight.PilotAckPath(logPath), []byte(*pass.AckBefore), 0o600)
		}
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			body, _ := io.ReadAll(req.Body)
			fwd, _ := http.NewRequest(req.Method, iss.url+req.URL.Path, bytes.NewReader(body))
			fwd.Header = req.Header.Clone()
			resp, err := http.DefaultClient.Do(fwd)
			if err != nil {
				t.Errorf("the proxy: %v", err)
				w.WriteHeader(http.StatusBadGateway)
				return
			}
			answer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			pass.Answers = append(pass.Answers, issuerAnswer{SentBytes: len(body), Status: resp.StatusCode, Body: string(answer)})
			w.WriteHeader(resp.StatusCode)
			w.Write(answer)
		}))
		n, err := preflight.UploadPending(context.Background(), preflight.Pilot{URL: proxy.URL, ID: p.ID, Token: p.Token}, logPath)
		proxy.Close()
		pass.Acknowledged = n
		if err != nil {
			msg := strings.TrimPrefix(strings.TrimPrefix(err.Error(), preflight.ErrChainGap.Error()+": "), "pilot: ")
			pass.Error, pass.ChainGap = &msg, errors.Is(err, preflight.ErrChainGap)
		}
		if ack, err := os.ReadFile(preflight.PilotAckPath(logPath)); err == nil {
			s := string(ack)
			pass.AckAfter = &s
		}
	}
	return g
}

// chainedRecords are n records continuity_check writes, each following the
// one before.
func chainedRecords(t *testing.T, n int) []string {
	var lock struct{ Lock json.RawMessage }
	page := `{"tools":[{"name":"echo","description":"Echo.","inputSchema":{"type":"object"}}]}`
	if err := corecall.Into("make_lock", map[string]any{"pages": []string{page}, "approved_at": "2026-10-01T00:00:00Z"}, &lock); err != nil {
		t.Fatal(err)
	}
	var recs []string
	prev := ""
	for range n {
		req := map[string]any{"now": "2026-10-07T10:45:00Z", "lock": lock.Lock, "mode": "enforce", "observed": map[string]any{"pages": []string{page}}}
		if prev != "" {
			req["prev_record_sha256"] = prev
		}
		raw, err := corecall.Call("continuity_check", req)
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			SHA string `json:"record_sha256"`
		}
		json.Unmarshal(raw, &rec)
		recs, prev = append(recs, string(raw)), rec.SHA
	}
	return recs
}
