package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/preflight"
)

// settingsFlags are the deployment's side of a check.
type settingsFlags struct {
	mode, policy, expectedVersion, issuerKeys, serverName string
	operatorKeys                                          stringList
}

func (s *settingsFlags) register(fs *flag.FlagSet) {
	// No default of the CLI's own: without --mode the request has none and
	// the core's default applies, as for every other host.
	fs.StringVar(&s.mode, "mode", "", "observe, review or enforce (default: the core's, enforce)")
	fs.StringVar(&s.policy, "policy", "", "the operator's policy document `FILE` (default: the default policy)")
	fs.StringVar(&s.expectedVersion, "expected-policy-version", "", "the policy `VERSION` the deployment expects")
	fs.Var(&s.operatorKeys, "operator-key", "an operator public key file `PUB` (repeatable); a signed baseline is then required")
	fs.StringVar(&s.issuerKeys, "issuer-keys", "", "the issuer's key directory `FILE`")
	fs.StringVar(&s.serverName, "server-name", "", "which server of an agentgate.lock to check")
}

// settings reads the files the flags name.
func (s *settingsFlags) settings() (preflight.Settings, error) {
	set := preflight.Settings{Mode: s.mode, ServerName: s.serverName, ExpectedPolicyVersion: s.expectedVersion}
	var err error
	if s.policy != "" {
		if set.Policy, err = readInput("the policy", s.policy); err != nil {
			return set, err
		}
	}
	if s.issuerKeys != "" {
		if set.KeyDirectory, err = readInput("the key directory", s.issuerKeys); err != nil {
			return set, err
		}
	}
	for _, p := range s.operatorKeys {
		k, err := readKey("the operator key", p)
		if err != nil {
			return set, err
		}
		set.OperatorKeys = append(set.OperatorKeys, k)
	}
	return set, nil
}

// cmdCheck runs the continuity check of a server against its lockfile and
// prints the record. Exit 0 when the record lets everything proceed.
func cmdCheck(c *cli, args []string) error {
	fs := c.flagSet("check")
	lockPath := fs.String("lock", "", "the approved lockfile `FILE` (required)")
	var src sourceFlags
	src.register(fs)
	var sf settingsFlags
	sf.register(fs)
	var isf issuerFlags
	isf.register(fs)
	asJSON := fs.Bool("json", false, "print the record itself (canonical JSON, one line)")
	logPath := fs.String("log", "", "append the record to the JSON-lines log `FILE`, chained to its last record")
	pilotFlag := fs.String("pilot", "", "upload the --log records the issuer's pilot has not acknowledged, beside the check and after its verdict: `URL,ID,TOKEN-FILE[,KEY-FILE]` (the issuer, the pilot id, a file holding its token, and for a pilot made with a record key a file holding that key, which signs each upload); a failed upload is only reported, and what waits is sent next time")
	pilotTimeout := fs.Duration("pilot-timeout", 3*time.Second, "how long the upload may hold the exit after the verdict")
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
	if *lockPath == "" {
		return usagef("--lock is required")
	}
	pilot, err := pilotOf(*pilotFlag, *logPath)
	if err != nil {
		return err
	}
	if isf.url != "" && src.tools != "" && src.url == "" {
		return usagef("--issuer: a receipt speaks about an endpoint: with --tools, name the server with --url")
	}
	// The modes are the core's (its rule table): a mode given is refused
	// before any byte is sent. The default is not looked up (asking the
	// core for its rule table was 0.9 ms of every check).
	if sf.mode != "" && !slices.Contains(preflight.Modes(), sf.mode) {
		return usagef("--mode %q: one of %s", sf.mode, strings.Join(preflight.Modes(), ", "))
	}
	settings, err := sf.settings()
	if err != nil {
		return err
	}
	now, err := c.clock()
	if err != nil {
		return err
	}
	lock, tg, err := loadLock(*lockPath, &src, now, settings)
	if err != nil {
		return err
	}
	var log *preflight.Log
	if *logPath != "" {
		if log, err = preflight.OpenLog(*logPath); err != nil {
			return err
		}
		defer log.Close()
	}
	var upload *pilotUpload
	if pilot != nil {
		// In the background of the check: what earlier runs left waiting
		// is sent while this one reads the server.
		upload = startUpload(*pilot, *logPath)
		defer upload.stop()
	}
	issuer, err := isf.client(settings.KeyDirectory, *logPath)
	if err != nil {
		return err
	}
	// The issuer's transparency log (docs/log.md): a tlog-proof beside the
	// lockfile is verified at every check, against the checkpoint kept
	// beside the log (in memory for this run without --log).
	proof, err := preflight.ReadProof(*lockPath)
	if err != nil {
		return err
	}
	var kept *preflight.Checkpoints
	if proof != "" {
		// Judged by the baseline's keys: --issuer-keys, or the pins with the
		// directory fetched at this check (docs/log.md).
		if settings.KeyDirectory == nil && (issuer == nil || len(isf.pins) == 0) {
			return usagef("%s is verified against the issuer's log by its keys: give --issuer-keys FILE or --issuer URL --issuer-pin KID:PUBKEY", preflight.ProofPath(*lockPath))
		}
		state := ""
		if *logPath != "" {
			state = preflight.CheckpointPath(*logPath)
		}
		if kept, err = preflight.OpenCheckpoints(state); err != nil {
			return err
		}
	}
	// Observe mode exits 0 on a change enforce would refuse: a person is
	// told on stderr the engine's notice (once for each distinct would: a
	// refresh's second record that finds the same says nothing more), as
	// the SDKs do (issue 34). stderr, so --json's stdout stays the record.
	emit := func(rec preflight.Record, keep string, cons preflight.Consultation, obs preflight.Observation) error {
		if rec.Handoff != nil && rec.Handoff.Notice != "" {
			say(c.stderr, "%s\n", rec.Handoff.Notice)
		}
		if log != nil {
			if err := log.Append(rec); err != nil {
				return err
			}
		}
		if kept != nil && keep != "" {
			if err := kept.Keep(keep); err != nil {
				return err
			}
		}
		if *asJSON {
			machine(c.stdout, rec.Raw)
			return nil
		}
		// One write, not one a line: a record of 1,000 tools was as many
		// write calls (issue 23).
		out := bufio.NewWriter(c.stdout)
		printRecord(out, rec)
		// The person who re-approves reads these tools next: show what the
		// scan finds in them now (the record does not carry it: docs/decisions.md).
		printScanOf(out, "\nscan of the changed tools", obs, changedTools(rec))
		if issuer != nil {
			printConsultation(out, isf.url, cons)
		}
		_ = out.Flush() // as say: what cannot be printed does not change the verdict
		return nil
	}
	// The check and its one more check (check_again) are one session of
	// the core's engine, which marks the second refreshed.
	var engine preflight.Engine
	check := func(prev string) (preflight.Record, bool, error) {
		obs, err := tg.observe(c)
		if err != nil {
			return preflight.Record{}, false, err
		}
		req := preflight.Request{
			Settings: settings, Lock: lock, Observation: obs, Now: now,
			PrevRecordSHA256: prev, HandsNoTools: true,
		}
		if kept != nil {
			req.Log = kept.Input(context.Background(), proof, issuer)
		}
		var cons preflight.Consultation
		if issuer != nil {
			q := preflight.ServiceQuery{Lock: lock, Settings: settings, Observation: obs, Now: now}
			if cons, err = issuer.Consult(context.Background(), q); err != nil {
				return preflight.Record{}, false, err
			}
			req.Use(cons)
		}
		st, err := engine.Check(req, 0)
		if err != nil {
			return preflight.Record{}, false, err
		}
		if req.Log != nil && req.Log.Unavailable != "" {
			// The record says consistency_unavailable in the core's words;
			// the cause (no issuer, or its error) is the host's to say.
			say(c.stderr, "crawlcheck: log: %s\n", req.Log.Unavailable)
		}
		return *st.Record, st.CheckAgain, emit(*st.Record, st.Keep, cons.Recorded(*st.Record), obs)
	}
	prev := ""
	if log != nil {
		prev = log.Head()
	}
	if tg.args != nil {
		// The package the command line launches, compared before the
		// server runs: another version or tarball is denied unstarted.
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		pre, err := launchedBeforeStart(ctx, tg, preflight.Request{Settings: settings, Lock: lock, Now: now, PrevRecordSHA256: prev, HandsNoTools: true})
		cancel()
		if err != nil {
			return err
		}
		if pre != nil {
			if err := emit(*pre, "", preflight.Consultation{}, preflight.Observation{}); err != nil {
				return err
			}
			why := (&preflight.RefusedError{Effect: pre.Effect, Record: *pre}).Error()
			return blocked("%s: %s (the server was not started)", pre.Effect, strings.TrimPrefix(why, "crawlcheck: "))
		}
	}
	rec, again, err := check(prev)
	if err == nil && again {
		// The rules' refresh: check once more (asking the issuer again:
		// refresh is how an expired or replayed receipt is answered);
		// refresh then means pause.
		if !*asJSON {
			say(c.stdout, "\nrefresh: checking once more\n")
		}
		rec, _, err = check(rec.RecordSHA256)
	}
	if err != nil {
		return err
	}
	if upload != nil {
		// The verdict is fixed: the upload never changes it, and holds the
		// exit at most --pilot-timeout. What the issuer did not acknowledge
		// stays in the log for the next run.
		if n, err := upload.finish(*pilotTimeout); err != nil {
			say(c.stderr, "crawlcheck: pilot: %d records acknowledged; the rest wait in %s for the next run: %s\n", n, *logPath, err)
		}
	}
	// Whether the check passes is the session engine's verdict (its hand
	// action's passes: everything offered handed over).
	if h := rec.Handoff; h == nil || !h.Passes {
		// The core's words of why, as every SDK raises them: which
		// observations decided and what differed (an identity mismatch
		// names the server approved and the one answering).
		why := (&preflight.RefusedError{Effect: rec.Effect, Record: rec}).Error()
		return blocked("%s: %s", rec.Effect, strings.TrimPrefix(why, "crawlcheck: "))
	}
	return nil
}

// pilotUpload is check --pilot's upload: one process has no background
// beyond its own run, so the upload runs beside the check (the records
// earlier runs left waiting) and, once the verdict is out, sends what the
// check added, both within --pilot-timeout of the verdict.
type pilotUpload struct {
	p       preflight.Pilot
	logPath string
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	n       int
	err     error
}

func startUpload(p preflight.Pilot, logPath string) *pilotUpload {
	ctx, cancel := context.WithCancel(context.Background())
	u := &pilotUpload{p: p, logPath: logPath, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(u.done)
		u.n, u.err = preflight.UploadPending(ctx, p, logPath)
	}()
	return u
}

// finish waits for the upload begun beside the check, then sends the
// records since, all within timeout; it answers what was acknowledged and
// the last failure.
func (u *pilotUpload) finish(timeout time.Duration) (int, error) {
	t := time.AfterFunc(timeout, u.cancel)
	defer t.Stop()
	<-u.done
	if u.ctx.Err() != nil {
		return u.n, u.err
	}
	n, err := preflight.UploadPending(u.ctx, u.p, u.logPath)
	return u.n + n, err
}

// stop ends an upload the check did not finish (it failed before a
// verdict), so the ack file is never left half written.
func (u *pilotUpload) stop() {
	u.cancel()
	<-u.done
}

// pilotOf reads --pilot URL,ID,TOKEN-FILE[,KEY-FILE]; the token and the
// record key are read from their files (a command line is visible to every
// user of the machine). A record key (issue 37, F7: a pilot made with one
// takes only uploads signed with it) is checked now by the core's
// public_key, so that a wrong file is exit 2 rather than every upload
// failing on stderr.
func pilotOf(spec, logPath string) (*preflight.Pilot, error) {
	if spec == "" {
		return nil, nil
	}
	parts := strings.Split(spec, ",")
	if len(parts) < 3 || len(parts) > 4 || slices.Contains(parts, "") {
		return nil, usagef("--pilot %q: want URL,ID,TOKEN-FILE[,KEY-FILE]", spec)
	}
	if logPath == "" {
		return nil, usagef("--pilot uploads the record log: give --log FILE")
	}
	if u, err := url.Parse(parts[0]); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, usagef("--pilot: %q is not an http(s) URL", parts[0])
	}
	token, err := readInput("the pilot token", parts[2])
	if err != nil {
		return nil, err
	}
	p := &preflight.Pilot{URL: parts[0], ID: parts[1], Token: strings.TrimSpace(string(token))}
	if len(parts) == 4 {
		key, err := readInput("the pilot's record key", parts[3])
		if err != nil {
			return nil, err
		}
		p.RecordKey = strings.TrimSpace(string(key))
		var pub struct{}
		if err := corecall.Into("public_key", map[string]any{"private_key": p.RecordKey}, &pub); err != nil {
			return nil, usagef("--pilot: %s does not hold a pilot's record key (the record_key POST /api/v1/pilot?record_key=true answered): %v", parts[3], err)
		}
	}
	return p, nil
}

// issuerFlags configure the service path (docs/cli.md, check --issuer).
type issuerFlags struct {
	url     string
	pins    stringList
	timeout time.Duration
}

func (f *issuerFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "issuer", "", "ask the issuer at `URL` for a signed lock check and let the policy judge it")
	fs.Var(&f.pins, "issuer-pin", "pin an issuer key `KID:PUBKEY` (repeatable); without --issuer-keys, the issuer's own key directory is fetched and used only for pinned keys")
	fs.DurationVar(&f.timeout, "issuer-timeout", preflight.DefaultIssuerTimeout, "bound on asking the issuer (its key directory and the lock check)")
}

// client returns the issuer client the flags configure, nil without
// --issuer. The replay state is kept next to the log when there is one,
// else in memory for this run.
func (f *issuerFlags) client(keyDirectory []byte, logPath string) (*preflight.IssuerClient, error) {
	if f.url == "" {
		if len(f.pins) > 0 {
			return nil, usagef("--issuer-pin without --issuer")
		}
		return nil, nil
	}
	if f.timeout <= 0 {
		return nil, usagef("--issuer-timeout must be positive")
	}
	cfg := preflight.Issuer{URL: f.url, Timeout: f.timeout}
	for _, p := range f.pins {
		kid, pub, ok := strings.Cut(p, ":")
		if !ok || kid == "" || pub == "" {
			return nil, usagef("--issuer-pin %q: want KID:PUBKEY (the base64 Ed25519 public key)", p)
		}
		cfg.PinnedKeys = append(cfg.PinnedKeys, preflight.PinnedKey{KID: kid, PublicKey: pub})
	}
	if keyDirectory == nil && len(cfg.PinnedKeys) == 0 {
		return nil, usagef("--issuer needs keys to judge its answers by: --issuer-keys FILE (your copy of its key directory) or --issuer-pin KID:PUBKEY")
	}
	state := ""
	if logPath != "" {
		state = preflight.NonceStatePath(logPath)
	}
	return preflight.NewIssuerClient(cfg, keyDirectory, state)
}

// printConsultation writes what the issuer said, after the record that
// carries it as evidence: why it was unavailable in the record's words
// (the core's, from the fault the host saw: Consultation.Recorded).
func printConsultation(w io.Writer, url string, cons preflight.Consultation) {
	switch {
	case !cons.Asked:
		say(w, "issuer    %s: not asked: no whole tool list was read\n", url)
	case cons.Unavailable != "":
		say(w, "issuer    %s: unavailable (%s); the local comparison is the fallback\n", url, cons.Unavailable)
	default:
		var names []string
		for _, e := range cons.Evidence {
			names = append(names, e.Observation)
		}
		say(w, "issuer    %s: %s (evidence level %s)", url, cons.PolicyResult, cons.EvidenceLevel)
		if len(names) > 0 {
			say(w, ": %s", strings.Join(names, ", "))
		}
		say(w, "\n")
	}
}

// loadLock reads and parses the lockfile (a missing, unreadable or
// unsupported one is an error, never a check against nothing) and resolves
// the target: the source flags, else the endpoint the lockfile pins.
func loadLock(path string, src *sourceFlags, now time.Time, settings preflight.Settings) ([]byte, target, error) {
	lock, err := readInput("the lockfile", path)
	if err != nil {
		return nil, target{}, err
	}
	info, err := preflight.ReadLock(lock, now, settings)
	if err != nil {
		return nil, target{}, fmt.Errorf("lockfile %s: %w", path, err)
	}
	tg, ok, err := src.target()
	if err != nil || ok {
		return lock, tg, err
	}
	if info.URL == "" {
		return nil, target{}, usagef("the lockfile pins no endpoint: give --tools, --server, --url or --sse")
	}
	tg, err = endpointTarget(info.URL)
	if err == nil && hidesCredential(tg) {
		// The core wrote the server's credential as REDACTED (docs/continuity.md,
		// Credentials in an endpoint): started from the lockfile alone, the
		// server would be handed the word REDACTED as its token or password
		// and fail as if it were broken, or be sent it over the network.
		return nil, target{}, usagef("lockfile %s: its server %s holds a credential the lockfile hides (REDACTED): name the server as you start it, --server \"CMD ARGS\" or --url URL (its identity is compared without the credential)", path, info.URL)
	}
	if err != nil || !src.headers.given() {
		return lock, tg, err
	}
	if tg.url == "" {
		return nil, target{}, usagef("--header, --header-env, --bearer-env and --header-file go with an HTTP server; the lockfile pins a stdio one")
	}
	tg.headers, err = src.headers.resolve()
	return lock, tg, err
}

// hiddenCredential is how the core's endpoint op writes a credential's
// value (core/internal/endpoint.Hidden).
const hiddenCredential = "REDACTED"

// hidesCredential reports whether a target read from a lockfile carries a
// credential the core hid: an argument or URL holding its hidden form.
func hidesCredential(tg target) bool {
	if strings.Contains(tg.url, hiddenCredential) {
		return true
	}
	for _, a := range tg.args {
		if strings.Contains(a, hiddenCredential) {
			return true
		}
	}
	return false
}
