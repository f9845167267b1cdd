package preflight

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/crawlcheck/verifier/core/timefmt"
	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/coreops"
	"github.com/crawlcheck/verifier/internal/jsonframe"
)

// Settings are the inputs of a continuity check that come from the
// deployment rather than from the server (docs/continuity.md, Request).
type Settings struct {
	// Mode is "observe", "review" or "enforce"; "" leaves it out of the
	// request: the core's default (enforce) applies.
	Mode string
	// ServerName picks the entry of an agentgate.lock with several servers.
	ServerName string
	// Policy is the operator's policy document; nil means the default policy.
	Policy []byte
	// ExpectedPolicyVersion, when set, is the policy version the deployment
	// expects; another is policy_version_mismatch.
	ExpectedPolicyVersion string
	// OperatorKeys are base64 Ed25519 public keys of the operator. Giving
	// any makes a signed baseline required, unless the policy says otherwise.
	OperatorKeys []string
	// KeyDirectory is the issuer's key directory (docs/keys.md).
	KeyDirectory []byte
}

// Evidence is an observation a host reports from signed evidence or from
// asking the issuer (docs/continuity.md, evidence).
type Evidence struct {
	Observation string          `json:"observation"`
	Detail      json.RawMessage `json:"detail,omitempty"`
}

// Request is one continuity_check: the approved lockfile, what was
// observed, and the settings it is judged by.
type Request struct {
	Settings
	// Lock is the approved lockfile's bytes, handed to the core unparsed so
	// that its strict parser sees exactly what is on disk.
	Lock        []byte
	Observation Observation
	Now         time.Time
	Evidence    []Evidence
	// Issuer is what the issuer asked said, for the record; nil when none was.
	Issuer *IssuerTrace
	// PinnedKeys and FetchedKeyDirectory judge the baseline without
	// Settings.KeyDirectory: the issuer keys the deployment pinned, and the
	// issuer's live directory as fetched at this check (Request.Use), of
	// which only the pinned keys count (docs/keys.md).
	PinnedKeys          []PinnedKey
	FetchedKeyDirectory []byte
	// PrevRecordSHA256 chains this record to the one before it in a log.
	PrevRecordSHA256 string
	// HandsNoTools is for a host that hands no tools on (the CLI prints the
	// record): the core is asked for its handoff without the tool texts
	// (tool_texts false), and the Handoff's Tools are nil. Writing and
	// reading a 1,000-tool answer's texts was a quarter of crawlcheck check
	// --tools. The rest of the Handoff is as always.
	HandsNoTools bool
	// Log, when set, is the check of the issuer's transparency log: the
	// lockfile's tlog-proof against the checkpoint kept (needs
	// Settings.KeyDirectory, or PinnedKeys with FetchedKeyDirectory). The record's log member says which checkpoint
	// to keep from now on (Checkpoints.Keep).
	Log *LogInput
}

// Check runs the core's continuity check (continuity_handoff) as a session
// of one check (Engine): the record, and with it the core's Handoff — what
// the session does and the exact tools it may hand over. An error means
// the request itself was refused (a lockfile that does not parse, a policy
// that is invalid): there is no record, and the caller must not proceed.
// Everything the server did wrong is an observation in the record instead;
// the engine makes a check again as the record of what made the core
// refuse it (an unreadable live key directory, pages it cannot take).
// Record.Handoff.Session says when to check once more: a caller that
// does, checks on one Engine (Engine.Check), which marks it refreshed.
func Check(r Request) (Record, error) {
	var e Engine
	st, err := e.Check(r, 0)
	if err != nil {
		return Record{}, err
	}
	if st.Record == nil || st.Record.Handoff == nil {
		return Record{}, errors.New("preflight: the session engine answered a check without its record")
	}
	return *st.Record, nil
}

// checkRequest is the check event's check: continuity_handoff's request
// without recheck and refreshed, which the engine sets. A list, trace or
// log the request does not have is left out, never sent as null.
func checkRequest(r Request) coreops.ContinuityHandoffRequest {
	req := coreops.ContinuityHandoffRequest{
		Now: timefmt.Format(r.Now), Lock: r.Lock, Observed: observedJSON(r.Observation), Mode: r.Mode, ServerName: r.ServerName,
		Policy: r.Policy, ExpectedPolicyVersion: r.ExpectedPolicyVersion, OperatorKeys: orNil(r.OperatorKeys),
		KeyDirectory: r.KeyDirectory, FetchedKeyDirectory: r.FetchedKeyDirectory, PrevRecordSHA256: r.PrevRecordSHA256,
	}
	if len(r.PinnedKeys) > 0 {
		req.PinnedKeys = r.PinnedKeys
	}
	if len(r.Evidence) > 0 {
		req.Evidence = r.Evidence
	}
	if r.Issuer != nil {
		req.Issuer = r.Issuer
	}
	if r.Log != nil {
		req.Log = r.Log
	}
	if r.HandsNoTools {
		req.ToolTexts = new(false)
	}
	return req
}

// Handoff is the core's answer of what a host does after a check
// (docs/continuity.md, The handoff). A host decides none of it.
type Handoff struct {
	// Session is SessionProceed, SessionCheckAgain or SessionStop.
	Session string `json:"session"`
	// Tools are the tools the model may be offered, each the JSON object
	// the core wrote from what it hashed: parsed with the SDK's own type
	// and handed over as it is, nothing else.
	Tools    []HandedTool `json:"tools"`
	Withheld []string     `json:"withheld"`
	Calls    struct {
		Names    []string `json:"names"`
		Unlisted bool     `json:"unlisted"`
	} `json:"calls"`
	// Instructions is what the model may be given of the server's
	// instructions; nil: none.
	Instructions *string `json:"instructions"`
	// Features are the prompts, resources and resource templates the host
	// may hand over, by list ("prompts", "resources",
	// "resource_templates"); a list absent was not compared, and nothing
	// of it is handed over (session_features.go).
	Features map[string]HandedList `json:"features"`
	// Passes is the engine's verdict of the check for a command line's
	// exit status: the session proceeds and nothing offered is withheld.
	Passes bool `json:"passes"`
	// Notice is the line to tell a person of this record (the engine's
	// warn): in observe mode what enforce would have refused, in the
	// core's words, once for each distinct would of the session; "" for
	// nothing new to say.
	Notice string `json:"-"`
}

// HandedList is one list of a Handoff's Features.
type HandedList struct {
	// Items are the items to hand over, each the JSON object the core
	// wrote (its key alone, Item "", without texts: HandsNoTools).
	Items    []HandedItem `json:"items"`
	Withheld []string     `json:"withheld"`
}

// HandedItem is one prompt, resource or resource template of a
// HandedList: its name, uri or uriTemplate, and its object.
type HandedItem struct {
	Key  string `json:"key"`
	Item string `json:"item"`
}

// HandedTool is one tool of a Handoff.
type HandedTool struct {
	Name string `json:"name"`
	Tool string `json:"tool"`
}

// What a session does after a check (Handoff.Session).
const (
	SessionProceed    = "proceed"
	SessionCheckAgain = "check_again"
	SessionStop       = "stop"
)

// handoffOf reads the hand action of the session engine's answer: the
// core's canonical JSON, split in one pass (membersOfValid), each tool's
// text read straight out of its string (handedTools): through
// encoding/json, a 1,000-tool answer was scanned whole and every tool's
// escaped text unquoted by reflection, a sixth of crawlcheck check --tools
// (docs/benchmarks.md). tools false leaves the tools unread (the host hands
// none on).
func handoffOf(fields map[string]json.RawMessage, tools bool) (*Handoff, error) {
	var h Handoff
	for name, into := range map[string]any{"session": &h.Session, "withheld": &h.Withheld, "calls": &h.Calls, "instructions": &h.Instructions, "features": &h.Features, "passes": &h.Passes} {
		if fields[name] == nil {
			continue // never the core's: the zero value, which hands nothing over
		}
		if err := json.Unmarshal(fields[name], into); err != nil {
			return nil, fmt.Errorf("reading the core's handoff: %s: %w", name, err)
		}
	}
	if tools {
		var err error
		if h.Tools, err = handedTools(fields["tools"]); err != nil {
			return nil, fmt.Errorf("reading the core's handoff: tools: %w", err)
		}
	}
	return &h, nil
}

// handedTools reads the handoff's tools: an array of {"name","tool"}
// objects, both strings, in the core's canonical JSON (canonicalString).
func handedTools(arr []byte) ([]HandedTool, error) {
	if len(arr) < 2 || arr[0] != '[' {
		var out []HandedTool
		err := json.Unmarshal(arr, &out)
		return out, err
	}
	out := []HandedTool{}
	for i := 1; i < len(arr) && arr[i] != ']'; {
		end := jsonframe.SkipValidValue(arr, i)
		m, err := membersOfValid(arr[i:end])
		if err != nil {
			return nil, err
		}
		var t HandedTool
		if t.Name, err = canonicalString(m["name"]); err != nil {
			return nil, err
		}
		if t.Tool, err = canonicalString(m["tool"]); err != nil {
			return nil, err
		}
		out = append(out, t)
		if i = end; i < len(arr) && arr[i] == ',' {
			i++
		}
	}
	return out, nil
}

// canonicalString reads a JSON string the core wrote. RFC 8785 escapes
// nothing but '"', '\\' and the control characters (as \b, \f, \n, \r, \t,
// else \u00XX) and writes every other character as it is, so the text
// between the escapes is copied as it is; any other escape (never the
// core's) is left to encoding/json.
func canonicalString(b []byte) (string, error) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return jsonString(b)
	}
	s := b[1 : len(b)-1]
	i := bytes.IndexByte(s, '\\')
	if i < 0 {
		return string(s), nil
	}
	out := make([]byte, 0, len(s))
	for ; i >= 0; i = bytes.IndexByte(s, '\\') {
		out = append(out, s[:i]...)
		if i+1 == len(s) {
			return jsonString(b)
		}
		switch c := s[i+1]; c {
		case '"', '\\':
			out = append(out, c)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if i+6 > len(s) || s[i+2] != '0' || s[i+3] != '0' || s[i+4] > '1' || !isHex(s[i+5]) {
				return jsonString(b)
			}
			v, _ := strconv.ParseUint(string(s[i+4:i+6]), 16, 8)
			out = append(out, byte(v))
			s = s[i+6:]
			continue
		default:
			return jsonString(b)
		}
		s = s[i+2:]
	}
	return string(append(out, s...)), nil
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func jsonString(b []byte) (string, error) {
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}

// observedJSON is the request's observed member: the facts, as the capture
// saw them. The failure goes as it is, capture_failed included: the core
// decides how a record carries it (as server_unavailable, docs/abi.md).
func observedJSON(o Observation) map[string]any {
	obs := coreops.Observed{Endpoint: o.Endpoint, ProtocolVersion: o.ProtocolVersion, Handshake: o.Handshake}
	switch {
	case o.HandshakeResult != nil:
		// The bytes the server sent: the core reads serverInfo and
		// instructions of them, and one it cannot read is an observation,
		// never a refused request (issue 22, F6).
		obs.HandshakeResult = corecall.Page(o.HandshakeResult)
	case o.ServerInfo != nil:
		obs.ServerInfo = o.ServerInfo
	}
	if len(o.ClientCapabilities) > 0 && o.ClientCapabilities[0] == '{' {
		obs.ClientCapabilities = o.ClientCapabilities
	}
	obs.Pages, obs.PageCapReached = pagesOf(o)
	if o.StrayLines > 0 {
		obs.StrayLines = new(int64(o.StrayLines))
	}
	if o.Features != nil {
		obs.Features = featuresJSON(o.Features)
	}
	if len(o.Launched) > 0 {
		obs.Launched = o.Launched
	}
	if o.Failure != "" {
		obs.Failure, obs.FailureDetail, obs.FailureAt, obs.ResourceMetadata = o.Failure, o.FailureDetail, o.FailureAt, o.ResourceMetadata
		if o.FailurePage > 0 {
			obs.FailurePage = new(int64(o.FailurePage))
		}
		if o.Failure == FaultTimeout && o.Timeout >= time.Millisecond {
			obs.TimeoutMS = new(o.Timeout.Milliseconds())
		}
		if o.Failure == FaultCommandNotFound {
			obs.FailureCommand = o.Command
		}
		if o.Failure == FaultProcessExited && o.FailureAt == AtHandshake {
			if o.ExitStatus != nil {
				obs.ExitStatus = new(int64(*o.ExitStatus))
			}
			// Display text, never hashed: bytes that are not UTF-8 are
			// shown as U+FFFD (the JSON encoder would do it anyway).
			obs.StderrTail = strings.ToValidUTF8(o.StderrTail, "\uFFFD")
		}
	}
	return obs.Members()
}

// pagesOf is an observation's pages as a request's pages member takes
// them (corecall.Page: their text, or base64 for bytes that are not
// UTF-8), nil for no list (a failure before any page), and its
// page_cap_reached: nil unless the cap was reached.
func pagesOf(o Observation) (pages []any, capped *bool) {
	if o.PageCapReached {
		capped = new(true)
	}
	if len(o.Pages) == 0 && o.Failure != "" {
		return nil, capped
	}
	pages = make([]any, len(o.Pages))
	for i, p := range o.Pages {
		pages[i] = corecall.Page(p)
	}
	return pages, capped
}

// Record is a crawlcheck-continuity-record (docs/continuity.md, The
// record). Raw is the record as the core wrote it: canonical JSON on one
// line, the bytes record_sha256 covers; the other fields are read from it
// for the binding's own use.
type Record struct {
	Raw json.RawMessage
	// RecordSHA256 is the record's record_sha256 (each field is named
	// after the record's member, as the JS and Python SDKs keep them).
	RecordSHA256 string
	// PrevRecordSHA256 is the record's prev_record_sha256: the record
	// before it; "" for the first record of a chain.
	PrevRecordSHA256 string
	Mode             string
	Effect           string
	Tools            map[string]string
	// Features is each offered prompt's, resource's and resource
	// template's effect, by list ("prompts", "resources",
	// "resource_templates"), when the check compared them.
	Features     map[string]map[string]string
	Would        *Would
	Observations []Finding
	Observed     ObservedSummary
	// Storm is the record's storm: set on a re-check a list_changed storm
	// asked for (more than one notification coalesced, or held back).
	Storm *Recheck
	// Handoff is the core's answer of what to hand over, for a record
	// Check made; nil for a record read back (ParseRecord).
	Handoff *Handoff
}

// Recheck is the request's recheck, and a storm's record's storm: the
// list_changed notifications since the record before that the check covers,
// and how long the rate limit held it back after the first of them.
type Recheck struct {
	Coalesced  int   `json:"coalesced"`
	HeldBackMS int64 `json:"held_back_ms"`
}

// Would is what enforce would have done, on an observe-mode record.
type Would struct {
	Effect string            `json:"effect"`
	Tools  map[string]string `json:"tools"`
}

// Finding is one entry of the record's observations.
type Finding struct {
	Observation string `json:"observation"`
	Tool        string `json:"tool"`
	// Item is an item-scope observation's prompt name, resource uri or
	// resource template uriTemplate (Tool is then "").
	Item     string          `json:"item"`
	Part     string          `json:"part"`
	Effect   string          `json:"effect"`
	Would    string          `json:"would"`
	Detail   json.RawMessage `json:"detail"`
	Override bool            `json:"override"`
}

// ObservedSummary is the record's observed member.
type ObservedSummary struct {
	ToolsSHA256 string `json:"tools_sha256"`
	Count       *int   `json:"count"`
	Pages       int    `json:"pages"`
	Truncated   bool   `json:"truncated"`
	Truncation  string `json:"truncation"`
	Failure     string `json:"failure"`
	Malformed   bool   `json:"malformed"`
}

// Complete reports whether the whole tool list was read and parsed: the
// only observation a lockfile may be made from.
func (o ObservedSummary) Complete() bool {
	return o.Failure == "" && !o.Truncated && !o.Malformed
}

// ParseRecord reads a record the core wrote. It does not verify
// record_sha256 (the op verify_record does).
func ParseRecord(raw []byte) (Record, error) {
	var r struct {
		Kind         string                       `json:"kind"`
		SHA256       string                       `json:"record_sha256"`
		Prev         string                       `json:"prev_record_sha256"`
		Mode         string                       `json:"mode"`
		Effect       string                       `json:"effect"`
		Tools        map[string]string            `json:"tools"`
		Features     map[string]map[string]string `json:"features"`
		Would        *Would                       `json:"would"`
		Observations []Finding                    `json:"observations"`
		Observed     ObservedSummary              `json:"observed"`
		Storm        *Recheck                     `json:"storm"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return Record{}, fmt.Errorf("reading a continuity record: %w", err)
	}
	if r.Kind != "crawlcheck-continuity-record" || r.SHA256 == "" || r.Effect == "" {
		return Record{}, errors.New("reading a continuity record: not a crawlcheck-continuity-record")
	}
	return Record{
		Raw: bytes.Clone(raw), RecordSHA256: r.SHA256, PrevRecordSHA256: r.Prev, Mode: r.Mode, Effect: r.Effect, Tools: r.Tools,
		Features: r.Features, Would: r.Would, Observations: r.Observations, Observed: r.Observed, Storm: r.Storm,
	}, nil
}
