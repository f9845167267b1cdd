package preflight

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/crawlcheck/verifier/core/timefmt"
	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/coreops"
)

// Lockfile formats, as verify_lock names them.
const (
	FormatCrawlcheck = "crawlcheck-mcp-lock"
	FormatAgentgate  = "agentgate.lock"
)

// LockInfo is the core's verify_lock answer about a lockfile.
type LockInfo struct {
	Format string `json:"format"`
	Trust  string `json:"trust"`
	Reason string `json:"reason"`
	KeyID  string `json:"key_id"`
	SHA256 string `json:"sha256"`
	Count  int    `json:"count"`
	Parts  string `json:"parts"`
	// Servers are the servers of an agentgate.lock (none for a crawlcheck
	// lockfile).
	Servers []string `json:"servers"`
	// ServerName is the agentgate.lock server the lockfile applies to by
	// the core's rule: Settings.ServerName, or the file's only server; ""
	// when there are several and none was named.
	ServerName string `json:"server_name"`
	// URL is the endpoint a crawlcheck lockfile pins (server.url); "" when
	// it pins none, and for an agentgate.lock, which names no endpoint.
	URL string `json:"url"`
}

// ReadLock parses and verifies a lockfile with the core (verify_lock): an
// error means the file is not a lockfile this core reads (wrong kind or
// version, a syntax error, a duplicate key, a Settings.ServerName the
// agentgate.lock does not have), so nothing may be checked against it.
// Untrusted is not an error: it is in Trust, and the continuity check turns
// it into baseline_untrusted.
func ReadLock(lock []byte, now time.Time, s Settings) (LockInfo, error) {
	req := coreops.VerifyLockRequest{Lock: lock, Now: timefmt.Format(now), OperatorKeys: orNil(s.OperatorKeys), KeyDirectory: s.KeyDirectory, ServerName: s.ServerName}
	var info LockInfo
	if err := req.Decode(&info); err != nil {
		return LockInfo{}, err
	}
	if info.Servers == nil {
		info.Servers = []string{}
	}
	return info, nil
}

// orNil is s, or nil when it is empty: a list the request then leaves out,
// as an empty list of operator keys always was (the core reads a given
// operator_keys, even [], as keys given).
func orNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// LockOptions say how MakeLock pins an observation.
type LockOptions struct {
	// Format is "crawlcheck" (the default) or "agentgate".
	Format string
	// Name is the server's name in an agentgate.lock.
	Name string
	// Into is an agentgate.lock to add the server to (or replace it in).
	Into []byte
	// Now is the approval time (approved_at, or the agentgate generatedAt).
	Now time.Time
	// SigningKey, when set, is the operator's base64 Ed25519 seed: the new
	// crawlcheck lockfile is signed with it (sign_lock).
	SigningKey string
}

// ErrIncomplete is returned by MakeLock for an observation that failed
// before a list was read. (A list cut short or malformed is refused by the
// core's make_lock: a lockfile pins the whole list or nothing.)
var ErrIncomplete = errors.New("no tool list was read")

// incompleteError is ErrIncomplete in the core's words.
type incompleteError struct{ words string }

func (e *incompleteError) Error() string        { return e.words }
func (e *incompleteError) Is(target error) bool { return target == ErrIncomplete }

// FailureError is nil when a tool list was read, and otherwise ErrIncomplete
// with the failure said for a person (an answer over the limit names the
// limit, where the bare fact would read "answer_too_large: 65536").
func (obs Observation) FailureError() error {
	if obs.Failure == "" {
		return nil
	}
	if obs.Failure == FailureTooLarge {
		return fmt.Errorf("%w: the server sent an answer of more than %s bytes, the answer limit", ErrIncomplete, obs.FailureDetail)
	}
	if obs.Failure == FaultUnauthorized || obs.Failure == FaultForbidden {
		// What to do about a login is the core's to word (the record's
		// detail): its refusal to pin a failed observation carries it.
		_, err := (&coreops.MakeLockRequest{Observed: observedJSON(obs), ApprovedAt: "1970-01-01T00:00:00.000Z"}).Call()
		return fmt.Errorf("%w: %v", ErrIncomplete, err)
	}
	if obs.FailureDetail == "" && obs.FailureAt == "" {
		// A capture failure: its code alone.
		return fmt.Errorf("%w: %s", ErrIncomplete, obs.Failure)
	}
	if obs.FailureDetail == "" {
		// A host fault: the core words it, as on a record ("the
		// handshake: command not found: NAME"), in its refusal to pin
		// facts that hold no list.
		var ce *corecall.Error
		_, err := (&coreops.MakeLockRequest{Observed: observedJSON(obs), ApprovedAt: "1970-01-01T00:00:00Z"}).Call()
		if errors.As(err, &ce) {
			return &incompleteError{ce.Message}
		}
		at := obs.FailureAt
		if obs.FailurePage > 0 {
			at = fmt.Sprintf("%s page %d", at, obs.FailurePage)
		}
		return fmt.Errorf("%w: %s at %s", ErrIncomplete, obs.Failure, at)
	}
	return fmt.Errorf("%w: %s: %s", ErrIncomplete, obs.Failure, obs.FailureDetail)
}

// MakeLock builds a lockfile from an observation with the core's make_lock
// (and sign_lock), which takes the observed facts (the pages as read, the
// endpoint, protocol version and serverInfo of the handshake) and decides
// what a lockfile pins of them. Writing it is the caller's act, and should
// follow a person's reading of what changed.
func MakeLock(obs Observation, o LockOptions) ([]byte, error) {
	if err := obs.FailureError(); err != nil {
		return nil, err
	}
	// The facts as observed: the core decides what of them a lockfile pins.
	req := coreops.MakeLockRequest{Observed: observedJSON(obs), ApprovedAt: timefmt.Format(o.Now)}
	switch o.Format {
	case "", "crawlcheck":
	case "agentgate":
		if o.SigningKey != "" {
			return nil, errors.New("an agentgate.lock cannot be signed; use the crawlcheck format to sign")
		}
		req.Format, req.Name, req.Into = "agentgate", o.Name, o.Into
	default:
		return nil, fmt.Errorf("unknown lockfile format %q (crawlcheck or agentgate)", o.Format)
	}
	// The answer is {"lock": the lockfile as a string}, canonical JSON, so
	// its one member is sliced out of it and read as the core writes a
	// string (canonicalString), where encoding/json scanned and unquoted a
	// 1,000-tool lockfile by reflection (a tenth of crawlcheck lock
	// --server's CPU).
	raw, err := req.Call()
	if err != nil {
		return nil, err
	}
	str, ok := bytes.CutPrefix(raw, []byte(`{"lock":`))
	if !ok || !bytes.HasSuffix(str, []byte("}")) {
		return nil, fmt.Errorf("make_lock: the core's answer is not {\"lock\":...}: %.100s", raw)
	}
	made, err := canonicalString(str[:len(str)-1])
	if err != nil {
		return nil, fmt.Errorf("make_lock: reading the core's answer: %w", err)
	}
	if o.SigningKey == "" {
		return []byte(made), nil
	}
	return SignLock([]byte(made), o.SigningKey)
}

// ApproveOptions say what a person approved and how the new lockfile is
// made (Approve).
type ApproveOptions struct {
	// Names are the tools whose changes the person was shown and approved.
	Names []string
	// Now is the approval time.
	Now time.Time
	// ServerName, when set, must be the agentgate.lock server the record
	// compared.
	ServerName string
	// PinObserved makes a new crawlcheck lockfile pin the observed server
	// (endpoint, protocol version, serverInfo) rather than what the record
	// saw of it (a continuity record) or the server the old lockfile pinned
	// (a lock_check answer): for a person who chose the server to approve.
	PinObserved bool
	// Instructions approves a change of the server's instructions
	// (instructions_changed): the person read their word diff. The new
	// lockfile then pins the observed server, as with PinObserved.
	Instructions bool
	// Features approves the prompts, resources, resource templates and
	// ui:// templates as offered now (approve_features): the person was
	// shown each changed item and its scan. Each list obs read is pinned
	// anew; one it did not read keeps its old pin. The new lockfile then
	// pins the observed server, as with PinObserved.
	Features bool
	// SigningKey, when set, is the operator's base64 Ed25519 seed: the new
	// crawlcheck lockfile is signed with it (sign_lock).
	SigningKey string
}

// Unnamed is an observation an approval may not leave unnamed.
type Unnamed struct {
	Tool        string `json:"tool"` // "" for an observation about the session
	Observation string `json:"observation"`
}

// ApprovalRefusedError is the core's refusal of an approval: it would have
// approved a change nobody named, or named a tool with no change. Nothing
// was written.
type ApprovalRefusedError struct {
	Unnamed    []Unnamed `json:"unnamed"`
	NotChanged []string  `json:"not_changed"`
	Reason     string    `json:"reason"`
}

func (e *ApprovalRefusedError) Error() string { return e.Reason }

// Approve asks the core (approve) for the lockfile that re-approves the
// tools of obs, given the record made from obs against lock (a continuity
// record's or lock_check answer's bytes) and the names a person approved.
// A refusal is an *ApprovalRefusedError; the core decides which
// observations may stay unnamed, so every binding refuses alike.
func Approve(record, lock []byte, obs Observation, o ApproveOptions) ([]byte, error) {
	req := coreops.ApproveRequest{Record: record, Lock: lock, ApprovedAt: timefmt.Format(o.Now), Names: o.Names, ServerName: o.ServerName}
	if o.Names == nil {
		req.Names = []string{}
	}
	switch {
	case obs.Failure != "":
		// No tool list: the core's answer on the record says why.
	case o.PinObserved || o.Instructions || o.Features:
		// The core pins what it decides of the observed facts.
		req.Observed = observedJSON(obs)
		if o.Instructions {
			req.ApproveInstructions = new(true)
		}
		if o.Features {
			req.ApproveFeatures = new(true)
		}
	default:
		req.Pages, req.PageCapReached = pagesOf(obs)
	}
	var a struct {
		ApprovalRefusedError
		Approved bool    `json:"approved"`
		Lock     *string `json:"lock"`
		Format   string  `json:"format"`
	}
	if err := req.Decode(&a); err != nil {
		return nil, err
	}
	if !a.Approved || a.Lock == nil {
		return nil, &a.ApprovalRefusedError
	}
	if o.SigningKey == "" {
		return []byte(*a.Lock), nil
	}
	// The core's sign_lock refuses an agentgate.lock (lock_unsupported).
	return SignLock([]byte(*a.Lock), o.SigningKey)
}

// SignLock signs a crawlcheck lockfile with an Ed25519 seed (base64) as an
// operator key (sign_lock); a signature it had is replaced.
func SignLock(lock []byte, key string) ([]byte, error) {
	signed, err := coreops.SignLock(coreops.SignLockRequest{Lock: lock, PrivateKey: key})
	return []byte(signed.Lock), err
}

// LockCheck is the core's crawlcheck-mcp-lock-check answer (the lockfile
// spec's check: any difference blocks, and so does a list not read whole).
type LockCheck struct {
	Raw            json.RawMessage `json:"-"`
	Verdict        string          `json:"verdict"`
	Decision       string          `json:"decision"`
	Added          []string        `json:"added"`
	Removed        []string        `json:"removed"`
	Modified       []string        `json:"modified"`
	ModifiedDetail []struct {
		Name            string          `json:"name"`
		Parts           []string        `json:"parts"`
		ToolChanged     bool            `json:"tool_changed"`
		DescriptionDiff json.RawMessage `json:"description_diff"`
	} `json:"modified_detail"`
	Unreachable *struct {
		Reason string `json:"reason"`
		Detail string `json:"detail"`
	} `json:"unreachable"`
}

// LockCheckFacts are the members of an observation lock_check (and each of
// ci_verdict's checks) takes: the pages read, or the host fault.
func LockCheckFacts(obs Observation) map[string]any {
	facts := observedJSON(obs)
	out := map[string]any{}
	for _, k := range []string{"pages", "page_cap_reached", "failure", "failure_detail", "failure_at", "failure_page", "timeout_ms", "failure_command", "exit_status", "stderr_tail", "resource_metadata"} {
		if v, ok := facts[k]; ok {
			out[k] = v
		}
	}
	return out
}

// CheckLock runs the core's lock_check of an observation against a
// lockfile (serverName picks an agentgate.lock's entry). It is the drift
// gate: no policy, no modes.
func CheckLock(lock []byte, serverName string, obs Observation) (LockCheck, error) {
	req := LockCheckFacts(obs)
	req["lock"] = corecall.Text(lock)
	if serverName != "" {
		req["server_name"] = serverName
	}
	raw, err := corecall.Call("lock_check", req)
	if err != nil {
		return LockCheck{}, err
	}
	var a LockCheck
	if err := json.Unmarshal(raw, &a); err != nil {
		return LockCheck{}, fmt.Errorf("lock_check: decoding the answer: %w", err)
	}
	a.Raw = raw
	return a, nil
}
