package preflight

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/crawlcheck/verifier/internal/corecall"
	"github.com/crawlcheck/verifier/internal/coreops"
)

// Scan is the core's approval scan of a tool list (docs/scan.md): what
// make_lock writes as scan_at_approval, for showing to the person about to
// approve. Raw is the object as the core answered it.
type Scan struct {
	Severity    string          `json:"severity"` // none, low, medium or high: the highest finding
	Kinds       map[string]int  `json:"kinds"`    // kind → findings, counting any past the listed ones
	Findings    []ScanFinding   `json:"findings"`
	RulesSHA256 string          `json:"rules_sha256"`
	Raw         json.RawMessage `json:"-"`
}

// ScanFinding is one match of one rule. Every string in it may come from the
// server: show it through textsafe.Escape.
type ScanFinding struct {
	Tool     string `json:"tool"`
	Part     string `json:"part"` // JSON Pointer into the tool: /name, /description, /inputSchema/…, /annotations/…
	Key      bool   `json:"key"`  // the text is the member name at Part
	Offset   int    `json:"offset"`
	Length   int    `json:"length"` // bytes of UTF-8
	Kind     string `json:"kind"`
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Span     string `json:"span"`   // the matched text, cut to the rules' max_span
	Hidden   string `json:"hidden"` // the ASCII that tag characters spell, if any
}

// Listed is how many findings the scan counted; more than len(Findings)
// when the list was cut (the most severe are kept).
func (s Scan) Listed() int {
	n := 0
	for _, c := range s.Kinds {
		n += c
	}
	return n
}

// AtLeast reports whether the scan's severity is at least sev, in the
// order of the core's scan rules. A severity they do not name ranks as the
// strongest on the scan's side, so an unknown one fails a --fail-on.
func (s Scan) AtLeast(sev string) bool {
	order := ScanSeverities()
	got, min := slices.Index(order, s.Severity), slices.Index(order, sev)
	return got < 0 || got >= min
}

// ScanSeverities are the severities of the core's scan rules (the rules
// op's scan_rules.severities), weakest first, read once; nil when the core
// cannot answer (unreachable with a working core).
var ScanSeverities = sync.OnceValue(func() []string {
	var rules struct {
		ScanRules struct {
			Severities []string `json:"severities"`
		} `json:"scan_rules"`
	}
	if (&coreops.RulesRequest{}).Decode(&rules) != nil {
		return nil
	}
	return rules.ScanRules.Severities
})

// Modes are the modes of the core's rule table (the rules op's
// rules.modes), sorted, read once; nil when the core cannot answer.
var Modes = sync.OnceValue(func() []string {
	var rules struct {
		Rules struct {
			Modes map[string]string `json:"modes"`
		} `json:"rules"`
	}
	if (&coreops.RulesRequest{}).Decode(&rules) != nil {
		return nil
	}
	out := make([]string, 0, len(rules.Rules.Modes))
	for m := range rules.Rules.Modes {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
})

// ScanTools scans the tools of an observation; names, when not nil, keeps
// the findings of those tools (the whole list still counts for references
// between tools). Without names it is what make_lock pins as
// scan_at_approval: the server's instructions too, when the handshake gave
// them (issue 34, item 6: crawlcheck scan judged the tools alone, and
// passed a server whose lockfile then recorded medium). A list not read
// whole is refused: a scan of part of a list would call the rest clean.
func ScanTools(obs Observation, names []string) (Scan, error) {
	if err := obs.FailureError(); err != nil {
		return Scan{}, err
	}
	req := coreops.ScanRequest{Names: names}
	req.Pages, req.PageCapReached = pagesOf(obs)
	if obs.HandshakeResult != nil && names == nil {
		req.HandshakeResult = corecall.Page(obs.HandshakeResult)
	}
	return scanOp(req)
}

// ScanInstructions scans the server's instructions as the handshake of obs
// gave them (the core reads them of the handshake's result): what a person
// approving an instructions change is shown. No tool's findings are kept.
func ScanInstructions(obs Observation) (Scan, error) {
	if obs.HandshakeResult == nil {
		return Scan{}, errors.New("the observation has no handshake result to read the instructions of")
	}
	req := coreops.ScanRequest{Names: []string{}, HandshakeResult: corecall.Page(obs.HandshakeResult)}
	req.Pages, req.PageCapReached = pagesOf(obs)
	return scanOp(req)
}

// PinnedScan is the approval scan a lockfile MakeLock made pins
// (scan_at_approval), Raw as the core wrote it into the lockfile without
// the indentation (the scan op's answer, byte for byte); false when the
// lockfile has none (an agentgate.lock). A host that has just made a
// lockfile shows this rather than asking for the scan again: it is what was
// pinned, the handshake's instructions included, and a second scan parses
// the whole list again (a second tree of a 10 MB list was most of
// crawlcheck lock's peak memory, docs/benchmarks.md). The lockfile is the
// core's own bytes, so it is split in one pass (membersOfValid), not
// decoded: encoding/json scanned a 1,000-tool lockfile twice for this one
// member, a tenth of crawlcheck lock --server. The member itself is read
// strictly.
func PinnedScan(lock []byte) (Scan, bool) {
	doc, err := membersOfValid(lock)
	pinned := doc["scan_at_approval"]
	if err != nil || len(pinned) == 0 || pinned[0] != '{' {
		return Scan{}, false
	}
	var raw bytes.Buffer
	if json.Compact(&raw, pinned) != nil {
		return Scan{}, false
	}
	s := Scan{Raw: raw.Bytes()}
	if json.Unmarshal(pinned, &s) != nil {
		return Scan{}, false
	}
	return s, true
}

// ScanList scans a tool list document (a JSON array of tools, or a
// tools/list result or response).
func ScanList(list []byte) (Scan, error) {
	return scanOp(coreops.ScanRequest{Pages: []any{string(list)}})
}

func scanOp(req coreops.ScanRequest) (Scan, error) {
	raw, err := req.Call()
	if err != nil {
		return Scan{}, err
	}
	s := Scan{Raw: raw}
	if err := json.Unmarshal(raw, &s); err != nil {
		return Scan{}, fmt.Errorf("scan: decoding the result: %w", err)
	}
	return s, nil
}
