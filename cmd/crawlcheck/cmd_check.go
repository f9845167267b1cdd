package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"time"

	preflight "github.com/crawlcheck/verifier/bindings/go"
)

// settingsFlags are the deployment's side of a check.
type settingsFlags struct {
	mode, policy, expectedVersion, issuerKeys, serverName string
	operatorKeys                                          stringList
}

func (s *settingsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.mode, "mode", "enforce", "observe, review or enforce")
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
	asJSON := fs.Bool("json", false, "print the record itself (canonical JSON, one line)")
	logPath := fs.String("log", "", "append the record to the JSON-lines log `FILE`, chained to its last record")
	if _, err := c.parse(fs, args, 0); err != nil {
		return err
	}
	if *lockPath == "" {
		return usagef("--lock is required")
	}
	if sf.mode != "observe" && sf.mode != "review" && sf.mode != "enforce" {
		return usagef("--mode %q: observe, review or enforce", sf.mode)
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
	emit := func(rec preflight.Record) error {
		if log != nil {
			if err := log.Append(rec); err != nil {
				return err
			}
		}
		if *asJSON {
			fmt.Fprintf(c.stdout, "%s\n", rec.Raw)
		} else {
			printRecord(c.stdout, rec)
		}
		return nil
	}
	check := func(refreshed bool, prev string) (preflight.Record, error) {
		obs, err := tg.observe(c)
		if err != nil {
			return preflight.Record{}, err
		}
		rec, err := preflight.Check(preflight.Request{
			Settings: settings, Lock: lock, Observation: obs, Now: now,
			PrevRecordSHA256: prev, Refreshed: refreshed,
		})
		if err != nil {
			return rec, err
		}
		return rec, emit(rec)
	}
	prev := ""
	if log != nil {
		prev = log.Head()
	}
	rec, err := check(false, prev)
	if err == nil && rec.Effect == preflight.EffectRefresh {
		// The rules' refresh: check once more; refresh then means pause.
		if !*asJSON {
			fmt.Fprintln(c.stdout, "\nrefresh: checking once more")
		}
		rec, err = check(true, rec.SHA256)
	}
	if err != nil {
		return err
	}
	if !preflight.Proceeds(rec.Effect) {
		return blocked("%s", rec.Effect)
	}
	return nil
}

// loadLock reads and parses the lockfile (a missing, unreadable or
// unsupported one is an error, never a check against nothing) and resolves
// the target: the source flags, else the endpoint the lockfile pins.
func loadLock(path string, src *sourceFlags, now time.Time, settings preflight.Settings) ([]byte, target, error) {
	lock, err := readInput("the lockfile", path)
	if err != nil {
		return nil, target{}, err
	}
	if _, err := preflight.ReadLock(lock, now, settings); err != nil {
		return nil, target{}, fmt.Errorf("lockfile %s: %w", path, err)
	}
	tg, ok, err := src.target()
	if err != nil || ok {
		return lock, tg, err
	}
	ep := lockEndpoint(lock)
	if ep == "" {
		return nil, target{}, usagef("the lockfile pins no endpoint: give --tools, --server or --url")
	}
	tg, err = targetOf(ep)
	return lock, tg, err
}

// lockEndpoint is the server.url of a crawlcheck lockfile ("" for an
// agentgate.lock, which names no endpoint).
func lockEndpoint(lock []byte) string {
	var l struct {
		Server struct {
			URL string `json:"url"`
		} `json:"server"`
	}
	_ = json.Unmarshal(lock, &l) // the core has parsed it already
	return l.Server.URL
}
